import type { Stores } from '../store/db';
import { eventIdFor } from '../webhooks/deliver';
import { queueWebhook, type OutboxDeps } from '../webhooks/outbox';
import type { ActionCompletionInput } from './action-contracts';

/** The `async_action` webhook body (the README's webhook section): where the ended call's output is read. */
interface AsyncActionWebhookPayload {
  from: 'weft';
  type: 'async_action';
  connectionId: string;
  providerConfigKey: string;
  payload: { id: string; statusUrl: string };
}

export interface ActionCompletionDeps extends OutboxDeps {
  stores: OutboxDeps['stores'] & Pick<Stores, 'connections'>;
}

/** The activity that tells the app an async action call ended, through the outbox (durable, retried for over a day). */
export function createActionCompletionActivities(deps: ActionCompletionDeps) {
  return {
    async announceActionCompletion(input: ActionCompletionInput): Promise<{ queued: boolean }> {
      const connection = await deps.stores.connections.getById(input.connection);
      const body: AsyncActionWebhookPayload = {
        from: 'weft',
        type: 'async_action',
        connectionId: input.connectionId,
        providerConfigKey: input.providerConfigKey,
        payload: { id: input.asyncCall.id, statusUrl: input.asyncCall.statusUrl },
      };
      const queued = await queueWebhook(deps, {
        environment: input.environment,
        type: 'async_action',
        payload: { ...body },
        gate: null,
        urlOverride: connection?.webhook_url_override ?? null,
        connection: { providerConfigKey: input.providerConfigKey, connectionId: input.connectionId },
        // One event per call: a retried activity finds it stored.
        id: eventIdFor('async_action', input.workflowId),
      });
      return { queued: queued.id !== null };
    },
  };
}

export type ActionCompletionActivities = ReturnType<typeof createActionCompletionActivities>;
