import { NotFoundError } from '../common/errors';
import type { ConnectionDoc } from '../store/connections';
import { connectionActionContext, type ActionActivityDeps } from './action-activities';

/**
 * A sync's onWebhook, run for one delivery and one connection in the worker's delivery
 * processor (control/provider-deliveries.ts): the integration code gets an action's `ctx`
 * (its saves go into the sync's records, committed at once, under `webhook:<delivery>`), and
 * the delivery's event and JSON body. What it throws leaves the delivery to be taken again;
 * doing it twice saves the same records again, which changes nothing.
 */
export function createSyncWebhookHandler(deps: ActionActivityDeps) {
  return async (connection: ConnectionDoc, syncName: string, delivery: { id: string; event: string; payload: unknown }): Promise<void> => {
    const sync = deps.registry.getSync(connection.provider, syncName);
    if (!sync?.onWebhook) throw new NotFoundError('unknown_sync', `Integration "${connection.provider}" has no sync "${syncName}" that acts on webhooks.`);
    const integration = await deps.stores.integrations.get(connection.environment, connection.provider_config_key);
    if (!integration) throw new NotFoundError('unknown_provider_config', `Integration "${connection.provider_config_key}" no longer exists.`);
    const ctx = connectionActionContext(deps, {
      environment: connection.environment,
      integration,
      connection,
      operation: `webhook:${syncName}`,
      runId: null,
      runIdPrefix: `webhook:${delivery.id}:${syncName}`,
      logFields: { sync: syncName, delivery: delivery.id },
    });
    await sync.onWebhook(ctx, { event: delivery.event, payload: delivery.payload });
  };
}
