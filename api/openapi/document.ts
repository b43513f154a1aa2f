import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { IntegrationRegistry } from '../../runtime/registry';
import { registerIntegrationRoutes } from './integration-models';
import { declareRateLimitHeaders } from './rate-limit-headers';
import { registerApiRoutes } from './routes';
import { registerWebhooks } from './webhooks';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/**
 * The API's OpenAPI 3.1 document, generated from the zod schemas the routers validate with
 * (api/schemas/) and answer with (api/schemas/responses.ts), the integrations' models (the
 * registry's: the pre-built ones and WEFT_INTEGRATIONS_DIR's) and the webhook payloads.
 */
export function buildOpenApiDocument(integrations: IntegrationRegistry): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'secretKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'The environment’s secret key (`Authorization: Bearer weft_sk_…`).',
  });
  registerApiRoutes(registry);
  registerIntegrationRoutes(registry, integrations);
  registerWebhooks(registry);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Weft API',
      version: '1',
      description:
        'Weft’s REST API (shaped like Nango’s): integrations, connections, synced records, actions, the proxy, webhooks. Generated from the zod schemas the API validates with.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/' }],
    security: [{ secretKey: [] }],
  });
  declareRateLimitHeaders(document);
  return document;
}
