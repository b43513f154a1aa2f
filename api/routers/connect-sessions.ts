import { BadRequestError, NotFoundError } from '../../common/errors';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { createConnectSessionBody } from '../schemas/connect';
import * as out from '../schemas/responses';
import { publicBaseUrl } from '../services/public-url';

/** `POST /connect/sessions` (secret key): a 30-minute link for one end user to connect accounts. */
export const connectSessionRoutes = routeGroup({
  mount: '/connect/sessions',
  access: 'secret-key',
  tag: 'Connect',
  routes: [
    route({
      method: 'post',
      path: '/connect/sessions',
      auth: 'secret-key',
      operationId: 'createConnectSession',
      summary: 'Create a connect session (link for an end user)',
      request: { body: createConnectSessionBody },
      responses: { 201: json(out.connectSessionResponse, 'Created: a 30-minute link for the end user'), ...errorResponses([404]) },
      async handler({ deps, req, res, input }) {
        const env = environmentOf(res);
        const body = input.body();
        const named = [...new Set([...(body.allowed_integrations ?? []), ...Object.keys(body.integrations_config_defaults ?? {})])];
        const integrationKeys = (await deps.stores.integrations.list(env)).map((i) => i.unique_key);
        const known = new Set(integrationKeys);
        const unknown = named.filter((k) => !known.has(k));
        if (unknown.length) throw new BadRequestError('unknown_provider_config', `Unknown integration(s): ${unknown.join(', ')}.`);
        if (body.connection_id) await requireConnectionToReconnect(deps, env, body.connection_id, body.allowed_integrations ?? null, integrationKeys);
        // Before anything is stored: a Host header no link can be built from is refused first.
        const link = new URL('/connect', publicBaseUrl(deps, req));
        const { token, doc } = await deps.stores.connectSessions.create({
          environment: env,
          allowed_integrations: body.allowed_integrations ?? null,
          integrations_config_defaults: body.integrations_config_defaults ?? {},
          tags: body.tags ?? {},
          end_user: body.end_user ?? null,
          connection_id: body.connection_id ?? null,
        });
        link.searchParams.set('session_token', token);
        res.status(201).json({ data: { token, connect_link: link.href, expires_at: doc.expires_at.toISOString() } });
      },
    }),
  ],
});

/**
 * A reconnect session re-authorizes a connection that exists (in one of its allowed
 * integrations): its links never create one under an id the app chose.
 */
async function requireConnectionToReconnect(deps: ApiDeps, environment: string, connectionId: string, allowed: string[] | null, all: string[]): Promise<void> {
  // By key in each integration it may be in: reads by `_id`, not a search of all connections.
  const found = await deps.stores.connections.findInIntegrations(environment, allowed ?? all, connectionId);
  if (found.length > 0) return;
  throw new NotFoundError(
    'unknown_connection',
    `No connection "${connectionId}"${allowed ? ` in ${allowed.join(', ')}` : ''} to re-authorize. Leave connection_id out to let the end user create a new connection.`,
  );
}
