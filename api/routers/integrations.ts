import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { sealedAt } from '../../auth/credential-cipher';
import { BadRequestError, NotFoundError } from '../../common/errors';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import {
  createIntegrationBody,
  integrationStatusQuery,
  patchIntegrationBody,
  type integrationCredentialsSchema,
  type providerOverridesSchema,
} from '../schemas/integrations';
import type { z } from 'zod';
import { validateClientCredentials } from '../services/client-credentials';
import { integrationStatus } from '../services/integration-status';
import type { IntegrationView } from '../schemas/responses';

export function integrationsRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/', async (_req, res) => {
    const list = await deps.stores.integrations.list(environmentOf(res));
    res.json({ data: list.map((i) => present(i)) });
  });

  router.post('/', async (req, res) => {
    const body = parseInput(createIntegrationBody, req.body, 'invalid_body');
    checkOutboundUrls(deps, body);
    const provider = deps.registry.get(body.provider)?.provider;
    if (!provider) {
      throw new BadRequestError(
        'unknown_provider',
        `Unknown provider "${body.provider}" (available: ${deps.registry
          .providers()
          .map((p) => p.name)
          .join(', ')}).`,
      );
    }
    if (body.credentials) validateClientCredentials(provider, body.credentials);
    const _id = randomUUID();
    const doc = await deps.stores.integrations.create({
      _id,
      environment: environmentOf(res),
      unique_key: body.unique_key,
      provider: body.provider,
      display_name: body.display_name ?? provider.displayName,
      credentials_encrypted: body.credentials
        ? deps.cipher.seal(body.credentials, sealedAt.integrationCredentials({ _id, environment: environmentOf(res) }))
        : null,
      provider_overrides: body.provider_overrides ?? {},
    });
    res.status(201).json({ data: present(doc) });
  });

  router.get('/:key', async (req, res) => {
    const doc = await deps.stores.integrations.get(environmentOf(res), req.params.key);
    if (!doc) throw new NotFoundError('unknown_provider_config', `No integration "${req.params.key}" in this environment.`);
    const include = ([] as unknown[]).concat(req.query.include ?? req.query['include[]'] ?? []);
    const withCredentials = include.includes('credentials') && doc.credentials_encrypted;
    res.json({
      data: {
        ...present(doc),
        ...(withCredentials ? { credentials: deps.cipher.open(doc.credentials_encrypted as string, sealedAt.integrationCredentials(doc)) } : {}),
      },
    });
  });

  router.get('/:key/status', async (req, res) => {
    const q = parseInput(integrationStatusQuery, req.query, 'invalid_query_params');
    res.json({ data: await integrationStatus(deps, environmentOf(res), req.params.key, q) });
  });

  router.patch('/:key', async (req, res) => {
    const body = parseInput(patchIntegrationBody, req.body, 'invalid_body');
    checkOutboundUrls(deps, body);
    let credentialsEncrypted: string | undefined;
    if (body.credentials) {
      const existing = await deps.stores.integrations.get(environmentOf(res), req.params.key);
      if (!existing) throw new NotFoundError('unknown_provider_config', `No integration "${req.params.key}" in this environment.`);
      const provider = deps.registry.get(existing.provider)?.provider;
      if (provider) validateClientCredentials(provider, body.credentials);
      credentialsEncrypted = deps.cipher.seal(body.credentials, sealedAt.integrationCredentials(existing));
    }
    const doc = await deps.stores.integrations.update(environmentOf(res), req.params.key, {
      ...(body.display_name ? { display_name: body.display_name } : {}),
      ...(credentialsEncrypted ? { credentials_encrypted: credentialsEncrypted } : {}),
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

/**
 * Weft calls base_url and auth_base_url itself, and sends browsers to app_link: a literal
 * address the egress policy refuses (private, loopback, link-local ...) is refused here with
 * 400 `egress_refused`, before anything is stored. Names are checked when they are resolved.
 */
function checkOutboundUrls(
  deps: Pick<ApiDeps, 'egress'>,
  body: { provider_overrides?: z.infer<typeof providerOverridesSchema>; credentials?: z.infer<typeof integrationCredentialsSchema> },
): void {
  if (body.provider_overrides?.base_url) deps.egress.providers.checkUrl(body.provider_overrides.base_url, 'provider_overrides.base_url');
  if (body.provider_overrides?.auth_base_url) deps.egress.providers.checkUrl(body.provider_overrides.auth_base_url, 'provider_overrides.auth_base_url');
  if (body.credentials?.type === 'APP') deps.egress.providers.checkUrl(body.credentials.app_link, 'credentials.app_link');
}

/** The body's shape is api/schemas/responses.ts's, which the OpenAPI document shows. */
function present(doc: IntegrationDoc): IntegrationView {
  return {
    unique_key: doc.unique_key,
    provider: doc.provider,
    display_name: doc.display_name,
    provider_overrides: doc.provider_overrides,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
