import type { Stores } from '../store/db';
import type { EnvironmentDoc } from '../store/environments';
import type { WebhookOutboxDoc } from '../store/webhook-outbox';
import { newWebhookId, webhookTargets, type WebhookDeps, type WebhookType } from './deliver';
import type { WebhookDeliveryStarter } from './delivery-starter';

/**
 * Webhooks that nobody waits for. `queueWebhook` writes the event to the outbox (MongoDB,
 * keyed by its webhook-id), then hands it to its `webhookDelivery` workflow (one per event,
 * workflows/webhook-delivery.ts), which retries it on a schedule of over a day; the caller
 * (an OAuth callback, a connect page, `POST /connections`) answers at once. Every try carries
 * the same webhook-id, so the app can drop repeats.
 *
 * Why the outbox first: the event is written to the same store, in the same request, as the
 * connection it reports, so it exists whenever the connection does — also while Temporal is
 * down. Then the workflow cannot be started; the event stays due, and the sweeper starts its
 * workflow once Temporal answers.
 */
export interface OutboxDeps extends WebhookDeps {
  stores: WebhookDeps['stores'] & Pick<Stores, 'webhookOutbox'>;
  /** Starts the event's delivery workflow (webhooks/delivery-starter.ts). */
  startDelivery: WebhookDeliveryStarter;
}

/** A boolean environment setting that gates a type of webhook (`send_auth_webhooks`). */
export type WebhookGate = { [K in keyof EnvironmentDoc]: EnvironmentDoc[K] extends boolean ? K : never }[keyof EnvironmentDoc];

export interface QueuedEvent {
  environment: string;
  type: WebhookType;
  payload: Record<string, unknown>;
  gate: WebhookGate | null;
  /** The connection's `webhook_url_override`, if it has one: sent there instead of the environment's URLs. */
  urlOverride?: string | null;
  /**
   * The event's webhook-id when the caller derives it from what happened (see `eventIdFor`),
   * so a retried activity queues the same event once; a new random id when absent.
   */
  id?: string;
}

export interface QueueResult {
  /** The webhook-id, when the event was queued. */
  id: string | null;
  /** Why nothing was queued: the environment sends nothing of this kind. */
  skipped?: 'no_webhook_url' | 'disabled' | 'unknown_environment';
  /** Settles once the event's workflow is started, or left for the sweeper to start; never rejects. */
  handedOver: Promise<void>;
}

/** Held this long by the process starting the event's workflow; past it (the process died), the sweeper takes it. */
const START_LEASE_MS = 2 * 60_000;
/** How long the sweeper leaves an event with its workflow: past the workflow's whole schedule (~28-31 h). */
const WORKFLOW_HOLD_MS = 48 * 60 * 60_000;
/** When the sweeper tries again to start a workflow that could not be started. */
const START_RETRY_MS = 15_000;

/**
 * Records the event and starts its delivery in the background. Resolves once the event is
 * stored (one read; its keys, then the event: two writes), not when it is delivered. Throws only if the
 * event could not be stored (e.g. the database is down), which the caller's request then reports.
 */
export async function queueWebhook(deps: OutboxDeps, event: QueuedEvent): Promise<QueueResult> {
  const settled = Promise.resolve();
  // Settings are read now to keep the outbox free of events nobody will receive; they are
  // read again at delivery, so turning webhooks off later still stops them.
  const env = await deps.stores.environments.get(event.environment);
  if (!env) return { id: null, skipped: 'unknown_environment', handedOver: settled };
  if (event.gate && !env[event.gate]) return { id: null, skipped: 'disabled', handedOver: settled };
  if (webhookTargets(env, event.type, event.urlOverride).length === 0) return { id: null, skipped: 'no_webhook_url', handedOver: settled };

  const now = new Date();
  const doc: WebhookOutboxDoc = {
    _id: event.id ?? newWebhookId(),
    environment: event.environment,
    type: event.type,
    payload: event.payload,
    gate: event.gate,
    created_at: now,
    status: 'pending',
    rounds: 0,
    next_attempt_at: now,
    lease_until: new Date(now.getTime() + START_LEASE_MS),
    last_error: null,
    ...(event.urlOverride ? { url_override: event.urlOverride } : {}),
  };
  // Already stored (an activity retried after storing it): the same event, handed over again.
  await deps.stores.webhookOutbox.add(doc);
  return { id: doc._id, handedOver: handOver(deps, doc).then(() => undefined) };
}

/**
 * Starts the event's workflow and leaves the event to it. Never throws: if Temporal cannot be
 * reached, the event's lease runs out and the sweeper tries again.
 */
async function handOver(deps: OutboxDeps, doc: Pick<WebhookOutboxDoc, '_id' | 'type' | 'environment' | 'replay'>): Promise<boolean> {
  const log = deps.logger.child({ webhook_id: doc._id, webhook_type: doc.type, environment: doc.environment, ...(doc.replay ? { replay: doc.replay } : {}) });
  try {
    // A replayed event's delivery is its latest replay's workflow (the earlier ones are closed).
    const started = await deps.startDelivery(doc._id, doc.replay);
    await deps.stores.webhookOutbox.holdUntil(doc._id, new Date(Date.now() + WORKFLOW_HOLD_MS));
    log.debug({ started }, 'webhook handed to its delivery workflow');
    return true;
  } catch (err) {
    log.warn({ err: (err as Error)?.message }, 'could not start the webhook delivery workflow; the sweeper will try again');
    // Soon, not after a whole lease: the event is only waiting for Temporal to answer.
    await deps.stores.webhookOutbox.holdUntil(doc._id, new Date(Date.now() + START_RETRY_MS)).catch(() => undefined);
    return false;
  }
}

export type ReplayResult = { outcome: 'unknown' } | { outcome: 'pending' } | { outcome: 'replayed'; id: string; replay: number };

/**
 * Delivers a settled (delivered or failed) event again: same webhook-id and body, signed
 * afresh at each attempt, on the whole schedule, by a workflow of its own. Resolves once that
 * workflow is started, or left for the sweeper to start (Temporal down); an event that is
 * unknown in `environment`, or still pending, is left as it is.
 */
export async function replayWebhook(deps: OutboxDeps, environment: string, id: string): Promise<ReplayResult> {
  const requeued = await deps.stores.webhookOutbox.requeue(environment, id);
  if (requeued.outcome !== 'requeued') return requeued;
  await handOver(deps, requeued.event);
  return { outcome: 'replayed', id, replay: requeued.event.replay };
}

/** Workflows a bulk replay starts at once. */
const REPLAY_CONCURRENCY = 25;

export interface ReplayBatch {
  /** The events back in the queue, oldest first as given, each with its replay number; unknown, pending or raced ones are left out. */
  replayed: Array<{ id: string; replay: number }>;
  /** Settles once their workflows are started, or left for the sweeper; never rejects. */
  handedOver: Promise<void>;
}

/**
 * `replayWebhook` for many events: all are requeued before this resolves (a few requests
 * for the batch), their workflows are started afterwards, in the background, as `queueWebhook` does
 * (a start is a round trip to Temporal, the slow part of a batch of 1,000). Once a start
 * fails, the rest are left, due, to the sweeper rather than each waiting on Temporal again.
 */
export async function replayWebhooks(deps: OutboxDeps, environment: string, ids: readonly string[]): Promise<ReplayBatch> {
  const requeued = await deps.stores.webhookOutbox.requeueMany(environment, ids);
  const startAll = async (): Promise<void> => {
    for (let i = 0; i < requeued.length; i += REPLAY_CONCURRENCY) {
      const started = await Promise.all(requeued.slice(i, i + REPLAY_CONCURRENCY).map((doc) => handOver(deps, doc)));
      if (started.includes(false)) return;
    }
  };
  return {
    replayed: requeued.map((doc) => ({ id: doc._id, replay: doc.replay })),
    handedOver: startAll().catch((err: unknown) => deps.logger.warn({ err: (err as Error)?.message }, 'replayed webhooks left to the sweeper')),
  };
}

export interface WebhookSweeper {
  /** One pass now: every due event this process can claim is handed to its workflow. Resolves with their number. */
  sweep(): Promise<number>;
  /** No more passes. A start in flight finishes on its own (or, if the process exits, its lease runs out). */
  stop(): void;
}

/**
 * Starts the workflows of events that have none yet: stored while Temporal was down, or left
 * by a process that died before starting it (its lease ran out). An event held by its
 * workflow comes back after WORKFLOW_HOLD_MS; its start then finds the workflow (running or
 * done) and holds it again. Several processes may sweep at once; the claim on each event
 * (deleting its queue key, see WebhookOutboxStore.claim) lets exactly one of them take it.
 */
export function startWebhookSweeper(deps: OutboxDeps, opts: { intervalMs?: number; batch?: number } = {}): WebhookSweeper {
  const intervalMs = opts.intervalMs ?? 10_000;
  const batch = opts.batch ?? 20;
  let running: Promise<number> | null = null;

  const sweepOnce = async (): Promise<number> => {
    const now = new Date();
    const due = await deps.stores.webhookOutbox.due(now, batch);
    const claimed = (await Promise.all(due.map((event) => deps.stores.webhookOutbox.claim(event, now, START_LEASE_MS)))).filter(
      (d): d is WebhookOutboxDoc => d !== null,
    );
    await Promise.all(claimed.map((doc) => handOver(deps, doc)));
    return claimed.length;
  };
  const sweep = (): Promise<number> => {
    // One pass at a time per process; a slow receiver must not stack passes up.
    running ??= sweepOnce().finally(() => (running = null));
    return running;
  };
  const timer = setInterval(() => {
    sweep().catch((err: unknown) => deps.logger.warn({ err: (err as Error)?.message }, 'webhook sweep failed; trying again later'));
  }, intervalMs);
  timer.unref();

  return {
    sweep,
    stop: () => clearInterval(timer),
  };
}
