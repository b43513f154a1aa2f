import type { ProviderDefinition } from '../../runtime/types';
import { graphNotifications } from './webhooks';

/**
 * Microsoft Graph, files (OneDrive and SharePoint document libraries). Collections page with `@odata.nextLink` (a full URL, followed as is);
 * throttling is 429 or 503 with `Retry-After` in decimal seconds, and Microsoft asks
 * clients to pause every request to the tenant meanwhile (the account throttle does).
 */
export const oneDriveProvider: ProviderDefinition = {
  name: 'one-drive',
  displayName: 'OneDrive (Microsoft Graph)',
  docs: 'https://learn.microsoft.com/en-us/graph/api/resources/onedrive',
  categories: ['storage'],
  authMode: 'OAUTH2',
  baseUrl: 'https://graph.microsoft.com',
  // Where `/content` redirects to (a pre-authenticated download URL on the
  // SharePoint / OneDrive file hosts). The proxy follows it without the bearer token. Upload
  // session URLs are on the SharePoint hosts too, or on `*.up.1drv.com` for consumer
  // OneDrive; upload-file sends them no bearer token either.
  allowedHosts: ['sharepoint.com', 'files.1drv.com', 'livefilestore.com', 'up.1drv.com'],
  verify: { method: 'GET', endpoint: '/v1.0/me' },
  webhooks: graphNotifications,
  oauth: {
    authorizationUrl: 'https://login.microsoftonline.com/{tenant}/oauth2/v2.0/authorize',
    tokenUrl: 'https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token',
    defaultTenant: 'common',
    defaultScopes: ['offline_access', 'Files.Read.All', 'User.Read'],
    pkce: true,
    // The Microsoft identity platform's scope rules (docs/providers/onedrive.md, "Scopes"):
    // `.default` cannot be combined with explicit permission scopes,
    // and without `offline_access` no refresh token is issued, so it is added. Bare
    // permission names are Graph's.
    scopeRules: {
      neutral: ['openid', 'profile', 'email', 'offline_access'],
      exclusive: { suffix: '.default', meaning: 'the permissions granted organization-wide' },
      required: [
        {
          scope: 'offline_access',
          warning: 'offline_access was added: without it Microsoft issues no refresh token and the connection would stop working within the hour.',
        },
      ],
      implicitPrefix: 'https://graph.microsoft.com/',
    },
    // The SharePoint team-site token for the file picker:
    // SharePoint accepts only tokens for its own host, and a SharePoint `.default` cannot
    // share a token request with Graph scopes, so it takes a second refresh-token grant.
    // Graph names the tenant's host. Read by actions/team-site-token.ts.
    extraTokens: [
      {
        name: 'teamsite',
        whenScopeGranted: 'Sites.Read.All',
        resourceHost: { endpoint: '/v1.0/sites/root', path: 'siteCollection.hostname' },
        scope: '{resource}/.default',
      },
    ],
    // AADSTS codes: clients branch on them, never on the description's text.
    errorCodes: {
      prefix: 'AADSTS',
      adminConsentRequired: {
        codes: [90094, 65001, 90095],
        next: 'Ask an administrator of your Microsoft organization to grant consent for the organization (or pre-authorize these permissions for the app), then connect again.',
      },
      accessDenied: [65004],
    },
    refreshMarginMs: 15 * 60_000,
  },
  pagination: { type: 'link', linkPathInResponseBody: '@odata.nextLink', responsePath: 'value' },
  throttle: { kind: 'retry-after', statuses: [429, 503], defaultWaitMs: 5_000 },
  retries: 3,
  requestIdHeader: 'request-id',
};
