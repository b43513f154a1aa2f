import type { WebhookOutboxDoc } from '../store/webhook-outbox';
import { attemptWebhookEvent } from './delivery-attempt';
import { handOverToWorkflow, type OutboxDeps } from './outbox';

/** One pass over the queue: claims due events and delivers them; resolves with the number of due events it found. */
export type DispatchPass = () => Promise<number>;

export interface WebhookDispatcher {
  /** Look at the queue now (an event was just stored by this process). */
  wake(): void;
  /** No more passes; resolves when the pass in progress has ended. */
  stop(): Promise<void>;
}

export interface DispatcherOptions {
  /** How often an idle dispatcher looks at the queue for events stored by other processes. */
  idleMs?: number;
  /** Events claimed per pass; a full pass is followed by the next at once. */
  batch?: number;
  /** Deliveries in flight at once. */
  concurrency?: number;
}

/** A claimed event is this process's for this long; past it (the process died), another dispatcher takes it. */
const CLAIM_LEASE_MS = 2 * 60_000;

/**
 * Takes due events from the outbox's queue and delivers them: the hot path of webhooks.
 *
 * An event's first attempt is made here, in batches, with no workflow at all: most events
 * are delivered by it, and a workflow per event (a start, two workflow tasks, an activity)
 * cost more CPU than everything else together, which capped delivery near 60 events/s on two
 * cores. An event whose first attempt failed gets its `webhookDelivery` workflow, started at
 * the schedule's second attempt with the URLs still owed; an event that already had attempts
 * (its workflow could not be started, or a hold ran out) is handed to its workflow as it is.
 *
 * Nothing is lost when a process dies: the event is stored before anyone tries it, and a
 * claim is a lease (CLAIM_LEASE_MS) after which another dispatcher takes the event again. The
 * app may then see an event twice, under the same `webhook-id`. Several processes may
 * dispatch at once: of two claims of one event, exactly one wins (WebhookOutboxStore.claim).
 */
/** What dispatching is made of: taking due events, and delivering one taken. */
function dispatchParts(deps: OutboxDeps) {
  const outbox = deps.stores.webhookOutbox;
  return {
    /** Claims up to `limit` due events; also says how many were due (some may be another process's by now). */
    async claimDue(limit: number): Promise<{ due: number; claimed: WebhookOutboxDoc[] }> {
      const now = new Date();
      const due = await outbox.due(now, limit);
      const claimed = await Promise.all(due.map((event) => outbox.claim(event, now, CLAIM_LEASE_MS)));
      return { due: due.length, claimed: claimed.filter((d): d is WebhookOutboxDoc => d !== null) };
    },
    /** Never throws: an event that could not be dealt with waits for its lease to run out and is taken again. */
    async deliver(doc: WebhookOutboxDoc): Promise<void> {
      try {
        if (doc.rounds > 0) {
          await handOverToWorkflow(deps, doc, { fromAttempt: doc.rounds + 1 });
          return;
        }
        const result = await attemptWebhookEvent(deps, doc, 1);
        if (result.outcome !== 'failed') return;
        await handOverToWorkflow(deps, doc, { fromAttempt: 2, ...(result.pendingTargets ? { targets: result.pendingTargets } : {}) });
      } catch (err) {
        deps.logger.warn({ err: (err as Error)?.message, webhook_id: doc._id }, 'webhook dispatch failed; the event is taken again after its lease');
      }
    },
  };
}

/** One pass: claims a batch of due events and delivers them all before resolving (tests, tools). */
export function webhookDispatchPass(deps: OutboxDeps, opts: Pick<DispatcherOptions, 'batch' | 'concurrency'> = {}): DispatchPass {
  const parts = dispatchParts(deps);
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  return async () => {
    const { due, claimed } = await parts.claimDue(opts.batch ?? DEFAULT_BATCH);
    const queue = [...claimed];
    await Promise.all(
      Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
        for (let doc = queue.shift(); doc; doc = queue.shift()) await parts.deliver(doc);
      }),
    );
    return due;
  };
}

const DEFAULT_BATCH = 100;
const DEFAULT_CONCURRENCY = 32;

/**
 * Dispatches until stopped, with at most `concurrency` deliveries in flight: a slow receiver
 * holds one slot, never the queue. Looks for more as soon as a slot is free and the last
 * look found a full batch; otherwise every `idleMs`, or at once when woken.
 */
export function startWebhookDispatcher(deps: OutboxDeps, opts: DispatcherOptions = {}): WebhookDispatcher {
  const idleMs = opts.idleMs ?? 250;
  const batch = opts.batch ?? DEFAULT_BATCH;
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  const parts = dispatchParts(deps);
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let wakeUp: (() => void) | null = null;
  let woken = false;

  const rest = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken || stopped) return resolve();
      const timer = setTimeout(() => {
        wakeUp = null;
        resolve();
      }, ms);
      wakeUp = () => {
        clearTimeout(timer);
        wakeUp = null;
        resolve();
      };
    });

  const loop = (async () => {
    while (!stopped) {
      woken = false;
      const free = concurrency - inFlight.size;
      let full = false;
      if (free > 0) {
        try {
          const { due, claimed } = await parts.claimDue(Math.min(batch, free));
          full = due >= Math.min(batch, free);
          for (const doc of claimed) {
            const delivery: Promise<void> = parts.deliver(doc).finally(() => {
              inFlight.delete(delivery);
              // A slot is free: look again now if there was more to take.
              if (full) wakeUp?.();
            });
            inFlight.add(delivery);
          }
        } catch (err) {
          deps.logger.warn({ err: (err as Error)?.message }, 'webhook dispatch pass failed; trying again');
        }
      }
      if (!full || inFlight.size >= concurrency) await rest(idleMs);
    }
    await Promise.all(inFlight);
  })();

  return {
    wake() {
      woken = true;
      wakeUp?.();
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
    },
  };
}
