import { temporalWebhookDelivery, type WebhookDeliveryStarter } from '../webhooks/delivery-starter';
import type { Core } from './core';

/**
 * How this process hands webhook events to their `webhookDelivery` workflows: on the core's
 * Temporal client, under WEFT_TEMPORAL_ID_PREFIX, on the sync task queue (the workers that
 * run every workflow also run the delivery activities).
 */
export function coreWebhookDelivery(core: Pick<Core, 'temporal' | 'config'>): WebhookDeliveryStarter {
  return temporalWebhookDelivery(core.temporal, { temporalIdPrefix: core.config.WEFT_TEMPORAL_ID_PREFIX, taskQueue: core.config.WEFT_SYNC_TASK_QUEUE });
}
