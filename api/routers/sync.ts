import type { Request, Response } from 'express';
import { z } from 'zod';
import type { SyncOperation } from '../../activities/sync-operation-contracts';
import { createSyncVariant, deleteSyncVariant, requestSyncOperation, setConnectionSyncFrequency, syncStatus } from '../../control';
import type { ConnectionDoc } from '../../store/connections';
import { findConnection } from '../../store/connection-lookup';
import type { SyncOperationDoc } from '../../store/sync-operations';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import * as out from '../schemas/responses';
import type { SyncOperationView } from '../schemas/responses';
import { syncScheduleBody, syncStatusQuery, syncVariantTarget, triggerSyncBody, updateConnectionFrequencyBody, type SyncScheduleBody } from '../schemas/syncs';
import { parseInput } from '../validate';

/** What POST /sync/trigger, /sync/start and /sync/pause answer. */
const syncOperationResponses = {
  200: json(out.syncOperationResponse, 'Done for the connection named'),
  202: json(out.syncOperationResponse, 'Started in the background for every connection of the integration (`operation`)'),
  ...errorResponses([404, 409]),
};

/**
 * A variant route names its connection in the body (Nango's SDK) or the query: either is
 * documented, and the handler reads the one that is there.
 */
const variantRequest = {
  params: z.object({ name: z.string(), variant: z.string() }),
  query: syncVariantTarget.partial(),
  body: syncVariantTarget,
  bodyOptional: true,
} as const;

export const syncRoutes = routeGroup({
  mount: '/sync',
  access: 'secret-key',
  tag: 'Syncs',
  routes: [
    route({
      method: 'post',
      path: '/sync/trigger',
      auth: 'secret-key',
      operationId: 'triggerSync',
      summary: 'Run syncs now (optionally from scratch)',
      request: { body: triggerSyncBody },
      responses: syncOperationResponses,
      handler: ({ deps, res, input }) => syncOperation(deps, res, input.body(), 'trigger'),
    }),

    route({
      method: 'post',
      path: '/sync/start',
      auth: 'secret-key',
      operationId: 'startSync',
      summary: 'Resume syncs’ schedules',
      request: { body: syncScheduleBody },
      responses: syncOperationResponses,
      handler: ({ deps, res, input }) => syncOperation(deps, res, input.body(), 'start'),
    }),

    route({
      method: 'post',
      path: '/sync/pause',
      auth: 'secret-key',
      operationId: 'pauseSync',
      summary: 'Pause syncs’ schedules',
      request: { body: syncScheduleBody },
      responses: syncOperationResponses,
      handler: ({ deps, res, input }) => syncOperation(deps, res, input.body(), 'pause'),
    }),

    route({
      method: 'get',
      path: '/sync/status',
      auth: 'secret-key',
      operationId: 'getSyncStatus',
      summary: 'Syncs’ state and recent background operations',
      request: { query: syncStatusQuery },
      responses: { 200: json(out.syncStatusResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        const q = input.query();
        const status = await syncStatus(deps, {
          environment: environmentOf(res),
          providerConfigKey: q.provider_config_key,
          connectionId: q.connection_id,
          syncs: requestedSyncs(q.syncs),
        });
        res.json({ syncs: status.syncs, operations: status.operations.map(operationView) });
      },
    }),

    route({
      method: 'put',
      path: '/sync/update-connection-frequency',
      auth: 'secret-key',
      operationId: 'updateSyncFrequency',
      summary: 'Set a sync’s frequency for one connection',
      request: { body: updateConnectionFrequencyBody },
      responses: { 200: json(out.syncFrequencyResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        const body = input.body();
        const frequency = await setConnectionSyncFrequency(deps, {
          environment: environmentOf(res),
          providerConfigKey: body.provider_config_key,
          connectionId: body.connection_id,
          syncName: body.sync_name,
          variant: body.sync_variant,
          frequency: body.frequency,
        });
        res.json({ frequency });
      },
    }),

    route({
      method: 'post',
      path: '/sync/:name/variant/:variant',
      auth: 'secret-key',
      operationId: 'createSyncVariant',
      summary: 'Create a variant of a sync for a connection',
      request: variantRequest,
      validate: 'in-handler',
      responses: { 200: json(out.syncVariantResponse), ...errorResponses([404, 409]) },
      async handler({ deps, req, res, input }) {
        const connection = await variantConnection(deps, req, res);
        const { name, variant } = input.params();
        const state = await createSyncVariant(deps, connection, name, variant);
        res.json({ id: state._id, name: state.name, variant: state.variant });
      },
    }),

    route({
      method: 'delete',
      path: '/sync/:name/variant/:variant',
      auth: 'secret-key',
      operationId: 'deleteSyncVariant',
      summary: 'Delete a sync variant and its records',
      request: variantRequest,
      validate: 'in-handler',
      responses: { 200: json(out.successResponse), ...errorResponses([404]) },
      async handler({ deps, req, res, input }) {
        const connection = await variantConnection(deps, req, res);
        const { name, variant } = input.params();
        await deleteSyncVariant(deps, connection, name, variant);
        res.json({ success: true });
      },
    }),
  ],
});

/**
 * POST /sync/trigger, /sync/start, /sync/pause: done before the answer for one connection;
 * for every connection of the integration started in the background, and the answer (202)
 * names the operation.
 */
async function syncOperation(
  deps: ApiDeps,
  res: Response,
  body: SyncScheduleBody & { opts?: { reset?: boolean; emptyCache?: boolean } },
  kind: SyncOperation['kind'],
): Promise<void> {
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

/** The connection a variant route names, from the body when it has one, else the query (both complete: the query's fields are optional only in the document). */
async function variantConnection(deps: ApiDeps, req: Request, res: Response): Promise<ConnectionDoc> {
  const env = environmentOf(res);
  const hasBody = req.body && typeof req.body === 'object' && Object.keys(req.body as object).length > 0;
  const target = hasBody ? parseInput(syncVariantTarget, req.body, 'invalid_body') : parseInput(syncVariantTarget, req.query, 'invalid_query_params');
  return (await findConnection(deps.stores, env, target.provider_config_key, target.connection_id)).connection;
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
