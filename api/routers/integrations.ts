import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { sealedAt } from '../../auth/credential-cipher';
import { BadRequestError, NotFoundError } from '../../common/errors';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import {
  createIntegrationBody,
  integrationKeyParams,
  integrationStatusQuery,
  patchIntegrationBody,
  providerDeliveryListQuery,
  type integrationCredentialsSchema,
  type providerOverridesSchema,
} from '../schemas/integrations';
import * as out from '../schemas/responses';
import { validateClientCredentials } from '../services/client-credentials';
import { integrationStatus } from '../services/integration-status';
import { providerWebhookUrl } from '../services/public-url';
import type { IntegrationView, ProviderDeliveryView } from '../schemas/responses';
import type { ProviderDeliveryDoc } from '../../store/provider-deliveries';

export const integrationRoutes = routeGroup({
  mount: '/integrations',
  access: 'secret-key',
  tag: 'Integrations',
  routes: [
    route({
      method: 'get',
      path: '/integrations',
      auth: 'secret-key',
      operationId: 'listIntegrations',
      summary: 'List the environment’s integrations',
      responses: { 200: json(out.integrationListResponse), ...errorResponses([]) },
      async handler({ deps, res }) {
        const list = await deps.stores.integrations.list(environmentOf(res));
        res.json({ data: list.map((i) => present(i)) });
      },
    }),

    route({
      method: 'post',
      path: '/integrations',
      auth: 'secret-key',
      operationId: 'createIntegration',
      summary: 'Create an integration',
      request: { body: createIntegrationBody },
      responses: { 201: json(out.integrationResponse, 'Created'), ...errorResponses([409]) },
      async handler({ deps, res, input }) {
        const body = input.body();
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
          docs_url: body.docs_url ?? null,
          credentials_encrypted: body.credentials
            ? deps.cipher.seal(body.credentials, sealedAt.integrationCredentials({ _id, environment: environmentOf(res) }))
            : null,
          provider_overrides: body.provider_overrides ?? {},
        });
        res.status(201).json({ data: present(doc) });
      },
    }),

    route({
      method: 'get',
      path: '/integrations/:key',
      auth: 'secret-key',
      operationId: 'getIntegration',
      summary: 'Read an integration',
      request: {
        params: integrationKeyParams,
        query: z.object({
          include: z
            .enum(['credentials', 'webhook'])
            .optional()
            .describe('`credentials`: the client credentials too; `webhook`: the URL to give the provider for its webhooks.'),
        }),
      },
      // `include` is read leniently, as Nango's SDKs send it (`include=` or `include[]=`, one or several); other values are ignored.
      validate: 'in-handler',
      responses: { 200: json(z.union([out.integrationResponse, out.integrationWithCredentialsResponse])), ...errorResponses([404]) },
      async handler({ deps, req, res, input }) {
        const { key } = input.params();
        const doc = await deps.stores.integrations.get(environmentOf(res), key);
        if (!doc) throw new NotFoundError('unknown_provider_config', `No integration "${key}" in this environment.`);
        const include = ([] as unknown[]).concat(req.query.include ?? req.query['include[]'] ?? []);
        const withCredentials = include.includes('credentials') && doc.credentials_encrypted;
        const takesWebhooks = Boolean(deps.registry.get(doc.provider)?.provider.webhooks);
        res.json({
          data: {
            ...present(doc),
            ...(withCredentials ? { credentials: deps.cipher.open(doc.credentials_encrypted as string, sealedAt.integrationCredentials(doc)) } : {}),
            ...(include.includes('webhook') ? { webhook_url: takesWebhooks ? providerWebhookUrl(deps, req, doc) : null } : {}),
          },
        });
      },
    }),

    route({
      method: 'get',
      path: '/integrations/:key/status',
      auth: 'secret-key',
      operationId: 'getIntegrationStatus',
      summary: 'An integration’s health: connections, syncs, last hour of calls',
      request: { params: integrationKeyParams, query: integrationStatusQuery },
      responses: { 200: json(out.integrationStatusResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        res.json({ data: await integrationStatus(deps, environmentOf(res), input.params().key, input.query()) });
      },
    }),

    route({
      method: 'get',
      path: '/integrations/:key/webhook-deliveries',
      auth: 'secret-key',
      operationId: 'listProviderWebhookDeliveries',
      summary: 'The provider’s webhook deliveries of the last 7 days, by what became of them (`unmatched`: attributed to no connection)',
      request: { params: integrationKeyParams, query: providerDeliveryListQuery },
      responses: { 200: json(out.providerDeliveryListResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        const { key } = input.params();
        const { status, limit } = input.query();
        const environment = environmentOf(res);
        if (!(await deps.stores.integrations.get(environment, key)))
          throw new NotFoundError('unknown_provider_config', `No integration "${key}" in this environment.`);
        const docs = await deps.stores.providerDeliveries.list(environment, key, status, limit, new Date(Date.now() - 7 * 86_400_000));
        res.json({ data: docs.map(presentDelivery) });
      },
    }),

    route({
      method: 'patch',
      path: '/integrations/:key',
      auth: 'secret-key',
      operationId: 'updateIntegration',
      summary: 'Change an integration',
      request: { params: integrationKeyParams, body: patchIntegrationBody },
      responses: { 200: json(out.integrationResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        const { key } = input.params();
        const body = input.body();
        checkOutboundUrls(deps, body);
        let credentialsEncrypted: string | undefined;
        if (body.credentials) {
          const existing = await deps.stores.integrations.get(environmentOf(res), key);
          if (!existing) throw new NotFoundError('unknown_provider_config', `No integration "${key}" in this environment.`);
          const provider = deps.registry.get(existing.provider)?.provider;
          if (provider) validateClientCredentials(provider, body.credentials);
          credentialsEncrypted = deps.cipher.seal(body.credentials, sealedAt.integrationCredentials(existing));
        }
        const doc = await deps.stores.integrations.update(environmentOf(res), key, {
          ...(body.display_name ? { display_name: body.display_name } : {}),
          ...(body.docs_url !== undefined ? { docs_url: body.docs_url } : {}),
          ...(credentialsEncrypted ? { credentials_encrypted: credentialsEncrypted } : {}),
          ...(body.provider_overrides ? { provider_overrides: body.provider_overrides } : {}),
        });
        if (!doc) throw new NotFoundError('unknown_provider_config', `No integration "${key}" in this environment.`);
        res.json({ data: present(doc) });
      },
    }),

    route({
      method: 'delete',
      path: '/integrations/:key',
      auth: 'secret-key',
      operationId: 'deleteIntegration',
      summary: 'Delete an integration (without connections)',
      request: { params: integrationKeyParams },
      responses: { 200: json(out.successResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        const env = environmentOf(res);
        const { key } = input.params();
        const connections = await deps.stores.connections.listForIntegration(env, key);
        if (connections.length > 0) {
          throw new BadRequestError('integration_has_connections', `Delete the ${connections.length} connection(s) of "${key}" first.`);
        }
        if (!(await deps.stores.integrations.delete(env, key))) {
          throw new NotFoundError('unknown_provider_config', `No integration "${key}" in this environment.`);
        }
        res.json({ success: true });
      },
    }),
  ],
});

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
function presentDelivery(doc: ProviderDeliveryDoc): ProviderDeliveryView {
  return {
    id: doc._id,
    delivery_id: doc.delivery_id,
    event: doc.event,
    status: doc.status ?? 'pending',
    route: doc.route ?? null,
    connection_ids: doc.connection_ids ?? [],
    forwarded: doc.forwarded ?? [],
    syncs: doc.syncs ?? [],
    received_at: doc.received_at.toISOString(),
    processed_at: doc.processed_at?.toISOString() ?? null,
  };
}

function present(doc: IntegrationDoc): IntegrationView {
  return {
    unique_key: doc.unique_key,
    provider: doc.provider,
    display_name: doc.display_name,
    docs_url: doc.docs_url ?? null,
    provider_overrides: doc.provider_overrides,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
