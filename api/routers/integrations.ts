import { Router } from 'express';
import { BadRequestError, NotFoundError } from '../../common/errors';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { createIntegrationBody, patchIntegrationBody } from '../schemas/integrations';
import { validateClientCredentials } from '../services/client-credentials';

export function integrationsRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/', async (_req, res) => {
    const list = await deps.stores.integrations.list(environmentOf(res));
    res.json({ data: list.map((i) => present(i)) });
  });

  router.post('/', async (req, res) => {
    const body = parseInput(createIntegrationBody, req.body, 'invalid_body');
    const provider = deps.registry.get(body.provider)?.provider;
    if (!provider) {
      throw new BadRequestError('unknown_provider', `Unknown provider "${body.provider}" (available: ${deps.registry.providers().map((p) => p.name).join(', ')}).`);
    }
    if (body.credentials) validateClientCredentials(provider, body.credentials);
    const doc = await deps.stores.integrations.create({
      environment: environmentOf(res),
      unique_key: body.unique_key,
      provider: body.provider,
      display_name: body.display_name ?? provider.displayName,
      credentials_encrypted: body.credentials ? deps.cipher.seal(body.credentials) : null,
      provider_overrides: body.provider_overrides ?? {},
    });
    res.status(201).json({ data: present(doc) });
  });

  router.get('/:key', async (req, res) => {
    const doc = await deps.stores.integrations.get(environmentOf(res), req.params.key);
    if (!doc) throw new NotFoundError('unknown_provider_config', `No integration "${req.params.key}" in this environment.`);
    const include = ([] as unknown[]).concat(req.query.include ?? req.query['include[]'] ?? []);
    const withCredentials = include.includes('credentials') && doc.credentials_encrypted;
    res.json({ data: { ...present(doc), ...(withCredentials ? { credentials: deps.cipher.open(doc.credentials_encrypted as string) } : {}) } });
  });

  router.patch('/:key', async (req, res) => {
    const body = parseInput(patchIntegrationBody, req.body, 'invalid_body');
    if (body.credentials) {
      const existing = await deps.stores.integrations.get(environmentOf(res), req.params.key);
      const provider = existing && deps.registry.get(existing.provider)?.provider;
      if (provider) validateClientCredentials(provider, body.credentials);
    }
    const doc = await deps.stores.integrations.update(environmentOf(res), req.params.key, {
      ...(body.display_name ? { display_name: body.display_name } : {}),
      ...(body.credentials ? { credentials_encrypted: deps.cipher.seal(body.credentials) } : {}),
      ...(body.provider_overrides ? { provider_overrides: body.provider_overrides } : {}),
    });
    if (!doc) throw new NotFoundError('unknown_provider_config', `No integration "${req.params.key}" in this environment.`);
    res.json({ data: present(doc) });
  });

  router.delete('/:key', async (req, res) => {
    const env = environmentOf(res);
    const connections = await deps.stores.connections.listForIntegration(env, req.params.key);
    if (connections.length > 0) {
      throw new BadRequestError('integration_has_connections', `Delete the ${connections.length} connection(s) of "${req.params.key}" first.`);
    }
    if (!(await deps.stores.integrations.delete(env, req.params.key))) {
      throw new NotFoundError('unknown_provider_config', `No integration "${req.params.key}" in this environment.`);
    }
    res.json({ success: true });
  });

  return router;
}

function present(doc: IntegrationDoc) {
  return {
    unique_key: doc.unique_key,
    provider: doc.provider,
    display_name: doc.display_name,
    provider_overrides: doc.provider_overrides,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
