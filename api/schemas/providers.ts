import { z } from 'zod';

/** `GET /providers`: Nango's `search` (part of the name or display name, any case). */
export const providerListQuery = z.object({
  search: z.string().max(255).optional().describe('Only providers whose name or display name contains this (any case).'),
});

export const providerParams = z.object({ provider: z.string() });

/**
 * One provider of the catalog, made from its integration folder's provider definition
 * (`integrations/<name>/provider.ts`, or `WEFT_INTEGRATIONS_DIR`'s): Nango's provider fields
 * where Weft has them, snake_case as Nango writes them.
 */
const providerView = z
  .object({
    name: z.string().describe('What `POST /integrations` takes as `provider`.'),
    display_name: z.string(),
    auth_mode: z.enum(['OAUTH2', 'API_KEY', 'APP']).describe('The auth mode of a connection when the integration does not choose another.'),
    auth_modes: z.array(z.enum(['OAUTH2', 'API_KEY', 'APP'])).describe('Every mode the provider supports (GitHub: an App, or an OAuth App).'),
    categories: z.array(z.string()),
    docs: z.string().nullable().describe('The provider’s own API documentation.'),
    default_scopes: z.array(z.string()).describe('OAuth scopes requested when neither the connect session nor the integration names any; empty without OAuth.'),
    authorization_url: z.string().nullable().describe('OAuth: where the end user authorizes (`{tenant}` replaced per connection).'),
    token_url: z.string().nullable(),
    proxy: z.object({ base_url: z.string() }).describe('Where the proxy and the integration’s calls go, unless the integration overrides it.'),
    webhooks: z
      .object({
        kind: z
          .enum(['signed', 'subscription-notifications', 'secret-path'])
          .describe(
            '`signed`: deliveries carry the provider’s signature; `subscription-notifications`: Weft subscribes per connection; `secret-path`: a secret URL per connection.',
          ),
      })
      .nullable()
      .describe('Whether Weft takes in the provider’s webhooks, and how they are verified; null: it takes none.'),
  })
  .meta({ id: 'Provider' });

export const providerListResponse = z.object({ data: z.array(providerView) });
export const providerResponse = z.object({ data: providerView });
