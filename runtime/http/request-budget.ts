import { RateLimitedError } from '../errors';

/**
 * What a shared budget needs of its storage: a log of recent requests per provider account
 * that several processes can claim slots in (store/rate-budgets.ts is the MongoDB one).
 */
export interface BudgetStore {
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
 * A proactive budget (e.g. Luma's 300 requests per sliding minute per key) shared through
 * MongoDB by every run and worker that uses the same provider account. Short waits are
 * slept here; a longer one throws RateLimitedError so the activity ends and Temporal
 * retries it after a durable timer.
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
  return {
    async acquire() {
      let waitedMs = 0;
      for (;;) {
        const grant = await opts.store.tryAcquire(opts.key, opts.requests, windowMs);
        if (grant.acquired) {
          return { waitedMs, release: () => opts.store.markCompleted(grant.slotId) };
        }
        if (grant.waitMs > opts.maxInlineWaitMs) {
          throw new RateLimitedError(grant.waitMs, 'The shared request budget of this provider account is used up');
        }
        // Jitter spreads out workers that wake for the same freed slot.
        const wait = grant.waitMs + Math.floor(Math.random() * 20);
        await opts.sleep(wait);
        waitedMs += wait;
      }
    },
    async blockFor(ms: number) {
      await opts.store.blockUntil(opts.key, opts.requests, windowMs, new Date(Date.now() + ms));
    },
  };
}
