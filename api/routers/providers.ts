import { NotFoundError } from '../../common/errors';
import type { ProviderDefinition } from '../../runtime/types';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { providerListQuery, providerListResponse, providerParams, providerResponse } from '../schemas/providers';

/**
 * The provider catalog (`GET /providers`, `GET /providers/:provider`, as Nango's SDKs call
 * them): every provider of the process's integration registry, the pre-built integrations' and
 * `WEFT_INTEGRATIONS_DIR`'s, read from their provider definitions. The same in every environment.
 */
export const providerRoutes = routeGroup({
  mount: '/providers',
  access: 'secret-key',
  tag: 'Providers',
  routes: [
    route({
      method: 'get',
      path: '/providers',
      auth: 'secret-key',
      operationId: 'listProviders',
      summary: 'The providers integrations can be made for',
      request: { query: providerListQuery },
      responses: { 200: json(providerListResponse), ...errorResponses([]) },
      handler({ deps, res, input }) {
        const search = input.query().search?.toLowerCase();
        const providers = deps.registry
          .providers()
          .filter((p) => !search || p.name.toLowerCase().includes(search) || p.displayName.toLowerCase().includes(search))
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        res.json({ data: providers.map(presentProvider) });
      },
    }),

    route({
      method: 'get',
      path: '/providers/:provider',
      auth: 'secret-key',
      operationId: 'getProvider',
      summary: 'One provider of the catalog',
      request: { params: providerParams },
      responses: { 200: json(providerResponse), ...errorResponses([404]) },
      handler({ deps, res, input }) {
        const { provider } = input.params();
        const definition = deps.registry.get(provider)?.provider;
        if (!definition) {
          const known = deps.registry
            .providers()
            .map((p) => p.name)
            .sort();
          throw new NotFoundError('unknown_provider', `No provider "${provider}" (available: ${known.join(', ')}).`);
        }
        res.json({ data: presentProvider(definition) });
      },
    }),
  ],
});

function presentProvider(p: ProviderDefinition) {
  return {
    name: p.name,
    display_name: p.displayName,
    auth_mode: p.authMode,
    auth_modes: p.authModes ?? [p.authMode],
    categories: p.categories ?? [],
    docs: p.docs ?? null,
    default_scopes: p.oauth?.defaultScopes ?? [],
    authorization_url: p.oauth?.authorizationUrl ?? null,
    token_url: p.oauth?.tokenUrl ?? null,
    proxy: { base_url: p.baseUrl },
    webhooks: p.webhooks ? { kind: p.webhooks.kind } : null,
  };
}
