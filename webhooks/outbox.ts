import type { Stores } from '../store/db';
import type { EnvironmentDoc } from '../store/environments';
import type { WebhookOutboxDoc } from '../store/webhook-outbox';
import { deliverWebhook, newWebhookId, type DeliverySummary, type WebhookDeps, type WebhookType } from './deliver';
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
 * workflow once Temporal answers. Without a starter (`startDelivery`), the process delivers
 * the event itself in rounds, and the sweeper retries them: the path before durable delivery.
 */
export interface OutboxDeps extends WebhookDeps {
  stores: WebhookDeps['stores'] & Pick<Stores, 'webhookOutbox'>;
  /** Starts the event's delivery workflow (webhooks/delivery-starter.ts); without it, delivery is in-process. */
  startDelivery?: WebhookDeliveryStarter;
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
}

export interface QueueResult {
  /** The webhook-id, when the event was queued. */
  id: string | null;
  /** Why nothing was queued: the environment sends nothing of this kind. */
  skipped?: 'no_webhook_url' | 'disabled' | 'unknown_environment';
  /** Settles when the first round is over, or the workflow started (delivered, or left for the sweeper); never rejects. */
  firstRound: Promise<void>;
}

/** A round makes a few quick tries per URL of at most ~10 s each; the lease outlasts it. */
const DELIVERY_LEASE_MS = 2 * 60_000;
/** Rounds go on this long after the event was queued (api.md: "at least 24 hours"). */
const RETRY_WINDOW_MS = 25 * 60 * 60_000;
const FIRST_RETRY_DELAY_MS = 30_000;
const MAX_RETRY_DELAY_MS = 60 * 60_000;
/** How long the sweeper leaves an event with its workflow: past the workflow's whole schedule (~28-31 h). */
const WORKFLOW_HOLD_MS = 48 * 60 * 60_000;
/** When the sweeper tries again to start a workflow that could not be started. */
const START_RETRY_MS = 15_000;

/**
 * Records the event and sends it in the background. Resolves once the event is stored (one
 * read; its keys, then the event: two writes), not when it is delivered. Throws only if the
 * event could not be stored (e.g. the database is down), which the caller's request then reports.
 */
export async function queueWebhook(deps: OutboxDeps, event: QueuedEvent): Promise<QueueResult> {
  const settled = Promise.resolve();
  // Settings are read now to keep the outbox free of events nobody will receive; they are
  // read again at delivery, so turning webhooks off later still stops them.
  const env = await deps.stores.environments.get(event.environment);
  if (!env) return { id: null, skipped: 'unknown_environment', firstRound: settled };
  if (event.gate && !env[event.gate]) return { id: null, skipped: 'disabled', firstRound: settled };
  if (!event.urlOverride && !env.webhook_url && !env.secondary_webhook_url) return { id: null, skipped: 'no_webhook_url', firstRound: settled };

  const now = new Date();
  const doc: WebhookOutboxDoc = {
    _id: newWebhookId(),
    environment: event.environment,
    type: event.type,
    payload: event.payload,
    gate: event.gate,
    created_at: now,
    status: 'pending',
    rounds: 0,
    next_attempt_at: now,
    lease_until: new Date(now.getTime() + DELIVERY_LEASE_MS),
    last_error: null,
    ...(event.urlOverride ? { url_override: event.urlOverride } : {}),
  };
  await deps.stores.webhookOutbox.add(doc);
  return { id: doc._id, firstRound: deps.startDelivery ? handOver(deps, deps.startDelivery, doc) : deliverRound(deps, doc) };
}

/**
 * Starts the event's workflow and leaves the event to it. Never throws: if Temporal cannot be
 * reached, the event's lease runs out and the sweeper tries again.
 */
async function handOver(deps: OutboxDeps, start: WebhookDeliveryStarter, doc: Pick<WebhookOutboxDoc, '_id' | 'type' | 'environment'>): Promise<void> {
  const log = deps.logger.child({ webhook_id: doc._id, webhook_type: doc.type, environment: doc.environment });
  try {
    const started = await start(doc._id);
    await deps.stores.webhookOutbox.holdUntil(doc._id, new Date(Date.now() + WORKFLOW_HOLD_MS));
    log.debug({ started }, 'webhook handed to its delivery workflow');
  } catch (err) {
    log.warn({ err: (err as Error)?.message }, 'could not start the webhook delivery workflow; the sweeper will try again');
    // Soon, not after a whole lease: the event is only waiting for Temporal to answer.
    await deps.stores.webhookOutbox.holdUntil(doc._id, new Date(Date.now() + START_RETRY_MS)).catch(() => undefined);
  }
}

/**
 * One round for an event this process holds: deliver, then settle it (delivered or failed) or
 * schedule the next round. Never throws; if even the bookkeeping fails, the lease runs out
 * and the sweeper takes the event again.
 */
async function deliverRound(deps: OutboxDeps, doc: WebhookOutboxDoc, now: () => number = Date.now): Promise<void> {
  const log = deps.logger.child({ webhook_id: doc._id, webhook_type: doc.type, environment: doc.environment, round: doc.rounds + 1 });
  try {
    const gate = doc.gate as WebhookGate | null;
    const summary = await deliverWebhook(deps, {
      id: doc._id,
      environment: doc.environment,
      type: doc.type as WebhookType,
      payload: doc.payload,
      enabled: gate ? (env) => env[gate] : undefined,
      urlOverride: doc.url_override,
    });
    const outcome = outcomeOf(summary);
    if (outcome.done) {
      // The event stays, with its status, for the events API and replays.
      await deps.stores.webhookOutbox.settle(doc._id, outcome.error ? { status: 'failed', error: outcome.error } : { status: 'delivered' });
      if (outcome.error && !outcome.skipped) log.error({ error: outcome.error }, 'webhook dropped: the receiver refused it');
      return;
    }
    const at = nextRoundAt(doc, now());
    if (at === null) {
      await deps.stores.webhookOutbox.settle(doc._id, { status: 'failed', error: outcome.error });
      log.error({ error: outcome.error, rounds: doc.rounds + 1 }, 'webhook dropped: still undelivered after the retry window');
      return;
    }
    await deps.stores.webhookOutbox.retryAt(doc._id, at, outcome.error);
    log.warn({ error: outcome.error, next_attempt_at: at.toISOString() }, 'webhook round failed; will retry');
  } catch (err) {
    log.warn({ err: (err as Error)?.message }, 'webhook round could not be settled; the sweeper will take it again');
  }
}

function outcomeOf(summary: DeliverySummary): { done: true; error?: string; skipped?: boolean } | { done: false; error: string } {
  if (summary.delivered) return { done: true };
  // Nothing to deliver (any more): no URL, turned off, environment gone. Not sent, so not delivered.
  if (summary.skipped && summary.skipped !== 'failed') return { done: true, error: `not sent: ${summary.skipped}`, skipped: true };
  if (summary.skipped === 'failed') return { done: false, error: 'could not prepare the delivery' };
  const failed = summary.targets.filter((t) => !t.delivered);
  const describe = failed.map((t) => `${t.target}: ${t.status === undefined ? 'no response' : `HTTP ${t.status}`}`).join(', ');
  // A 4xx or an egress refusal will not change by trying again.
  if (failed.every((t) => t.retryable === false)) return { done: true, error: describe };
  return { done: false, error: describe };
}

/** Exponential from 30 s, capped at an hour, ±20 % jitter so a recovering app is not hit by every event at once. */
function nextRoundAt(doc: Pick<WebhookOutboxDoc, 'created_at' | 'rounds'>, now: number, random: () => number = Math.random): Date | null {
  const base = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** doc.rounds);
  const at = now + base * (0.8 + 0.4 * random());
  return at - doc.created_at.getTime() > RETRY_WINDOW_MS ? null : new Date(at);
}

export interface WebhookSweeper {
  /** One pass now: every due event this process can claim gets a round. Resolves with their number when they are done. */
  sweep(): Promise<number>;
  /** No more passes. A round in flight finishes on its own (or, if the process exits, its lease runs out). */
  stop(): void;
}

/**
 * Delivers what is due: events whose workflow could not be started (Temporal was down), or
 * without a starter, retries of failed rounds; and events a crashed process left behind
 * (their lease ran out). An event held by a workflow comes back after WORKFLOW_HOLD_MS, and
 * its start then finds the workflow (running or done) and holds it again. Several processes may sweep at once; the claim on each event
 * (deleting its queue key, see WebhookOutboxStore.claim) lets exactly one of them take it.
 */
export function startWebhookSweeper(deps: OutboxDeps, opts: { intervalMs?: number; batch?: number } = {}): WebhookSweeper {
  const intervalMs = opts.intervalMs ?? 10_000;
  const batch = opts.batch ?? 20;
  let running: Promise<number> | null = null;

  const sweepOnce = async (): Promise<number> => {
    const now = new Date();
    const due = await deps.stores.webhookOutbox.due(now, batch);
    const claimed = (await Promise.all(due.map((event) => deps.stores.webhookOutbox.claim(event, now, DELIVERY_LEASE_MS)))).filter(
      (d): d is WebhookOutboxDoc => d !== null,
    );
    const start = deps.startDelivery;
    await Promise.all(claimed.map((doc) => (start ? handOver(deps, start, doc) : deliverRound(deps, doc))));
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
