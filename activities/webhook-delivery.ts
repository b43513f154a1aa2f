import type { WebhookAttemptInput, WebhookAttemptResult, WebhookFailInput } from '../webhooks/delivery-contracts';
import { attemptWebhookEvent } from '../webhooks/delivery-attempt';
import type { OutboxDeps } from '../webhooks/outbox';

/**
 * The activities of `webhookDelivery`: one attempt is one activity (the workflow owns the
 * schedule and never lets Temporal retry it), made by attemptWebhookEvent from the event as
 * the outbox holds it now.
 */
export function createWebhookDeliveryActivities(deps: Omit<OutboxDeps, 'startDelivery'>) {
  const outbox = deps.stores.webhookOutbox;

  return {
    async attemptWebhookDelivery(input: WebhookAttemptInput): Promise<WebhookAttemptResult> {
      return attemptWebhookEvent(deps, input.eventId, input.attempt, input.targets);
    },

    /** The schedule ran out: the event stays, marked failed, for the events API and a replay. */
    async failWebhookEvent(input: WebhookFailInput): Promise<void> {
      const doc = await outbox.get(input.eventId);
      if (doc?.status === 'pending') await outbox.settle(doc._id, { status: 'failed', error: input.error });
    },
  };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
