import { WorkflowNotFoundError } from '@temporalio/client';
import { BadRequestError, NotFoundError } from '../common/errors';
import type { ConnectionDoc } from '../store/connections';
import type { SyncDoc } from '../store/syncs';
import { BASE_VARIANT, type SyncRunInput } from '../activities/sync-contracts';
import { searchAttributesFor } from './search-attributes';
import type { ControlDeps, ControlSettings, TemporalIdDeps } from './deps';
import { connectionSyncWorkflowId, integrationSyncWorkflowIdPrefix } from './workflow-ids';
import { startWorkflow, type WorkflowName } from './workflow-start';
import { mapBounded } from '../common/map-bounded';

export interface SyncSelector {
  name: string;
  variant: string;
}

/** Resolves the requested syncs (names or {name, variant}; empty = all) against the integration. */
export function selectSyncs(
  deps: Pick<ControlDeps, 'registry'>,
  provider: string,
  requested: Array<string | { name: string; variant: string }>,
): SyncSelector[] {
  const known = deps.registry.get(provider)?.syncs ?? [];
  if (requested.length === 0) return known.map((s) => ({ name: s.name, variant: BASE_VARIANT }));
  return requested.map((r) => {
    const sel = typeof r === 'string' ? { name: r, variant: BASE_VARIANT } : r;
    if (!known.some((s) => s.name === sel.name)) {
      throw new BadRequestError(
        'unknown_sync',
        `Integration "${provider}" has no sync "${sel.name}" (available: ${known.map((s) => s.name).join(', ') || 'none'}).`,
      );
    }
    return sel;
  });
}

/**
 * A sync's state, or an unknown variant refused (404 unknown_sync_variant). A base sync
 * without state is a connection of an earlier version: null, its state is made when it is
 * next used.
 */
export async function syncStateOf(deps: Pick<ControlDeps, 'stores'>, connection: ConnectionDoc, sel: SyncSelector): Promise<SyncDoc | null> {
  const state = await deps.stores.syncs.get({ connection: connection._id, name: sel.name, variant: sel.variant });
  if (!state && sel.variant !== BASE_VARIANT) {
    throw new NotFoundError('unknown_sync_variant', `Connection "${connection.connection_id}" has no variant "${sel.variant}" of sync "${sel.name}".`);
  }
  return state;
}

/** Makes sure the connection has state for each of its integration's syncs. */
export async function ensureSyncStates(deps: Pick<ControlDeps, 'registry' | 'stores'>, connection: ConnectionDoc): Promise<SyncDoc[]> {
  const syncs = deps.registry.get(connection.provider)?.syncs ?? [];
  return Promise.all(
    syncs.map((s) =>
      deps.stores.syncs.ensure({
        environment: connection.environment,
        connection: connection._id,
        connection_id: connection.connection_id,
        provider_config_key: connection.provider_config_key,
        name: s.name,
        variant: BASE_VARIANT,
      }),
    ),
  );
}

/**
 * Starts a run now. If one is already running, that run is the answer (USE_EXISTING):
 * triggering twice never runs one sync twice at the same time.
 */
export async function startSyncRun(deps: ControlDeps, connection: ConnectionDoc, sel: SyncSelector): Promise<{ workflowId: string; runId: string }> {
  const workflowId = connectionSyncWorkflowId(deps.settings.temporalIdPrefix, connection, sel);
  const handle = await startWorkflow(deps.temporal, 'syncRun', {
    workflowId,
    taskQueue: deps.settings.syncTaskQueue,
    args: [syncRunInput(deps, connection, sel)],
    workflowIdConflictPolicy: 'USE_EXISTING',
    typedSearchAttributes: syncSearchAttributes(connection, sel),
  });
  return { workflowId, runId: handle.firstExecutionRunId };
}

/** What syncRun is given, whoever starts it (a trigger or the sync's schedule). */
export function syncRunInput(deps: { settings: Pick<ControlSettings, 'heartbeatTimeoutMs'> }, connection: ConnectionDoc, sel: SyncSelector): SyncRunInput {
  return {
    environment: connection.environment,
    connection: connection._id,
    connectionId: connection.connection_id,
    providerConfigKey: connection.provider_config_key,
    provider: connection.provider,
    syncName: sel.name,
    variant: sel.variant,
    heartbeatTimeoutMs: deps.settings.heartbeatTimeoutMs,
  };
}

export function syncSearchAttributes(connection: ConnectionDoc, sel: SyncSelector) {
  return searchAttributesFor({
    environment: connection.environment,
    integration: connection.provider_config_key,
    connectionId: connection.connection_id,
    syncName: sel.name,
    operation: 'sync',
  });
}

/** A string as a literal of Temporal's list filter. */
export function filterLiteral(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * How many of the integration's syncs are running now: one count over Temporal's visibility
 * (every sync run's workflow ID starts with the integration's prefix), which trails a start
 * or an end by about a second.
 */
export async function countRunningSyncs(deps: TemporalIdDeps, environment: string, providerConfigKey: string): Promise<number> {
  const prefix = integrationSyncWorkflowIdPrefix(deps.settings.temporalIdPrefix, environment, providerConfigKey);
  const { count } = await deps.temporal.workflowService.countWorkflowExecutions({
    namespace: deps.temporal.options.namespace,
    query: `WorkflowType = '${'syncRun' satisfies WorkflowName}' AND ExecutionStatus = 'Running' AND WorkflowId STARTS_WITH ${filterLiteral(prefix)}`,
  });
  return Number(count ?? 0);
}

/** Sync runs of an integration started in one interval: all of them, and those that failed (or timed out, or were terminated). */
export interface RunCounts {
  started: number;
  failed: number;
}

/**
 * The integration's sync runs started in each of `bounds`' intervals, as Temporal's visibility
 * counts them: one count per interval grouped by status (at most 4 in flight), what the
 * console charts. Runs are not read one by one, so the cost does not grow with the number of
 * connections.
 */
export async function countSyncRunsByInterval(deps: TemporalIdDeps, environment: string, providerConfigKey: string, bounds: Date[]): Promise<RunCounts[]> {
  const prefix = integrationSyncWorkflowIdPrefix(deps.settings.temporalIdPrefix, environment, providerConfigKey);
  const base = `WorkflowType = '${'syncRun' satisfies WorkflowName}' AND WorkflowId STARTS_WITH ${filterLiteral(prefix)}`;
  const intervals = bounds.slice(0, -1).map((from, i) => ({ from, to: bounds[i + 1] }));
  return mapBounded(intervals, 4, async ({ from, to }) => {
    const { count, groups } = await deps.temporal.workflowService.countWorkflowExecutions({
      namespace: deps.temporal.options.namespace,
      query: `${base} AND StartTime >= '${from.toISOString()}' AND StartTime < '${to.toISOString()}' GROUP BY ExecutionStatus`,
    });
    let failed = 0;
    for (const group of groups ?? []) {
      const status = group.groupValues?.[0]?.data ? Buffer.from(group.groupValues[0].data).toString('utf8').replace(/"/g, '') : '';
      if (FAILED_STATUSES.has(status)) failed += Number(group.count ?? 0);
    }
    return { started: Number(count ?? 0), failed };
  });
}

/** How visibility names the ends the console counts as failed runs. */
const FAILED_STATUSES = new Set(['Failed', 'TimedOut', 'Terminated']);

/** Whether Temporal is running this sync right now (the source of truth for RUNNING). */
export async function isSyncRunning(deps: TemporalIdDeps, connection: ConnectionDoc, sel: SyncSelector): Promise<boolean> {
  const workflowId = connectionSyncWorkflowId(deps.settings.temporalIdPrefix, connection, sel);
  try {
    const desc = await deps.temporal.workflow.getHandle(workflowId).describe();
    return desc.status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}
