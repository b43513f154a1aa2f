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
 * so a webhook turned off or a URL changed meanwhile is honoured.
 */
export async function attemptWebhookEvent(
  deps: Omit<OutboxDeps, 'startDelivery'> & WebhookDeps,
  event: string | WebhookOutboxDoc,
  attempt: number,
  targets?: WebhookTarget[],
): Promise<WebhookAttemptResult> {
  const result = await attemptOnce(deps, event, attempt, targets);
  recordWebhookAttempt(result.outcome, attempt);
  return result;
}

async function attemptOnce(
  deps: Omit<OutboxDeps, 'startDelivery'> & WebhookDeps,
  event: string | WebhookOutboxDoc,
  attempt: number,
  targets?: WebhookTarget[],
): Promise<WebhookAttemptResult> {
  const outbox = deps.stores.webhookOutbox;
  const doc = typeof event === 'string' ? await outbox.get(event) : event;
  if (!doc) return { outcome: 'settled', reason: 'event gone' };
  if (doc.status !== 'pending') return { outcome: 'settled', reason: `already ${doc.status}` };
  const gate = doc.gate as WebhookGate | null;
  const summary = await deliverWebhook(deps, {
    id: doc._id,
    environment: doc.environment,
    type: doc.type as WebhookType,
    payload: doc.payload,
    enabled: gate ? (env) => env[gate] : undefined,
    urlOverride: doc.url_override,
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
