import { Router } from 'express';
import { BadRequestError } from '../../common/errors';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { createConnectSessionBody } from '../schemas/connect';
import { publicBaseUrl } from '../services/public-url';

/** `POST /connect/sessions` (secret key): a 30-minute link for one end user to connect accounts. */
export function connectSessionsRouter(deps: ApiDeps): Router {
  const router = Router();
  router.post('/', async (req, res) => {
    const env = environmentOf(res);
    const body = parseInput(createConnectSessionBody, req.body, 'invalid_body');
    const named = [...new Set([...(body.allowed_integrations ?? []), ...Object.keys(body.integrations_config_defaults ?? {})])];
    const known = new Set((await deps.stores.integrations.list(env)).map((i) => i.unique_key));
    const unknown = named.filter((k) => !known.has(k));
    if (unknown.length) throw new BadRequestError('unknown_provider_config', `Unknown integration(s): ${unknown.join(', ')}.`);
    const { token, doc } = await deps.stores.connectSessions.create({
      environment: env,
      allowed_integrations: body.allowed_integrations ?? null,
      integrations_config_defaults: body.integrations_config_defaults ?? {},
      tags: body.tags ?? {},
      end_user: body.end_user ?? null,
      connection_id: body.connection_id ?? null,
    });
    const link = new URL('/connect', publicBaseUrl(deps, req));
    link.searchParams.set('session_token', token);
    res.status(201).json({ data: { token, connect_link: link.href, expires_at: doc.expires_at.toISOString() } });
  });
  return router;
}
