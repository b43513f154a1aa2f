import type { Request } from 'express';
import type { z } from 'zod';
import { BadRequestError, NotFoundError } from '../../common/errors';
import type { ApiDeps } from '../deps';
import type { createConnectSessionBody } from '../schemas/connect';
import { tagsObject } from '../schemas/json-object';
import { endUserTags } from './end-user-tags';
import { publicBaseUrl } from './public-url';

/**
 * Stores a connect session and gives its link (`POST /connect/sessions`, its reconnect variant, and the console's links). The end user and organization are kept
 * as tags of the connection its flow creates, beside the session's own `tags` (which win on
 * the same key); the tags must still fit the limits of tags.
 */
export async function createConnectSession(
  deps: ApiDeps,
  req: Request,
  env: string,
  body: z.output<typeof createConnectSessionBody>,
): Promise<{ token: string; connect_link: string; expires_at: string }> {
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
  return { token, connect_link: link.href, expires_at: doc.expires_at.toISOString() };
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
