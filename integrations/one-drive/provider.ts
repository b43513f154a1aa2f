import type { ProviderDefinition } from '../../runtime/types';

/**
 * Microsoft Graph, files (OneDrive and SharePoint document libraries). Facts:
 * providers.md §B. Collections page with `@odata.nextLink` (a full URL, followed as is);
 * throttling is 429 or 503 with `Retry-After` in decimal seconds, and Microsoft asks
 * clients to pause every request to the tenant meanwhile (the account throttle does).
 */
export const oneDriveProvider: ProviderDefinition = {
  name: 'one-drive',
  displayName: 'OneDrive (Microsoft Graph)',
  authMode: 'OAUTH2',
  baseUrl: 'https://graph.microsoft.com',
  verify: { method: 'GET', endpoint: '/v1.0/me' },
  oauth: {
    authorizationUrl: 'https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token',
    defaultTenant: 'common',
    defaultScopes: ['offline_access', 'Files.Read.All', 'User.Read'],
    pkce: true,
    scopeRules: 'microsoft',
    teamSiteTokenScope: 'Sites.Read.All',
    refreshMarginMs: 15 * 60_000,
  },
  pagination: { type: 'link', linkPathInResponseBody: '@odata.nextLink', responsePath: 'value' },
  throttle: { kind: 'retry-after', statuses: [429, 503], defaultWaitMs: 5_000 },
  retries: 3,
};
