import type { Request, Response } from 'express';
import type { z } from 'zod';
import { BadRequestError, NotFoundError } from '../../common/errors';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { createConnectSessionBody, createReconnectSessionBody } from '../schemas/connect';
import { tagsObject } from '../schemas/json-object';
import * as out from '../schemas/responses';
import { endUserTags } from '../services/end-user-tags';
import { publicBaseUrl } from '../services/public-url';

/** `POST /connect/sessions` and `/connect/sessions/reconnect` (secret key): a 30-minute link for one end user to connect accounts, or to re-authorize one. */
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
        await createSession(deps, req, res, input.body());
      },
    }),

    route({
      method: 'post',
      path: '/connect/sessions/reconnect',
      auth: 'secret-key',
      operationId: 'createReconnectSession',
      summary: 'Create a reconnect session: a link that re-authorizes one existing connection',
      description:
        'Nango’s `createReconnectSession`: the same as `POST /connect/sessions` with `allowed_integrations: [integration_id]` and `connection_id`. ' +
        'The connection must exist in that integration (404 `unknown_connection`).',
      request: { body: createReconnectSessionBody },
      responses: { 201: json(out.connectSessionResponse, 'Created: a 30-minute link that re-authorizes the connection'), ...errorResponses([404]) },
      async handler({ deps, req, res, input }) {
        const { integration_id, ...rest } = input.body();
        await createSession(deps, req, res, { ...rest, allowed_integrations: [integration_id] });
      },
    }),
  ],
});

/**
 * Stores a connect session and answers with its link. The end user and organization are kept
 * as tags of the connection its flow creates, beside the session's own `tags` (which win on
 * the same key); the tags must still fit the limits of tags.
 */
async function createSession(deps: ApiDeps, req: Request, res: Response, body: z.output<typeof createConnectSessionBody>): Promise<void> {
  const env = environmentOf(res);
  const tags = { ...endUserTags(body.end_user, body.organization), ...body.tags };
  const tagsCheck = tagsObject.safeParse(tags);
  if (!tagsCheck.success)
    throw new BadRequestError('invalid_body', `The session's tags, with those of end_user and organization: ${tagsCheck.error.issues[0].message}.`);
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
    tags,
    end_user: body.end_user ?? null,
    connection_id: body.connection_id ?? null,
  });
  link.searchParams.set('session_token', token);
  res.status(201).json({ data: { token, connect_link: link.href, expires_at: doc.expires_at.toISOString() } });
}

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
