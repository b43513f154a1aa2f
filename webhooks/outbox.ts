import type { Stores } from '../store/db';
import type { EnvironmentDoc } from '../store/environments';
import type { WebhookOutboxDoc } from '../store/webhook-outbox';
import { newWebhookId, webhookTargets, type WebhookDeps, type WebhookType } from './deliver';
import type { WebhookDeliveryStarter } from './delivery-starter';

/**
 * Webhooks that nobody waits for. `queueWebhook` writes the event to the outbox (MongoDB,
 * keyed by its webhook-id), due at once; the caller (an OAuth callback, a connect page,
 * `POST /connections`, a sync run's last activity) goes on. A worker's dispatcher
 * (webhooks/dispatcher.ts) takes it from the queue and makes its first attempt; if that
 * fails, the event's `webhookDelivery` workflow (workflows/webhook-delivery.ts) retries it on
 * a schedule of over a day. Every try carries the same webhook-id, so the app can drop repeats.
 *
 * Why the outbox first: the event is written to the same store, in the same request, as the
 * connection it reports, so it exists whenever the connection does — also while Temporal is
 * down, which only delays the retries of events whose first attempt failed.
 */
export interface OutboxDeps extends WebhookDeps {
  /** `connections`: each attempt reads the connection's current override (webhooks/delivery-attempt.ts). */
  stores: WebhookDeps['stores'] & Pick<Stores, 'webhookOutbox' | 'connections'>;
  /** Starts the event's delivery workflow (webhooks/delivery-starter.ts). */
  startDelivery: WebhookDeliveryStarter;
  /** Tells this process's dispatcher, if it runs one, that an event is due now (else it finds it at its next look). */
  wakeDispatcher?: () => void;
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
  /** The connection the event is about: every attempt sends to its override as it is at that time. */
  connection?: { providerConfigKey: string; connectionId: string };
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
}

/** How long the dispatcher leaves an event with its workflow: past the workflow's whole schedule (~28-31 h). */
const WORKFLOW_HOLD_MS = 48 * 60 * 60_000;
/** When the dispatcher tries again to start a workflow that could not be started. */
const START_RETRY_MS = 15_000;

/**
 * Records the event, due at once, for a dispatcher to deliver. Resolves once the event is
 * stored (two reads; its keys, then the event: two writes), not when it is delivered. Throws
 * only if the event could not be stored (e.g. the database is down), which the caller's
 * request then reports.
 */
export async function queueWebhook(deps: OutboxDeps, event: QueuedEvent): Promise<QueueResult> {
  // Settings are read now to keep the outbox free of events nobody will receive; they are
  // read again at delivery, so turning webhooks off later still stops them.
  const env = await deps.stores.environments.get(event.environment);
  if (!env) return { id: null, skipped: 'unknown_environment' };
  if (event.gate && !env[event.gate]) return { id: null, skipped: 'disabled' };
  if (webhookTargets(env, event.type, event.urlOverride).length === 0) return { id: null, skipped: 'no_webhook_url' };

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
    lease_until: new Date(0),
    last_error: null,
    ...(event.urlOverride ? { url_override: event.urlOverride } : {}),
    ...(event.connection ? { connection_key: { provider_config_key: event.connection.providerConfigKey, connection_id: event.connection.connectionId } } : {}),
  };
  // Already stored (an activity retried after storing it): the same event, left as it is.
  await deps.stores.webhookOutbox.add(doc);
  deps.wakeDispatcher?.();
  return { id: doc._id };
}

/**
 * Starts the event's workflow and leaves the event to it (`after`: the attempts the
 * dispatcher made first). Never throws: if Temporal cannot be reached, the event comes back
 * to the dispatcher soon, which tries again.
 */
export async function handOverToWorkflow(
  deps: OutboxDeps,
  doc: Pick<WebhookOutboxDoc, '_id' | 'type' | 'environment' | 'replay'>,
  after?: Parameters<WebhookDeliveryStarter>[2],
): Promise<boolean> {
  const log = deps.logger.child({ webhook_id: doc._id, webhook_type: doc.type, environment: doc.environment, ...(doc.replay ? { replay: doc.replay } : {}) });
  try {
    // A replayed event's delivery is its latest replay's workflow (the earlier ones are closed).
    const started = await deps.startDelivery(doc._id, doc.replay, after);
    await deps.stores.webhookOutbox.holdUntil(doc._id, new Date(Date.now() + WORKFLOW_HOLD_MS));
    log.debug({ started }, 'webhook handed to its delivery workflow');
    return true;
  } catch (err) {
    log.warn({ err: (err as Error)?.message }, 'could not start the webhook delivery workflow; the dispatcher will try again');
    // Soon, not after a whole lease: the event is only waiting for Temporal to answer.
    await deps.stores.webhookOutbox.holdUntil(doc._id, new Date(Date.now() + START_RETRY_MS)).catch(() => undefined);
    return false;
  }
}

export type ReplayResult = { outcome: 'unknown' } | { outcome: 'pending' } | { outcome: 'replayed'; id: string; replay: number };

/**
 * Delivers a settled (delivered or failed) event again: same webhook-id and body, signed
 * afresh at each attempt, on the whole schedule (a first attempt by a dispatcher, the rest by
 * a workflow of the replay's own, `…:replay-<n>`). Resolves once the event is back in the
 * queue; an event that is unknown in `environment`, or still pending, is left as it is.
 */
export async function replayWebhook(deps: OutboxDeps, environment: string, id: string): Promise<ReplayResult> {
  const requeued = await deps.stores.webhookOutbox.requeue(environment, id);
  if (requeued.outcome !== 'requeued') return requeued;
  deps.wakeDispatcher?.();
  return { outcome: 'replayed', id, replay: requeued.event.replay };
}

/**
 * `replayWebhook` for many events: all are requeued (a few requests for the batch) before
 * this resolves, oldest first as given, each with its replay number; unknown, pending or
 * raced ones are left out.
 */
export async function replayWebhooks(deps: OutboxDeps, environment: string, ids: readonly string[]): Promise<Array<{ id: string; replay: number }>> {
  const requeued = await deps.stores.webhookOutbox.requeueMany(environment, ids);
  if (requeued.length) deps.wakeDispatcher?.();
  return requeued.map((doc) => ({ id: doc._id, replay: doc.replay }));
}
