import { Router, type Request, type Response } from 'express';
import type { ConnectionDoc } from '../../store/connections';
import type { SyncOperationDoc } from '../../store/sync-operations';
import type { SyncOperationView } from '../schemas/responses';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { syncScheduleBody, syncStatusQuery, syncVariantTarget, triggerSyncBody, updateConnectionFrequencyBody, type SyncScheduleBody } from '../schemas/syncs';
import type { SyncOperation } from '../../activities/sync-operation-contracts';
import { findConnection } from '../../store/connection-lookup';
import { createSyncVariant, deleteSyncVariant, requestSyncOperation, setConnectionSyncFrequency, syncStatus } from '../../control';

export function syncRouter(deps: ApiDeps): Router {
  const router = Router();

  /**
   * POST /sync/trigger, /sync/start, /sync/pause: done before the answer for one connection;
   * for every connection of the integration started in the background, and the answer (202)
   * names the operation.
   */
  async function syncOperation(res: Response, body: SyncScheduleBody & { opts?: { reset?: boolean; emptyCache?: boolean } }, kind: SyncOperation['kind']) {
    const op = await requestSyncOperation(deps, {
      environment: environmentOf(res),
      providerConfigKey: body.provider_config_key,
      connectionId: body.connection_id,
      syncs: body.syncs,
      kind,
      reset: body.opts?.reset ?? false,
      emptyCache: body.opts?.emptyCache ?? false,
    });
    if (op) res.status(202).json({ success: true, operation: operationView(op) });
    else res.json({ success: true });
  }
  router.post('/start', async (req, res) => syncOperation(res, parseInput(syncScheduleBody, req.body, 'invalid_body'), 'start'));
  router.post('/pause', async (req, res) => syncOperation(res, parseInput(syncScheduleBody, req.body, 'invalid_body'), 'pause'));
  router.post('/trigger', async (req, res) => syncOperation(res, parseInput(triggerSyncBody, req.body, 'invalid_body'), 'trigger'));

  router.put('/update-connection-frequency', async (req, res) => {
    const body = parseInput(updateConnectionFrequencyBody, req.body, 'invalid_body');
    const frequency = await setConnectionSyncFrequency(deps, {
      environment: environmentOf(res),
      providerConfigKey: body.provider_config_key,
      connectionId: body.connection_id,
      syncName: body.sync_name,
      variant: body.sync_variant,
      frequency: body.frequency,
    });
    res.json({ frequency });
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
    const q = parseInput(syncStatusQuery, req.query, 'invalid_query_params');
    const status = await syncStatus(deps, {
      environment: environmentOf(res),
      providerConfigKey: q.provider_config_key,
      connectionId: q.connection_id,
      syncs: requestedSyncs(q.syncs),
    });
    res.json({ syncs: status.syncs, operations: status.operations.map(operationView) });
  });

  return router;
}

/** GET /sync/status's `syncs`: `*` for all, else names, Nango's SDK writing a variant as `name::variant` (a bare name: every variant of it). */
function requestedSyncs(syncs: string): Array<{ name: string; variant: string | null }> {
  if (syncs === '*') return [];
  return syncs
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const [name, variant] = s.split('::');
      return { name, variant: variant || null };
    });
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
