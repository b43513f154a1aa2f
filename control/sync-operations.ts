import type { ConnectionDoc } from '../store/connections';
import type { SyncOperationDoc } from '../store/sync-operations';
import type { SyncFanOutInput, SyncOperation } from '../activities/sync-operation-contracts';
import type { ControlDeps, ControlSettings } from './deps';
import { ConflictError } from '../common/errors';
import { findConnection, findIntegration } from '../store/connection-lookup';
import { BASE_VARIANT } from '../activities/sync-contracts';
import { ensureSyncStates, isSyncRunning, selectSyncs, startSyncRun, syncStateOf, type SyncSelector } from './sync-runs';
import { setSyncSchedulePaused } from './sync-schedules';
import { searchAttributesFor } from './search-attributes';
import { syncFanOutWorkflowId } from './workflow-ids';
import { startWorkflow } from './workflow-start';

export interface SyncOperationRequest {
  environment: string;
  providerConfigKey: string;
  /** Absent: every connection of the integration, in the background. */
  connectionId?: string;
  /** Names or {name, variant}; empty: every sync of the integration. */
  syncs: Array<string | SyncSelector>;
  kind: SyncOperation['kind'];
  reset: boolean;
  emptyCache: boolean;
}

/**
 * POST /sync/trigger, /sync/start, /sync/pause. For one connection the operation is done
 * before this returns (null), every named sync checked first: an unknown variant changes
 * nothing. For every connection of the integration it is started in the background and
 * the operation returned, whose progress GET /sync/status shows.
 */
export async function requestSyncOperation(deps: ControlDeps, req: SyncOperationRequest): Promise<SyncOperationDoc | null> {
  const integration = await findIntegration(deps.stores, req.environment, req.providerConfigKey);
  const syncs = selectSyncs(deps, integration.provider, req.syncs);
  const operation: SyncOperation = { kind: req.kind, syncs, reset: req.reset, emptyCache: req.emptyCache };
  if (!req.connectionId) return startSyncFanOut(deps, { environment: req.environment, providerConfigKey: req.providerConfigKey }, operation);
  const { connection } = await findConnection(deps.stores, req.environment, req.providerConfigKey, req.connectionId);
  for (const sel of syncs) await syncStateOf(deps, connection, sel);
  await applySyncOperation(deps, connection, operation);
  return null;
}

/**
 * Applies a trigger (with its reset and emptyCache), start or pause to one connection's
 * selected syncs. A selected variant the connection does not have is passed over (the API
 * refuses one by name before calling this); 'skipped' when nothing was left to do.
 * Idempotent: twice is once (a run already going is joined, a paused schedule stays paused).
 */
export async function applySyncOperation(
  deps: ControlDeps,
  connection: ConnectionDoc,
  operation: SyncOperation,
  opts: ApplyOptions = {},
): Promise<'applied' | 'skipped'> {
  const states = await ensureSyncStates(deps, connection);
  const variants = await Promise.all(
    operation.syncs.map(async (sel) =>
      sel.variant === BASE_VARIANT
        ? states.find((s) => s.name === sel.name)
        : deps.stores.syncs.get({ connection: connection._id, name: sel.name, variant: sel.variant }),
    ),
  );
  const present = operation.syncs.flatMap((sel, i) => (variants[i] ? [{ sel, override: variants[i].frequency }] : []));
  if (present.length === 0) return 'skipped';
  if (operation.kind === 'trigger' && operation.reset && !opts.waitWhileRunning) {
    // Refused before anything changes: every selected sync is idle, or none is reset.
    for (const { sel } of present) if (await isSyncRunning(deps, connection, sel)) throw syncRunning(connection, sel);
  }
  await Promise.all(
    present.map(({ sel, override }) =>
      operation.kind === 'trigger'
        ? triggerOne(deps, connection, sel, operation, opts)
        : setSyncSchedulePaused(deps, connection, sel, operation.kind === 'pause', override),
    ),
  );
  return 'applied';
}

export interface ApplyOptions {
  /**
   * A reset must not meet a run in progress: that run would write its checkpoint over the
   * reset, and records into an emptied cache. Given, this waits until `isRunning` says the
   * run has ended (a background operation, which can wait); absent, a running sync refuses
   * the reset with 409 sync_running (a request, which cannot).
   */
  waitWhileRunning?: (isRunning: () => Promise<boolean>) => Promise<void>;
}

async function triggerOne(deps: ControlDeps, connection: ConnectionDoc, sel: SyncSelector, operation: SyncOperation, opts: ApplyOptions): Promise<void> {
  if (operation.reset) {
    if (opts.waitWhileRunning) await opts.waitWhileRunning(() => isSyncRunning(deps, connection, sel));
    await deps.stores.syncs.reset({ connection: connection._id, name: sel.name, variant: sel.variant });
    if (operation.emptyCache) {
      const models = Object.keys(deps.registry.getSync(connection.provider, sel.name)?.models ?? {});
      for (const model of models)
        await deps.stores.records.deleteScope({ environment: connection.environment, connection: connection._id, model, variant: sel.variant });
    }
  }
  await startSyncRun(deps, connection, sel);
}

function syncRunning(connection: ConnectionDoc, sel: SyncSelector): ConflictError {
  return new ConflictError(
    'sync_running',
    `Sync "${sel.name}" of connection "${connection.connection_id}" is running; a reset starts it from scratch, so it waits until that run has ended. Try again then.`,
  );
}

/**
 * Records the operation and starts the workflow that carries it out over every connection
 * of the integration; returns at once. If the workflow cannot be started the record goes
 * again and the error is the caller's (503 when Temporal is out of reach): nothing was done.
 */
async function startSyncFanOut(
  deps: Pick<ControlDeps, 'temporal' | 'stores'> & { settings: Pick<ControlSettings, 'temporalIdPrefix' | 'syncTaskQueue'> },
  scope: { environment: string; providerConfigKey: string },
  operation: SyncOperation,
): Promise<SyncOperationDoc> {
  const total = await deps.stores.connections.countForIntegration(scope.environment, scope.providerConfigKey);
  const op = await deps.stores.syncOperations.create({
    environment: scope.environment,
    provider_config_key: scope.providerConfigKey,
    kind: operation.kind,
    syncs: operation.syncs,
    opts: { reset: operation.reset, emptyCache: operation.emptyCache },
    total,
  });
  const input: SyncFanOutInput = {
    operationKey: op._id,
    environment: scope.environment,
    providerConfigKey: scope.providerConfigKey,
    operation,
    after: null,
    progress: { done: 0, failed: 0, skipped: 0, errors: [] },
  };
  try {
    await startWorkflow(deps.temporal, 'syncFanOut', {
      workflowId: syncFanOutWorkflowId(deps.settings.temporalIdPrefix, op.environment, op.provider_config_key, op.id),
      taskQueue: deps.settings.syncTaskQueue,
      args: [input],
      typedSearchAttributes: searchAttributesFor({
        environment: scope.environment,
        integration: scope.providerConfigKey,
        operation: `sync-${operation.kind}-all`,
      }),
    });
  } catch (err) {
    await deps.stores.syncOperations.remove(op._id).catch(() => undefined);
    throw err;
  }
  return op;
}
