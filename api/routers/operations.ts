import { Router } from 'express';
import { BadRequestError, NotFoundError } from '../../common/errors';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { connectionHeaders, listRecordsQuery } from '../schemas/records';
import { actionHeaders } from '../schemas/actions';
import { findConnection } from '../../store/connection-lookup';
import { actionTimeoutMs, awaitActionResult, startAction, validateActionInput } from '../services/action-control';
import { listRecordsPage } from '../services/record-listing';

/**
 * Each pre-built operation at its own endpoint (`GET /v1/list-drives`, `GET /v1/user-files`,
 * `GET /v1/luma/list-events`, ...), for the connection named by the `Connection-Id` and
 * `Provider-Config-Key` headers: an action runs with the query string as its input and
 * answers with its output; a sync answers with its records, paged like `GET /records`.
 * An action declared at POST (a write) answers at `POST /v1/<path>` only, its body the input.
 */
export function operationsRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/*path', async (req, res) => {
    const headers = parseInput(connectionHeaders, req.headers, 'invalid_headers');
    const { connection } = await findConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
    const integration = deps.registry.get(connection.provider);
    const path = `/${([] as string[]).concat((req.params as { path: string | string[] }).path).join('/')}`;
    // An action declared at POST (a write) does not run from a GET.
    const action = integration?.actions.find((a) => a.endpoint.path === path && a.endpoint.method === 'GET');
    if (action) {
      const { 'x-max-retries': maxRetries, 'x-action-timeout': timeoutSeconds } = parseInput(actionHeaders, req.headers, 'invalid_headers');
      const input = validateActionInput(action, req.query);
      const started = await startAction(deps, connection, action, input, maxRetries ?? 0);
      res.json(await awaitActionResult(deps, started, actionTimeoutMs(deps, timeoutSeconds)));
      return;
    }
    const sync = integration?.syncs.find((s) => s.endpoint.path === path);
    if (sync) {
      const models = Object.keys(sync.models);
      const requested = typeof req.query.model === 'string' ? req.query.model : models.length === 1 ? models[0] : undefined;
      if (!requested) throw new BadRequestError('model_required', `Sync ${sync.name} has several models (${models.join(', ')}); pass ?model=.`);
      const q = parseInput(listRecordsQuery, { ...req.query, model: requested }, 'invalid_query_params');
      res.json(await listRecordsPage(deps.stores, deps.registry, connection, q));
      return;
    }
    const available = [...(integration?.actions ?? []), ...(integration?.syncs ?? [])].map((o) => `/v1${o.endpoint.path}`);
    throw new NotFoundError(
      'unknown_operation',
      `Integration "${connection.provider_config_key}" has no operation at /v1${path} (available: ${available.join(', ') || 'none'}).`,
    );
  });

  // A write action at its own endpoint (`POST /v1/upload-file`): the JSON body is its input.
  router.post('/*path', async (req, res) => {
    const headers = parseInput(connectionHeaders, req.headers, 'invalid_headers');
    const { connection } = await findConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
    const path = `/${([] as string[]).concat((req.params as { path: string | string[] }).path).join('/')}`;
    const actions = deps.registry.get(connection.provider)?.actions ?? [];
    const action = actions.find((a) => a.endpoint.path === path && a.endpoint.method === 'POST');
    if (!action) {
      const available = actions.filter((a) => a.endpoint.method === 'POST').map((a) => `/v1${a.endpoint.path}`);
      throw new NotFoundError(
        'unknown_operation',
        `Integration "${connection.provider_config_key}" has no POST operation at /v1${path} (available: ${available.join(', ') || 'none'}).`,
      );
    }
    const { 'x-max-retries': maxRetries, 'x-action-timeout': timeoutSeconds } = parseInput(actionHeaders, req.headers, 'invalid_headers');
    const input = validateActionInput(action, req.body);
    const started = await startAction(deps, connection, action, input, maxRetries ?? 0);
    res.json(await awaitActionResult(deps, started, actionTimeoutMs(deps, timeoutSeconds)));
  });

  return router;
}
