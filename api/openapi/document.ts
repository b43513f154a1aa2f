import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { IntegrationRegistry } from '../../runtime/registry';
import { API_ROUTES } from '../route-registry';
import type { OpenApiDocument } from '../routing/route';
import { declareRateLimitHeaders } from './rate-limit-headers';
import { routeOperations } from './operations';
import { registerWebhooks } from './webhooks';

export type { OpenApiDocument };

/**
 * The API's OpenAPI 3.1 document, generated from the route registry (api/route-registry.ts:
 * each route's zod schemas, which it validates with, and its responses), the integrations'
 * models (the integration registry's: the pre-built ones and WEFT_INTEGRATIONS_DIR's) and the
 * webhook payloads.
 */
export function buildOpenApiDocument(integrations: IntegrationRegistry): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'secretKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'The environment’s secret key (`Authorization: Bearer weft_sk_…`).',
  });
  for (const operation of routeOperations(API_ROUTES, integrations)) registry.registerPath(operation);
  registerWebhooks(registry);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Weft API',
      version: '1',
      description:
        'Weft’s REST API (shaped like Nango’s): integrations, connections, synced records, actions, the proxy, webhooks. Generated from the zod schemas the API validates with.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/' }],
    security: [{ secretKey: [] }],
  });
  declareRateLimitHeaders(document);
  return document;
}
