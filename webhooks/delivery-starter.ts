import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WEBHOOK_DELIVERY_WORKFLOW, webhookDeliveryWorkflowId, type WebhookDeliveryInput } from './delivery-contracts';

/**
 * Hands a stored event to its delivery workflow (that of its latest replay, when it was
 * replayed: `replay` is the event's number). Resolves once the workflow exists (or has
 * already run); rejects when Temporal cannot be reached, and the event then waits in the
 * outbox for the dispatcher to try again.
 */
export type WebhookDeliveryStarter = (
  eventId: string,
  replay?: number,
  after?: Pick<WebhookDeliveryInput, 'fromAttempt' | 'targets'>,
) => Promise<'started' | 'existing'>;

export interface DeliveryStarterSettings {
  /** WEFT_TEMPORAL_ID_PREFIX */
  temporalIdPrefix: string;
  /** The queue the workflow and its activities run on (the sync workers'). */
  taskQueue: string;
}

/**
 * Starts `webhookDelivery` for an event at most once: a running workflow is the answer
 * (USE_EXISTING), and a closed one is never started again (REJECT_DUPLICATE), so the API and
 * any number of dispatchers may ask for the same event.
 */
export function temporalWebhookDelivery(client: Pick<Client, 'workflow'>, settings: DeliveryStarterSettings): WebhookDeliveryStarter {
  return async (eventId, replay, after) => {
    const input: WebhookDeliveryInput = { eventId, ...after };
    try {
      await client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW, {
        workflowId: webhookDeliveryWorkflowId(settings.temporalIdPrefix, eventId, replay),
        taskQueue: settings.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      return 'started';
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return 'existing';
      throw err;
    }
  };
}
