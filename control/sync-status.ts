import { NotFoundError } from '../common/errors';
import { mapBounded } from '../common/map-bounded';
import { findIntegration } from '../store/connection-lookup';
import type { ConnectionDoc } from '../store/connections';
import type { SyncOperationDoc } from '../store/sync-operations';
import type { ControlDeps } from './deps';
import { isSyncRunning, selectSyncs } from './sync-runs';
import { describeSyncSchedule, scheduleStatus } from './sync-schedules';

/** Background operations the status lists. */
const RECENT_OPERATIONS = 10;
/** Connections read (and their schedules described) at once over a whole integration. */
const STATUS_CONCURRENCY = 8;

export interface SyncStatusRequest {
  environment: string;
  providerConfigKey: string;
  /** Absent: every connection of the integration. */
  connectionId?: string;
  /** The syncs asked about (empty: all); a null variant means every variant of the sync. */
  syncs: Array<{ name: string; variant: string | null }>;
}

/**
 * The syncs' status (GET /sync/status) of one connection or of every connection of the
 * integration, with the integration's recent background operations, newest first. An
 * unknown integration is refused first (404), then a sync name it does not have (400
 * unknown_sync), then an unknown connection (404).
 */
export async function syncStatus(deps: ControlDeps, req: SyncStatusRequest): Promise<{ syncs: SyncStatus[]; operations: SyncOperationDoc[] }> {
  const { environment, providerConfigKey, connectionId } = req;
  // The connections are read while the integration is.
  const [integration, connections] = await Promise.all([
    findIntegration(deps.stores, environment, providerConfigKey),
    connectionId
      ? deps.stores.connections.find({ environment, providerConfigKey, connectionId }).then((c) => (c ? [c] : null))
      : deps.stores.connections.listForIntegration(environment, providerConfigKey),
  ]);
  selectSyncs(
    deps,
    integration.provider,
    req.syncs.map((r) => r.name),
  );
  const wanted = (state: { name: string; variant: string }) =>
    req.syncs.length === 0 || req.syncs.some((r) => r.name === state.name && (r.variant === null || r.variant === state.variant));
  if (!connections) throw new NotFoundError('unknown_connection', `No connection "${connectionId}" for integration "${providerConfigKey}".`);
  const [perConnection, operations] = await Promise.all([
    mapBounded(connections, STATUS_CONCURRENCY, (connection) => connectionSyncStatus(deps, connection, wanted)),
    deps.stores.syncOperations.listRecent(environment, providerConfigKey, RECENT_OPERATIONS),
  ]);
  return { syncs: perConnection.flat(), operations };
}

type SyncStatus = Awaited<ReturnType<typeof connectionSyncStatus>>[number];

/**
 * One connection's syncs: its states and checkpoints in one `_id` range read each, and per
 * sync one Temporal call, its schedule's description (paused, by Weft or in the Temporal
 * UI; the next fire; the interval). Whether a run is going is the state's own record, set
 * when the run's first activity starts; Temporal is asked only when the state says RUNNING
 * (a run an operator terminated never records its end).
 */
async function connectionSyncStatus(deps: ControlDeps, connection: ConnectionDoc, wanted: (state: { name: string; variant: string }) => boolean) {
  const states = (await deps.stores.syncs.listForConnection(connection._id)).filter(wanted);
  if (states.length === 0) return [];
  const checkpoints = await deps.stores.syncs.checkpointsForConnection(connection._id);
  return Promise.all(
    states.map(async (state) => {
      const def = deps.registry.getSync(connection.provider, state.name);
      const sel = { name: state.name, variant: state.variant };
      const [running, schedule] = await Promise.all([
        state.last_run?.status === 'RUNNING' ? isSyncRunning(deps, connection, sel) : false,
        describeSyncSchedule(deps, connection, sel),
      ]);
      const scheduled = schedule ? scheduleStatus(schedule) : null;
      const status = running
        ? 'RUNNING'
        : scheduled?.paused
          ? 'PAUSED'
          : state.last_run?.status === 'SUCCESS'
            ? 'SUCCESS'
            : state.last_run?.status === 'ERROR'
              ? 'ERROR'
              : 'STOPPED';
      return {
        id: state._id,
        connection_id: connection.connection_id,
        name: state.name,
        variant: state.variant,
        status,
        type: def?.syncType === 'incremental' ? ('INCREMENTAL' as const) : ('FULL' as const),
        finishedAt: state.last_run?.finished_at?.toISOString() ?? null,
        nextScheduledSyncAt: scheduled?.nextScheduledSyncAt ?? null,
        frequency: scheduled ? scheduled.frequency : (def?.frequency ?? null),
        latestResult: state.last_run?.result ?? null,
        latestExecutionStatus: state.last_run?.status ?? null,
        latestError: state.last_run?.error ?? null,
        recordCount: state.record_count,
        // Where checkpoints lived before their own collection: still read from the state when that has none.
        checkpoint: checkpoints.has(state._id) ? checkpoints.get(state._id) : (state.checkpoint ?? null),
      };
    }),
  );
}
