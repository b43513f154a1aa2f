import { RateLimitedError } from '../errors';

/**
 * What a shared budget needs of its storage: a log of recent requests per provider account
 * that several processes can claim slots in (store/rate-budgets.ts is the MongoDB one).
 */
export interface BudgetStore {
  /** Not acquired: `waitMs` is when the slot frees, as far as the store can tell (nothing frees earlier). */
  tryAcquire(key: string, limit: number, windowMs: number): Promise<{ acquired: true; slotId: string } | { acquired: false; waitMs: number }>;
  markCompleted(slotId: string): Promise<void>;
  /** Fills the window until `until`: the provider locked the account out. */
  blockUntil(key: string, limit: number, windowMs: number, until: Date): Promise<void>;
}

export interface BudgetTicket {
  waitedMs: number;
  release(): Promise<void>;
}

export interface RequestBudgetGate {
  acquire(): Promise<BudgetTicket>;
  /** The provider locked us out: hold the whole budget for this long. */
  blockFor(ms: number): Promise<void>;
}

/**
 * The requests of one process waiting for one account's budget, in line: only the first asks
 * the store, so a freed slot costs one read per process, not one per waiting request.
 */
interface Lane {
  /** Settles when everyone who joined so far has left the line. */
  tail: Promise<void>;
  /** Requests in line, the one asking included. */
  waiting: number;
  /** When the slot the first in line waits for frees (epoch ms), as the store last said. */
  freeAt: number;
}

const lanes = new WeakMap<BudgetStore, Map<string, Lane>>();

function laneOf(store: BudgetStore, key: string): Lane {
  let byKey = lanes.get(store);
  if (!byKey) {
    byKey = new Map();
    lanes.set(store, byKey);
  }
  let lane = byKey.get(key);
  if (!lane) {
    lane = { tail: Promise.resolve(), waiting: 0, freeAt: 0 };
    byKey.set(key, lane);
  }
  return lane;
}

function dropLaneIfIdle(store: BudgetStore, key: string, lane: Lane): void {
  if (lane.waiting === 0) lanes.get(store)?.delete(key);
}

/**
 * A proactive budget (e.g. Luma's 300 requests per sliding minute per key) shared through
 * MongoDB by every run and worker that uses the same provider account. The first request
 * in this process's line sleeps until the time the store says its slot frees (a timer, no
 * reads meanwhile) and claims it; the others wait for their turn. A wait that would pass
 * `maxInlineWaitMs` throws RateLimitedError instead, so the activity ends and Temporal
 * retries it after a durable timer (or the API answers 429 with Retry-After).
 */
export function createSharedRequestBudget(opts: {
  store: BudgetStore;
  key: string;
  requests: number;
  windowMs: number;
  maxInlineWaitMs: number;
  sleep(ms: number): Promise<void>;
}): RequestBudgetGate {
  // A little slack on top of the window absorbs clock and latency jitter between our
  // count and the provider's.
  const windowMs = opts.windowMs + Math.max(50, Math.round(opts.windowMs * 0.01));
  /** Time per request at the budget's pace: how a place in line turns into a wait. */
  const spacingMs = windowMs / opts.requests;
  const busy = (waitMs: number) => new RateLimitedError(waitMs, 'The shared request budget of this provider account is used up');
  return {
    async acquire() {
      const started = Date.now();
      const lane = laneOf(opts.store, opts.key);
      const ahead = lane.tail;
      let leave!: () => void;
      const left = new Promise<void>((resolve) => (leave = resolve));
      lane.tail = ahead.then(() => left);
      lane.waiting += 1;
      try {
        if (!(await turnWithin(ahead, opts.maxInlineWaitMs))) {
          // Still in line when the inline wait is up: come back when the line ahead should have gone.
          throw busy(Math.max(lane.freeAt - Date.now(), 0) + lane.waiting * spacingMs);
        }
        // The time in line is a wait for the budget only if the budget was found used up
        // meanwhile; behind requests that claimed at once, it is the claims' own time.
        let budgetWaitMs = lane.freeAt > started ? Date.now() - started : 0;
        for (;;) {
          const waitedMs = Date.now() - started;
          // What the store said last is still true: no read until then.
          const known = lane.freeAt - Date.now();
          if (known > 0) {
            if (waitedMs + known > opts.maxInlineWaitMs) throw busy(known);
            await opts.sleep(known);
            budgetWaitMs += known;
          }
          const grant = await opts.store.tryAcquire(opts.key, opts.requests, windowMs);
          if (grant.acquired) {
            // What the request log calls its rate-limit wait: time held back by the budget, not the claim's round trip.
            return { waitedMs: budgetWaitMs, release: () => opts.store.markCompleted(grant.slotId) };
          }
          lane.freeAt = Date.now() + grant.waitMs;
          if (Date.now() - started + grant.waitMs > opts.maxInlineWaitMs) throw busy(grant.waitMs);
        }
      } finally {
        lane.waiting -= 1;
        leave();
        dropLaneIfIdle(opts.store, opts.key, lane);
      }
    },
    async blockFor(ms: number) {
      await opts.store.blockUntil(opts.key, opts.requests, windowMs, new Date(Date.now() + ms));
    },
  };
}

/** Whether `turn` settled within `ms` (a timer, cleared as soon as it does). */
async function turnWithin(turn: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([turn.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
