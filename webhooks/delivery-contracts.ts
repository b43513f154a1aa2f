import type { TargetDelivery } from './deliver';

/**
 * What the `webhookDelivery` workflow and its activities exchange. Here, below both, so the
 * workflow names them as types and the starter (webhooks/delivery-starter.ts) without
 * importing workflow code.
 */

export type WebhookTarget = TargetDelivery['target'];

/** The workflow is started with the event's id: the outbox holds the event. */
export interface WebhookDeliveryInput {
  eventId: string;
  /**
   * The attempt to begin with (1-based; 1 when absent). The dispatcher makes an event's first
   * attempt itself and starts the workflow at 2 when it failed: the workflow then waits the
   * schedule's second step before trying again.
   */
  fromAttempt?: number;
  /** The URLs still owed a 2xx after the attempts made before the workflow (all when absent). */
  targets?: WebhookTarget[];
}

export interface WebhookAttemptInput {
  eventId: string;
  /** 1-based over the whole schedule; recorded with each try. */
  attempt: number;
  /** The URLs still owed a 2xx (all of the event's when absent), so a URL that took the event never gets it twice. */
  targets?: WebhookTarget[];
}

export type WebhookAttemptResult =
  | { outcome: 'delivered' }
  /** Nothing (more) to do: no URL, turned off, the environment or the event gone, or already settled. */
  | { outcome: 'settled'; reason: string }
  /** `pendingTargets`: the URLs that did not answer 2xx; absent when none was tried. */
  | { outcome: 'failed'; error: string; pendingTargets?: WebhookTarget[] };

export interface WebhookFailInput {
  eventId: string;
  error: string;
}

export interface WebhookDeliveryResult {
  outcome: 'delivered' | 'settled' | 'failed';
  attempts: number;
}

/** The workflow type's name, as the worker registers it (workflows/webhook-delivery.ts). */
export const WEBHOOK_DELIVERY_WORKFLOW = 'webhookDelivery';

/**
 * One workflow per event and delivery, whoever starts it: the event's id under the
 * deployment's prefix, and for replay n (n >= 1) `:replay-n` after it. A closed workflow's id
 * is never used again, so each replay needs an id of its own; the number is the event's
 * (store/webhook-outbox.ts `requeue`), so every process starting it names the same workflow.
 */
export function webhookDeliveryWorkflowId(prefix: string, eventId: string, replay?: number): string {
  const parts = [`${prefix}-webhook`, eventId, ...(replay ? [`replay-${replay}`] : [])];
  return parts.map(encodeURIComponent).join(':');
}
