import type { ConnectionDoc } from '../store/connections';

/**
 * Every ID Weft gives a workflow or schedule it starts, built here only: `<prefix>-<kind>`
 * (the prefix is WEFT_TEMPORAL_ID_PREFIX) then the parts that make it unique, each
 * URI-encoded and joined by `:`, so an ID reads in the Temporal UI and one part can never
 * run into the next. An ID that stays the same for the same parts is what keeps two runs of
 * one sync from overlapping.
 */
function idOf(parts: string[]): string {
  return parts.map(encodeURIComponent).join(':');
}

/** A sync's runs: one ID per (environment, integration, connection, sync, variant), so runs never overlap. */
export function syncWorkflowId(
  prefix: string,
  environment: string,
  providerConfigKey: string,
  connectionId: string,
  syncName: string,
  variant: string,
): string {
  return idOf([`${prefix}-sync`, environment, providerConfigKey, connectionId, syncName, variant]);
}

/** syncWorkflowId of a connection's sync. */
export function connectionSyncWorkflowId(prefix: string, connection: ConnectionDoc, sel: { name: string; variant: string }): string {
  return syncWorkflowId(prefix, connection.environment, connection.provider_config_key, connection.connection_id, sel.name, sel.variant);
}

/** What every sync run's ID of one integration starts with (for a visibility query's STARTS_WITH). */
export function integrationSyncWorkflowIdPrefix(prefix: string, environment: string, providerConfigKey: string): string {
  return `${idOf([`${prefix}-sync`, environment, providerConfigKey])}:`;
}

/** The workflow a sync's schedule starts on each fire (Temporal appends the fire time); it runs the sync under syncWorkflowId. */
export function scheduledSyncWorkflowId(prefix: string, syncWorkflowId: string): string {
  return `${prefix}-scheduled:${syncWorkflowId}`;
}

/** A sync's schedule: stable per (environment, integration, connection, sync, variant), like the sync's run ID. */
export function syncScheduleId(
  prefix: string,
  environment: string,
  providerConfigKey: string,
  connectionId: string,
  syncName: string,
  variant: string,
): string {
  return idOf([`${prefix}-schedule`, environment, providerConfigKey, connectionId, syncName, variant]);
}

/** What every sync schedule's ID starts with: of one integration, or (no integration given) of this deployment. */
export function syncScheduleIdPrefix(prefix: string, scope?: { environment: string; providerConfigKey: string }): string {
  return `${idOf([`${prefix}-schedule`, ...(scope ? [scope.environment, scope.providerConfigKey] : [])])}:`;
}

/** A background operation over every connection of an integration: one per operation, found in the UI by integration. */
export function syncFanOutWorkflowId(prefix: string, environment: string, providerConfigKey: string, operationId: string): string {
  return idOf([`${prefix}-sync-operation`, environment, providerConfigKey, operationId]);
}

/** An action call; the public id is the last part, scoped by environment. */
export function actionWorkflowId(prefix: string, environment: string, id: string): string {
  return idOf([`${prefix}-action`, environment, id]);
}

/** The workflow that keeps a connection's webhook subscriptions at its provider: one per connection. */
export function connectionSubscriptionsWorkflowId(
  prefix: string,
  connection: Pick<ConnectionDoc, 'environment' | 'provider_config_key' | 'connection_id'>,
): string {
  return idOf([`${prefix}-subscriptions`, connection.environment, connection.provider_config_key, connection.connection_id]);
}
