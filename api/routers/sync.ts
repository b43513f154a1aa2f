import { Router, type Request, type Response } from 'express';
import type { ConnectionDoc } from '../../store/connections';
import type { SyncOperationDoc } from '../../store/sync-operations';
import type { SyncOperationView } from '../schemas/responses';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { NotFoundError } from '../../common/errors';
import { syncScheduleBody, syncStatusQuery, syncVariantTarget, triggerSyncBody, updateConnectionFrequencyBody, type SyncScheduleBody } from '../schemas/syncs';
import type { SyncOperation } from '../../activities/sync-operation-contracts';
import {
  applySyncOperation,
  startSyncFanOut,
  createSyncVariant,
  deleteSyncVariant,
  DEFAULT_VARIANT,
  ensureSyncStates,
  isSyncRunning,
  selectSyncs,
  type SyncSelector,
  describeSyncSchedule,
  effectiveFrequencyMs,
  scheduleStatus,
  setSyncScheduleFrequency,
  frequencyLabel,
} from '../../control';
import { findConnection, findIntegration } from '../../store/connection-lookup';
import { mapBounded } from '../../common/map-bounded';

/** Background operations GET /sync/status lists. */
const RECENT_OPERATIONS = 10;
/** Connections read (and their schedules described) at once by GET /sync/status over a whole integration. */
const STATUS_CONCURRENCY = 8;

export function syncRouter(deps: ApiDeps): Router {
  const router = Router();

  /** The connections a sync request is about (one, or all of the integration's), read while the integration is. */
  async function targetConnections(env: string, providerConfigKey: string, connectionId?: string) {
    const [integration, connections] = await Promise.all([
      findIntegration(deps.stores, env, providerConfigKey),
      connectionId
        ? deps.stores.connections.find({ environment: env, providerConfigKey, connectionId }).then((c) => (c ? [c] : null))
        : deps.stores.connections.listForIntegration(env, providerConfigKey),
    ]);
    return { integration, connections };
  }

  /**
   * A sync's state, or an unknown variant refused. (A base sync without state is a
   * connection of an earlier version: its state is made when it is next used.)
   */
  async function syncState(connection: ConnectionDoc, sel: SyncSelector) {
    const state = await deps.stores.syncs.get({ connection: connection._id, name: sel.name, variant: sel.variant });
    if (!state && sel.variant !== DEFAULT_VARIANT) {
      throw new NotFoundError('unknown_sync_variant', `Connection "${connection.connection_id}" has no variant "${sel.variant}" of sync "${sel.name}".`);
    }
    return state;
  }

  /**
   * POST /sync/trigger, /sync/start, /sync/pause. For one connection the operation is done
   * before the answer, every named sync checked first (an unknown variant changes nothing);
   * for every connection of the integration it is started in the background and the answer
   * names it (`operation`), whose progress GET /sync/status shows.
   */
  async function syncOperation(res: Response, body: SyncScheduleBody & { opts?: { reset?: boolean; emptyCache?: boolean } }, kind: SyncOperation['kind']) {
    const env = environmentOf(res);
    const integration = await findIntegration(deps.stores, env, body.provider_config_key);
    const syncs = selectSyncs(deps, integration.provider, body.syncs);
    const operation: SyncOperation = { kind, syncs, reset: body.opts?.reset ?? false, emptyCache: body.opts?.emptyCache ?? false };
    if (!body.connection_id) {
      const op = await startSyncFanOut(deps, { environment: env, providerConfigKey: body.provider_config_key }, operation);
      res.status(202).json({ success: true, operation: operationView(op) });
      return;
    }
    const { connection } = await findConnection(deps.stores, env, body.provider_config_key, body.connection_id);
    for (const sel of syncs) await syncState(connection, sel);
    await applySyncOperation(deps, connection, operation);
    res.json({ success: true });
  }
  router.post('/start', async (req, res) => syncOperation(res, parseInput(syncScheduleBody, req.body, 'invalid_body'), 'start'));
  router.post('/pause', async (req, res) => syncOperation(res, parseInput(syncScheduleBody, req.body, 'invalid_body'), 'pause'));
  router.post('/trigger', async (req, res) => syncOperation(res, parseInput(triggerSyncBody, req.body, 'invalid_body'), 'trigger'));

  router.put('/update-connection-frequency', async (req, res) => {
    const env = environmentOf(res);
    const body = parseInput(updateConnectionFrequencyBody, req.body, 'invalid_body');
    const integration = await findIntegration(deps.stores, env, body.provider_config_key);
    const [sel] = selectSyncs(deps, integration.provider, [{ name: body.sync_name, variant: body.sync_variant ?? DEFAULT_VARIANT }]);
    const { connection } = await findConnection(deps.stores, env, body.provider_config_key, body.connection_id);
    const state = await syncState(connection, sel);
    // Parsed (and refused) before anything changes.
    const everyMs = effectiveFrequencyMs(deps, connection, sel.name, body.frequency);
    await setSyncScheduleFrequency(deps, connection, sel, everyMs);
    if (!state) await ensureSyncStates(deps, connection);
    await deps.stores.syncs.setFrequency({ connection: connection._id, name: sel.name, variant: sel.variant }, body.frequency);
    res.json({ frequency: frequencyLabel(everyMs) });
  });

  /** The connection a variant route names, from the body (Nango's SDK) or the query. */
  async function variantConnection(req: Request, res: Response): Promise<ConnectionDoc> {
    const env = environmentOf(res);
    const hasBody = req.body && typeof req.body === 'object' && Object.keys(req.body as object).length > 0;
    const target = hasBody ? parseInput(syncVariantTarget, req.body, 'invalid_body') : parseInput(syncVariantTarget, req.query, 'invalid_query_params');
    return (await findConnection(deps.stores, env, target.provider_config_key, target.connection_id)).connection;
  }

  router.post('/:name/variant/:variant', async (req, res) => {
    const connection = await variantConnection(req, res);
    const state = await createSyncVariant(deps, connection, req.params.name, req.params.variant);
    res.json({ id: state._id, name: state.name, variant: state.variant });
  });

  router.delete('/:name/variant/:variant', async (req, res) => {
    const connection = await variantConnection(req, res);
    await deleteSyncVariant(deps, connection, req.params.name, req.params.variant);
    res.json({ success: true });
  });

  router.get('/status', async (req, res) => {
    const env = environmentOf(res);
    const q = parseInput(syncStatusQuery, req.query, 'invalid_query_params');
    const { integration, connections } = await targetConnections(env, q.provider_config_key, q.connection_id);
    // Nango's SDK writes a variant as `name::variant`; a bare name means every variant of it.
    const requested =
      q.syncs === '*'
        ? []
        : q.syncs
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
            .map((s) => {
              const [name, variant] = s.split('::');
              return { name, variant: variant || null };
            });
    // A name the integration does not have is refused (400 unknown_sync).
    selectSyncs(
      deps,
      integration.provider,
      requested.map((r) => r.name),
    );
    const wanted = (state: { name: string; variant: string }) =>
      requested.length === 0 || requested.some((r) => r.name === state.name && (r.variant === null || r.variant === state.variant));
    if (!connections) throw new NotFoundError('unknown_connection', `No connection "${q.connection_id}" for integration "${q.provider_config_key}".`);
    const [perConnection, operations] = await Promise.all([
      mapBounded(connections, STATUS_CONCURRENCY, (connection) => connectionSyncStatus(connection, wanted)),
      // Background operations over every connection of the integration, newest first.
      deps.stores.syncOperations.listRecent(env, q.provider_config_key, RECENT_OPERATIONS),
    ]);
    res.json({ syncs: perConnection.flat(), operations: operations.map(operationView) });
  });

  /**
   * One connection's syncs: its states and checkpoints in one `_id` range read each, and per
   * sync one Temporal call, its schedule's description (paused, by Weft or in the Temporal
   * UI; the next fire; the interval). Whether a run is going is the state's own record, set
   * when the run's first activity starts; Temporal is asked only when the state says RUNNING
   * (a run an operator terminated never records its end).
   */
  async function connectionSyncStatus(connection: ConnectionDoc, wanted: (state: { name: string; variant: string }) => boolean) {
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

  return router;
}

/** How GET /sync/status and the starting call show an operation. */
function operationView(op: SyncOperationDoc): SyncOperationView {
  return {
    id: op.id,
    kind: op.kind,
    syncs: op.syncs,
    opts: op.opts,
    status: op.status,
    total: op.total,
    done: op.done,
    failed: op.failed,
    skipped: op.skipped,
    errors: op.errors,
    createdAt: op.created_at.toISOString(),
    finishedAt: op.finished_at?.toISOString() ?? null,
  };
}
