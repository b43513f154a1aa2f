import type { ProviderDefinition } from '../../runtime/types';

/** Luma's public API (legacy `/public/v1` paths, still served). */
export const lumaProvider: ProviderDefinition = {
  name: 'luma',
  displayName: 'Luma',
  authMode: 'API_KEY',
  baseUrl: 'https://api.lu.ma',
  // Luma's other API hosts: the same API, reachable through the proxy's Base-Url-Override.
  allowedHosts: ['public-api.lu.ma', 'public-api.luma.com'],
  // The key header is redacted from logs like every provider's `apiKey.header`.
  apiKey: { header: 'x-luma-api-key' },
  verify: { method: 'GET', endpoint: '/public/v1/user/get-self' },
  pagination: {
    type: 'cursor',
    cursorPathInResponse: 'next_cursor',
    cursorNameInRequest: 'pagination_cursor',
    hasMorePathInResponse: 'has_more',
    responsePath: 'entries',
    limitNameInRequest: 'pagination_limit',
    limit: 100,
  },
  // 300 requests per any one-minute window per key, across endpoints; exceeding it locks
  // the key out for a minute. Weft paces under it with a budget shared by all runs.
  requestBudget: { requests: 300, windowMs: 60_000, lockoutMs: 60_000 },
  throttle: { kind: 'lockout', statuses: [429] },
  retries: 3,
};
