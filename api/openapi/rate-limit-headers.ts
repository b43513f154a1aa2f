import type { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';

type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

type Operation = NonNullable<NonNullable<OpenApiDocument['paths']>[string]['get']>;
type Headers = NonNullable<NonNullable<OpenApiDocument['components']>['headers']>;

/**
 * The headers api/middleware/rate-limit.ts sets on every answer it counted, as named
 * components (`#/components/headers/...`). None is required: the limit can be off
 * (WEFT_API_RATE_LIMIT=0), and a request refused before it is counted (no key, a body that is
 * not JSON) has none.
 */
const RATE_LIMIT_HEADERS: Headers = {
  'X-RateLimit-Limit': { description: 'Requests allowed per window for this environment.', schema: { type: 'integer', minimum: 1 } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'When the current window ends, in Unix seconds.', schema: { type: 'integer', minimum: 0 } },
  RateLimit: {
    description: 'The same as the IETF draft’s field (draft-ietf-httpapi-ratelimit-headers-09): `"environment";r=<remaining>;t=<seconds to reset>`.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'The limit as the IETF draft’s policy field: `"environment";q=<limit>;w=<window seconds>`.',
    schema: { type: 'string' },
  },
};

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Declares the rate-limit headers on every answer of every secret-key operation but its 401
 * (the key check runs before the limit). Done over the generated document rather than route
 * by route, as the limiter is mounted: in front of every secret-key router (api/app.ts).
 */
export function declareRateLimitHeaders(document: OpenApiDocument): void {
  document.components = { ...document.components, headers: { ...document.components?.headers, ...RATE_LIMIT_HEADERS } };
  const refs: Headers = Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]));
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const op: Operation | undefined = item[method];
      if (!op || (Array.isArray(op.security) && op.security.length === 0)) continue;
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (status === '401' || '$ref' in response) continue;
        response.headers = { ...refs, ...response.headers };
      }
    }
  }
}
