import type { ProviderDefinition } from '../../runtime/types';
import { lumaWebhooks } from './webhooks';

/** Luma's public API (legacy `/public/v1` paths, still served). */
export const lumaProvider: ProviderDefinition = {
  name: 'luma',
  displayName: 'Luma',
  docs: 'https://docs.luma.com/reference',
  categories: ['events'],
  authMode: 'API_KEY',
  baseUrl: 'https://api.lu.ma',
  // Luma's other API hosts: the same API, reachable through the proxy's Base-Url-Override.
  allowedHosts: ['public-api.lu.ma', 'public-api.luma.com'],
  // The key header is redacted from logs like every provider's `apiKey.header`.
  apiKey: { header: 'x-luma-api-key' },
  verify: { method: 'GET', endpoint: '/public/v1/user/get-self' },
  webhooks: lumaWebhooks,
  pagination: {
    type: 'cursor',
    cursorPathInResponse: 'next_cursor',
    cursorNameInRequest: 'pagination_cursor',
    hasMorePathInResponse: 'has_more',
    responsePath: 'entries',
    limitNameInRequest: 'pagination_limit',
    limit: 100,
  },
  // A calendar key's limit: 200 requests a minute across endpoints; exceeding it locks the key
  // out for a minute (its 429 says how long in Retry-After). Weft paces under it with a budget
  // shared by all runs; an organization key (500) raises it per integration (docs/providers/luma.md).
  requestBudget: { requests: 200, windowMs: 60_000, lockoutMs: 60_000 },
  throttle: { kind: 'lockout', statuses: [429] },
  retries: 3,
};
