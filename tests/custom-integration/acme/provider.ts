import type { ProviderDefinition } from '../../../runtime/types';

/**
 * Acme Tasks, a made-up provider that exists only in this test folder: its API key goes in
 * `x-acme-api-key`, a session header `acme-session` is secret too, and every answer names
 * the request in `x-acme-request-id`. Nothing in Weft's core knows any of this.
 */
export const acmeProvider: ProviderDefinition = {
  name: 'acme-tasks',
  displayName: 'Acme Tasks',
  authMode: 'API_KEY',
  baseUrl: 'https://api.acme.example',
  apiKey: { header: 'x-acme-api-key' },
  secretHeaders: ['acme-session'],
  requestIdHeader: 'x-acme-request-id',
  verify: { method: 'GET', endpoint: '/v1/me' },
  pagination: {
    type: 'cursor',
    cursorPathInResponse: 'next_cursor',
    cursorNameInRequest: 'cursor',
    responsePath: 'data',
    limitNameInRequest: 'limit',
    limit: 50,
  },
  retries: 1,
};
