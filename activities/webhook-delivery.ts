import type { WebhookAttemptInput, WebhookAttemptResult, WebhookFailInput } from '../webhooks/delivery-contracts';
import { deliverWebhook, type WebhookType } from '../webhooks/deliver';
import type { OutboxDeps, WebhookGate } from '../webhooks/outbox';

/**
 * The activities of `webhookDelivery`: one attempt is one activity (the workflow owns the
 * schedule and never lets Temporal retry it), each try recorded in `webhook_deliveries` by
 * deliverWebhook (one try per URL). The outbox event is the source: its payload, gate and URL override are
 * read per attempt, so a webhook turned off meanwhile stops.
 */
export function createWebhookDeliveryActivities(deps: Omit<OutboxDeps, 'startDelivery'>) {
  const outbox = deps.stores.webhookOutbox;

  return {
    async attemptWebhookDelivery(input: WebhookAttemptInput): Promise<WebhookAttemptResult> {
      const doc = await outbox.get(input.eventId);
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
        attempt: input.attempt,
        ...(input.targets ? { targets: input.targets } : {}),
      });
      if (summary.delivered) {
        await outbox.settle(doc._id, { status: 'delivered' });
        return { outcome: 'delivered' };
      }
      if (summary.skipped && summary.skipped !== 'failed') {
        const reason = `not sent: ${summary.skipped}`;
        await outbox.settle(doc._id, { status: 'failed', error: reason });
        return { outcome: 'settled', reason };
      }
      const failed = summary.targets.filter((t) => !t.delivered);
      const error = summary.skipped === 'failed' ? 'could not prepare the delivery' : failed.map((t) => `${t.target}: ${t.error ?? 'no response'}`).join(', ');
      await outbox.noteFailedAttempt(doc._id, error);
      // A failure before any URL was tried leaves the same URLs owed as before.
      return summary.skipped === 'failed' ? { outcome: 'failed', error } : { outcome: 'failed', error, pendingTargets: failed.map((t) => t.target) };
    },

    /** The schedule ran out: the event stays, marked failed, for the events API and a replay. */
    async failWebhookEvent(input: WebhookFailInput): Promise<void> {
      const doc = await outbox.get(input.eventId);
      if (doc?.status === 'pending') await outbox.settle(doc._id, { status: 'failed', error: input.error });
    },
  };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
