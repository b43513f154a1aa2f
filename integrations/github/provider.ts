import type { ProviderDefinition } from '../../runtime/types';
import { githubWebhooks } from './webhooks';

/**
 * GitHub's REST API as a GitHub App installation. Link-header
 * pagination at 100 per page; every response reports the budget in `x-ratelimit-*`, so
 * the runtime slows down near zero and waits for the reset once it is used up; secondary
 * limits are recognised by `retry-after` or their message.
 */
export const githubProvider: ProviderDefinition = {
  name: 'github',
  displayName: 'GitHub',
  docs: 'https://docs.github.com/en/rest',
  categories: ['dev-tools'],
  authMode: 'APP',
  authModes: ['APP', 'OAUTH2'],
  baseUrl: 'https://api.github.com',
  // Release asset uploads, and where archive and asset downloads redirect (followed by the
  // proxy without credentials, which go to the API's own origin only).
  allowedHosts: ['uploads.github.com', 'codeload.github.com', 'objects.githubusercontent.com'],
  defaultHeaders: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
  app: {
    accessTokenEndpoint: '/app/installations/{installation_id}/access_tokens',
    refreshMarginMs: 5 * 60_000,
    // `{ total_count, installations: [{ id, ... }] }`, Link pagination.
    userInstallations: { endpoint: '/user/installations', responsePath: 'installations' },
  },
  verify: { method: 'GET', endpoint: '/installation/repositories', params: { per_page: 1 } },
  webhooks: githubWebhooks,
  // OAuth App mode: user tokens from the web flow; they do not expire.
  // The same endpoints redeem the App's own user-authorization code (install verification).
  oauth: {
    authorizationUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    defaultScopes: ['repo', 'read:user'],
    pkce: true,
    refreshMarginMs: 15 * 60_000,
    verify: { method: 'GET', endpoint: '/user' },
    // GitHub's form for a new OAuth App: a name of at most 34 characters and a homepage URL
    // (docs/providers/github.md, "Registering an OAuth App").
    registration: { appNameMaxLength: 34, homepageUrlRequired: true },
  },
  pagination: { type: 'link', linkRelInResponseHeader: 'next', limitNameInRequest: 'per_page', limit: 100 },
  throttle: {
    kind: 'rate-limit-headers',
    statuses: [403, 429],
    remainingHeader: 'x-ratelimit-remaining',
    resetHeader: 'x-ratelimit-reset',
    slowDownBelow: 100,
    secondaryDefaultWaitMs: 60_000,
    secondaryMessage: /secondary rate limit/i,
  },
  retries: 3,
  requestIdHeader: 'x-github-request-id',
};
