import { BadRequestError, NotFoundError } from '../../common/errors';
import { findConnection } from '../../store/connection-lookup';
import { environmentOf } from '../middleware/auth';
import { errorResponses } from '../openapi/errors';
import { operationEndpoints } from '../openapi/integration-models';
import { route, routeGroup } from '../routing/route';
import { actionHeaders } from '../schemas/actions';
import { connectionHeaders, listRecordsQuery } from '../schemas/records';
import { actionTimeoutMs, awaitActionResult, startAction, validateActionInput } from '../services/action-control';
import { listRecordsPage } from '../services/record-listing';
import { parseInput } from '../validate';

/**
 * Each pre-built operation at its own endpoint (`GET /v1/list-drives`, `GET /v1/user-files`,
 * `GET /v1/luma/list-events`, ...), for the connection named by the `Connection-Id` and
 * `Provider-Config-Key` headers: an action runs with the query string as its input and
 * answers with its output; a sync answers with its records, paged like `GET /records`.
 * An action declared at POST (a write) answers at `POST /v1/<path>` only, its body the input.
 */
export const operationRoutes = routeGroup({
  mount: '/v1',
  access: 'secret-key',
  tag: 'Operation endpoints',
  routes: [
    route({
      method: 'get',
      path: '/v1/*path',
      auth: 'secret-key',
      operationId: 'v1',
      summary: 'A sync’s records or a read action’s output, at the operation’s own endpoint',
      request: { headers: connectionHeaders },
      responses: errorResponses([404, 409, 424, 504], true, true),
      // One operation per endpoint the integrations declare, with its own models.
      openapi: operationEndpoints,
      async handler({ deps, req, res, input }) {
        const headers = input.headers();
        const { connection } = await findConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
        const integration = deps.registry.get(connection.provider);
        const path = operationPath(req.params);
        // An action declared at POST (a write) does not run from a GET.
        const action = integration?.actions.find((a) => a.endpoint.path === path && a.endpoint.method === 'GET');
        if (action) {
          const { 'x-max-retries': maxRetries, 'x-action-timeout': timeoutSeconds } = parseInput(actionHeaders, req.headers, 'invalid_headers');
          const actionInput = validateActionInput(action, req.query);
          const started = await startAction(deps, connection, action, actionInput, maxRetries ?? 0);
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
        const write = integration?.actions.find((a) => a.endpoint.path === path);
        if (write) throw new NotFoundError('unknown_operation', `/v1${path} is the write action ${write.name}: POST its input as the JSON body.`);
        const available = [...(integration?.actions ?? []), ...(integration?.syncs ?? [])].map((o) => `${o.endpoint.method} /v1${o.endpoint.path}`);
        throw new NotFoundError(
          'unknown_operation',
          `Integration "${connection.provider_config_key}" has no operation at GET /v1${path} (available: ${available.join(', ') || 'none'}).`,
        );
      },
    }),

    route({
      method: 'post',
      path: '/v1/*path',
      auth: 'secret-key',
      operationId: 'v1Post',
      summary: 'A write action at its own endpoint: the JSON body is its input',
      request: { headers: connectionHeaders },
      responses: errorResponses([404, 409, 424, 504], true, true),
      openapi: operationEndpoints,
      async handler({ deps, req, res, input }) {
        const headers = input.headers();
        const { connection } = await findConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
        const path = operationPath(req.params);
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
        const actionInput = validateActionInput(action, req.body);
        const started = await startAction(deps, connection, action, actionInput, maxRetries ?? 0);
        res.json(await awaitActionResult(deps, started, actionTimeoutMs(deps, timeoutSeconds)));
      },
    }),
  ],
});

/** The operation's path under `/v1` (Express gives a `*path` wildcard as its segments). */
function operationPath(params: Record<string, string | string[]>): string {
  return `/${([] as string[]).concat(params.path).join('/')}`;
}
