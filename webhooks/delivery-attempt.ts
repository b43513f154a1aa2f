import type { WebhookOutboxDoc } from '../store/webhook-outbox';
import { deliverWebhook, type WebhookDeps, type WebhookType } from './deliver';
import type { WebhookAttemptResult, WebhookTarget } from './delivery-contracts';
import type { OutboxDeps, WebhookGate } from './outbox';
import { recordWebhookAttempt } from './delivery-metrics';

/**
 * One delivery attempt of a stored event: a try per URL still owed (each recorded in
 * `webhook_deliveries`), then the event settled (delivered, or nothing to send it to) or its
 * failure counted. Made by the dispatcher for an event's first attempt and by the
 * `webhookDelivery` workflow's activity for the later ones. The event is read as it is now,
 * so a webhook turned off or a URL changed meanwhile is honoured, and so is the connection's
 * override: each attempt, and a replay, sends to the override the connection has then.
 */
type AttemptDeps = Omit<OutboxDeps, 'startDelivery'> & WebhookDeps;

export async function attemptWebhookEvent(
  deps: AttemptDeps,
  event: string | WebhookOutboxDoc,
  attempt: number,
  targets?: WebhookTarget[],
): Promise<WebhookAttemptResult> {
  const result = await attemptOnce(deps, event, attempt, targets);
  recordWebhookAttempt(result.outcome, attempt);
  return result;
}

async function attemptOnce(deps: AttemptDeps, event: string | WebhookOutboxDoc, attempt: number, targets?: WebhookTarget[]): Promise<WebhookAttemptResult> {
  const outbox = deps.stores.webhookOutbox;
  const doc = typeof event === 'string' ? await outbox.get(event) : event;
  if (!doc) return { outcome: 'settled', reason: 'event gone' };
  if (doc.status !== 'pending') return { outcome: 'settled', reason: `already ${doc.status}` };
  const gate = doc.gate as WebhookGate | null;
  const override = await currentOverride(deps, doc);
  if (override === RETIRED) {
    const reason = 'not sent: connection_deleted';
    await outbox.settle(doc._id, { status: 'failed', error: reason }, new Date(), doc);
    return { outcome: 'settled', reason };
  }
  const summary = await deliverWebhook(deps, {
    id: doc._id,
    environment: doc.environment,
    type: doc.type as WebhookType,
    payload: doc.payload,
    enabled: gate ? (env) => env[gate] : undefined,
    urlOverride: override,
    attempt,
    ...(targets ? { targets } : {}),
  });
  if (summary.delivered) {
    await outbox.settle(doc._id, { status: 'delivered' }, new Date(), doc);
    return { outcome: 'delivered' };
  }
  if (summary.skipped && summary.skipped !== 'failed') {
    const reason = `not sent: ${summary.skipped}`;
    await outbox.settle(doc._id, { status: 'failed', error: reason }, new Date(), doc);
    return { outcome: 'settled', reason };
  }
  const failed = summary.targets.filter((t) => !t.delivered);
  const error = summary.skipped === 'failed' ? 'could not prepare the delivery' : failed.map((t) => `${t.target}: ${t.error ?? 'no response'}`).join(', ');
  await outbox.noteFailedAttempt(doc._id, error);
  // A failure before any URL was tried leaves the same URLs owed as before.
  return summary.skipped === 'failed' ? { outcome: 'failed', error } : { outcome: 'failed', error, pendingTargets: failed.map((t) => t.target) };
}

const RETIRED = Symbol('retired override');

/**
 * Where the app wants the connection's events now: its current override (null: the
 * environment's URLs). A connection deleted since leaves its override retired: an event
 * queued for that URL goes nowhere, not to a URL the app may have handed to someone else.
 * Events without a connection (and those stored by earlier versions) keep the override they
 * were queued with.
 */
async function currentOverride(deps: AttemptDeps, doc: WebhookOutboxDoc): Promise<string | null | undefined | typeof RETIRED> {
  if (!doc.connection_key) return doc.url_override;
  const connection = await deps.stores.connections.find({
    environment: doc.environment,
    providerConfigKey: doc.connection_key.provider_config_key,
    connectionId: doc.connection_key.connection_id,
  });
  if (connection) return connection.webhook_url_override ?? null;
  return doc.url_override ? RETIRED : null;
}
