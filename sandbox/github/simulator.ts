/**
 * A deterministic local simulator of the GitHub REST API as a GitHub App sees it:
 * App JWTs, installation access tokens, installation repositories,
 * pull requests and their commits, Link pagination, primary and secondary rate limits.
 *
 * Request pipeline (in this order):
 *   1. failNext() injections answer first (any path, any credentials; not counted).
 *   2. No User-Agent → 403; unsupported X-GitHub-Api-Version → 400 (not counted).
 *   3. Authentication for the matched route (unknown paths are treated as installation
 *      routes, so bad credentials still get 401 there): JWT errors, Bad credentials,
 *      "Requires authentication", a JWT on an installation route → 403.
 *   4. Primary rate limit of the caller's bucket (installation / App / unauthenticated):
 *      exhausted → 403 or 429 with x-ratelimit-remaining: 0 (used stays at the limit).
 *   5. Secondary limit injections → 403 or 429, with or without retry-after (these do
 *      count: x-ratelimit-remaining stays above 0, which is how clients tell them apart).
 *   6. The request counts; the route answers (404 for an unknown path or an invisible
 *      repository, 422 for invalid parameters). A matching If-None-Match gives a free 304.
 * `GET /rate_limit` skips 4–5 and never counts. Every answer carries the x-ratelimit-*
 * headers of the caller's bucket and an x-github-request-id; the response is then delayed
 * by the current latency.
 *
 * Callers: App JWT (bucket "app"), installation tokens `ghs_` (one bucket per installation),
 * OAuth App tokens `gho_` (one bucket per user, shared by all that user's tokens; they may
 * call `GET /user`, `GET /user/repos` and the repository routes for public repositories and
 * their user's own, private ones only with the `repo` scope; answers carry `x-oauth-scopes`),
 * GitHub App user tokens `ghu_` (the same user bucket; 8 hours; private repositories only
 * where an installation reaches; they alone may call `GET /user/installations`, which lists
 * the App's installations on the user's account and their organizations', `{total_count,
 * installations}` with Link pagination), anonymous (60/h).
 *
 * The App's webhook (webhooks.ts; `setAppWebhook` or the `webhook` option): while set, every
 * change made by the control methods or `PATCH /repos/{o}/{r}/pulls/{n}` is POSTed to it in
 * the background with plain fetch, as github.com does: `pull_request` and
 * `installation_repositories` deliveries, GitHub's headers and HMAC signatures, one repository's
 * deliveries in order, a failure recorded and never retried (`redeliver` repeats one).
 *
 * github.com on the same host (web/, oauth.ts). These answer HTML (or the
 * token endpoint's form/JSON), without rate-limit headers or the User-Agent rule; failNext
 * and latency apply to them too. Sessions are a cookie `ghsim_session_<port>`.
 *   GET  /login?return_to=/path[&login=][&client_id=]  sign-in form: inputs `login` (label
 *        "Username or email address") and `password` ("Password"), hidden `return_to`,
 *        button "Sign in"; POSTs to /session. Wrong credentials: the form again with
 *        "Incorrect username or password." (role=alert). GET|POST /logout signs out.
 *   GET  /login/oauth/authorize?client_id&redirect_uri&scope&state&login&allow_signup
 *        &prompt=select_account&code_challenge&code_challenge_method=S256
 *        unknown client_id → 404 page; redirect_uri not the registered callback or below it
 *        (loopback callbacks: any port) → 302 to the *registered callback* with
 *        error=redirect_uri_mismatch&error_description&error_uri&state; a PKCE method other
 *        than S256 → 302 error=invalid_request; not signed in (or prompt=select_account) →
 *        302 /login?return_to=…; scopes already granted to the app → 302 with a code at once
 *        (option rememberOAuthGrants); else the page "Authorize {app}": the scopes listed
 *        (li[data-scope]) and one form POST /login/oauth/authorize with hidden
 *        `authorize_request` and buttons "Authorize {app name}" (authorize=1) / "Cancel"
 *        (authorize=0). Authorize → 302 {redirect_uri}?code=<20 hex>&state=…; Cancel → 302
 *        ?error=access_denied&error_description&error_uri&state.
 *   POST /login/oauth/access_token  client_id, client_secret, code, redirect_uri,
 *        code_verifier (query, form or JSON body). Always HTTP 200: form-encoded
 *        `access_token=gho_…&scope=a%2Cb&token_type=bearer`, or JSON with Accept:
 *        application/json; errors {error, error_description, error_uri}:
 *        incorrect_client_credentials, bad_verification_code (wrong, used, expired after 10
 *        minutes of the clock, or a PKCE mismatch), redirect_uri_mismatch.
 *   GET  /apps/{slug}  the App's public page (JSON clients get the API's 404 instead) with an
 *        "Install" link; GET /apps/{slug}/installations/new[?state=…] → sign-in, then
 *        "Install {app name}": radios `repository_selection` = all ("All repositories") |
 *        selected ("Only select repositories"), checkboxes `repository_ids` (labelled with
 *        the full names), hidden `install_request`, buttons "Install" (action=install) and
 *        "Cancel" (action=cancel), POSTing to /apps/{slug}/installations. Install creates the
 *        installation on the signed-in user's account (or updates its repository selection)
 *        → 302 {setupUrl}?installation_id=…&setup_action=install|update[&state=…], or a page
 *        with span[data-installation-id] when no Setup URL is set. With the App setting
 *        "Request user authorization (OAuth) during installation" (app.requestOAuthOnInstall)
 *        the Setup URL is unused: → 302 {first callback URL}?code=…&installation_id=…
 *        &setup_action=…[&state=…]; the code is redeemed at the token endpoint with the App's
 *        client id and secret for a `ghu_` user token (expires_in 28800) and a `ghr_` refresh
 *        token (grant_type=refresh_token, single use). Cancel → a page, no redirect.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { z } from 'zod';
import { Rng } from '../shared/prng';
import { SimulatorHost } from '../shared/simulator-host';
import { looksLikeJwt, loadOrCreateAppKeys, TokenStore, verifyAppJwt, JWT_NOT_DECODED, type AuthError } from './auth';
import { commitCount, DATA_END_MS, makeOwnerAccount, seedKey } from './data';
import { OAuthState } from './oauth';
import type { WebhookDeliveryRecord } from '../shared/webhook-sender';
import {
  GitHubOAuthAppOptionSchema,
  GitHubSimulatorOptionsSchema,
  GitHubUserOptionSchema,
  type GitHubAppWebhook,
  type GitHubOAuthAppOptions,
  type GitHubSimulatorOptions,
  type GitHubUserOptions,
  type ResolvedGitHubSimulatorOptions,
} from './options';
import { RateLimiter, type RateSnapshot } from './rate-limit';
import {
  API_VERSIONS,
  DEFAULT_API_VERSION,
  commitJson,
  installationJson,
  pullSimpleJson,
  repoJson,
  type ApiVersion,
  type AppInfo,
  type RenderContext,
} from './render';
import { DOCS, githubError, type Reply } from './responses';
import { createRoutes, matchRoute, type Route, type Viewer } from './routes';
import type { PullSort, PullState } from './store';
import { GitHubStore } from './store';
import type { GitHubCommitJson, GitHubInstallationJson, GitHubPullRequestJson, GitHubRepositoryJson } from './types';
import { UserDirectory } from './users';
import { createWebFlows, type WebReply } from './web/flows';
import { messagePage } from './web/pages';
import { GitHubWebhooks, snapshotPull } from './webhooks';

// ---------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------

export interface GitHubRequestLogEntry {
  /** Arrival time, epoch ms from the simulator clock. */
  at: number;
  method: string;
  path: string;
  /** Query parameters (repeated ones as arrays); anything that looks like a credential is redacted. */
  query: Record<string, string | string[]>;
  /**
   * Body parameters of github.com form/JSON POSTs (sign-in, authorize, token exchange,
   * install), redacted like `query`: code, client_secret, code_verifier, password, tokens.
   */
  form?: Record<string, string | string[]>;
  status: number;
  /** The installation whose token made the request (or whose token was minted). */
  installationId?: number;
  /** The user whose OAuth token made the request. */
  user?: string;
}

export interface GitHubSimulatorStats {
  /** All requests received (any status). */
  requests: number;
  byStatus: Record<number, number>;
  /** Answers of the primary rate limiter (403/429 with x-ratelimit-remaining: 0). */
  primaryLimited: number;
  /** Answers of `triggerSecondaryLimit` injections. */
  secondaryLimited: number;
  /**
   * Requests (other than GET /rate_limit) that arrived while their bucket had 0 remaining.
   * A client that watches x-ratelimit-remaining makes none; one that stops at its first
   * 403/429 makes exactly one per exhaustion; anything above that is a client hammering.
   */
  requestsWhileExhausted: number;
  tokensIssued: number;
  /** Authorization codes issued (approved authorize pages and remembered grants). */
  oauthAuthorizations: number;
  /** Successful `POST /login/oauth/access_token` exchanges (a `gho_` token issued). */
  oauthTokenExchanges: number;
  /** Failed exchanges (answered 200 with an `error`). */
  oauthTokenExchangeErrors: number;
  /** Installations created on the install page (setup_action=install). */
  installationsCreated: number;
  /** Existing installations changed on the install page (setup_action=update). */
  installationsUpdated: number;
}

export interface GitHubUserInfo {
  login: string;
  id: number;
  name: string;
  email: string | null;
  /** The App's installation on the user's account, or null. */
  installationId: number | null;
  /** Full names of the repositories the user owns. */
  repositories: string[];
}

export interface GitHubPullListParams {
  state?: PullState;
  sort?: PullSort;
  direction?: 'asc' | 'desc';
}

export interface GitHubSimulator {
  /** Starts listening on 127.0.0.1 (port 0 = any free port); resolves with `http://127.0.0.1:PORT`. */
  start(port?: number): Promise<string>;
  stop(): Promise<void>;
  /** Base URL while started, else null. */
  readonly url: string | null;
  readonly options: Readonly<ResolvedGitHubSimulatorOptions>;
  /** The App's private key, PKCS#1 PEM (`-----BEGIN RSA PRIVATE KEY-----`), as GitHub hands it out. */
  readonly appPrivateKeyPem: string;
  /**
   * The GitHub App. `publicLink` is its public page, `{base}/apps/{slug}` while started
   * (`https://github.com/apps/{slug}` before); the install page is `{publicLink}/installations/new`.
   */
  readonly app: Readonly<{ id: number; clientId: string; clientSecret: string; slug: string; name: string; publicLink: string }>;

  // Control
  /** The next `n` requests (any path, any credentials) answer `status` (default 500). */
  failNext(n: number, status?: number): void;
  setLatency(ms: number): void;
  /**
   * The next `n` counted requests hit a secondary rate limit: `status` 403 (default) or 429,
   * `retry-after: retryAfterSeconds` (default 60; null = no retry-after header).
   */
  triggerSecondaryLimit(n: number, opts?: { retryAfterSeconds?: number | null; status?: 403 | 429 }): void;
  /** Changes the primary limit / window length (open windows keep their reset time). */
  setRateLimit(next: { limit?: number; windowMs?: number }): void;
  /** Uses up an installation's budget now; it resets `resetInMs` from now. */
  exhaustRateLimit(installationId: number, opts: { resetInMs: number }): void;
  /** Forgets every rate-limit window (stats are kept). */
  resetRateLimits(): void;
  /** Opens `n` pull requests now; returns their numbers. */
  addPullRequests(fullName: string, n: number): number[];
  /**
   * New activity now on `count` seeded-random pull requests or the given numbers: updated_at
   * moves to now; an open one may also be merged, closed or retitled, a closed one reopened.
   */
  updatePullRequests(fullName: string, countOrNumbers: number | readonly number[]): number[];
  /** Pushes `n` commits (dated now) to an open pull request; returns its new commit count. */
  addCommits(fullName: string, number: number, n: number): number;
  /** The repository leaves its installation: gone from listings, every route of it 404s. */
  removeRepository(fullName: string): void;
  /** A repository joins the installation (seeded, with `pullsPerRepo` pull requests up to now); returns its full name. */
  addRepository(installationId: number, name?: string): string;
  /** Every installation token issued so far stops working (401 Bad credentials). */
  expireTokens(): void;

  // The App's webhook (github.com → the App's Webhook URL)
  /**
   * The App's "Webhook URL" and "Webhook secret" (null: inactive, nothing is sent). While set,
   * every change is POSTed there in the background: `addPullRequests` → `pull_request`
   * `opened`; `updatePullRequests` and `PATCH /repos/{o}/{r}/pulls/{n}` → `edited` (title, body,
   * base; with `changes`), `ready_for_review`, `closed` (merged or not) or `reopened`;
   * `addCommits` → `synchronize`; `addRepository` / `removeRepository` →
   * `installation_repositories` `added` / `removed`. Only repositories the installation sees.
   */
  setAppWebhook(webhook: GitHubAppWebhook | null): void;
  /** Every delivery attempt so far, oldest first (a redelivery is a further attempt of the same id). */
  webhookDeliveries(): WebhookDeliveryRecord[];
  /** Resolves when every delivery queued so far has been answered (or has failed). */
  flushWebhooks(): Promise<void>;
  /** Sends a delivery again, as GitHub's "Redeliver" button: same X-GitHub-Delivery, headers and body. */
  redeliver(deliveryId: string): void;

  // github.com: users, OAuth Apps, the App's install page
  /** A user who can sign in; their account gets seeded repositories. Returns the account id. */
  addUser(user: GitHubUserOptions): { login: string; id: number };
  /** Registers an OAuth App, or replaces the one with the same clientId. */
  registerOAuthApp(app: GitHubOAuthAppOptions): void;
  /** The App's Setup URL (null: the install page ends on a plain "installed" page). */
  setAppSetupUrl(url: string | null): void;
  /**
   * The App's user authorization: its callback URLs and "Request user authorization (OAuth)
   * during installation" (which needs a callback URL). Fields left out keep their value.
   */
  configureAppUserAuthorization(settings: { callbackUrls?: string[]; requestOAuthOnInstall?: boolean }): void;
  /** One OAuth token stops working (401 Bad credentials); true when it was live. */
  revokeOAuthToken(token: string): boolean;
  /**
   * The user revokes an OAuth App (or every app) in their settings: all those tokens stop
   * working and the grant is forgotten, so the next authorize shows the page again.
   * Returns how many live tokens were revoked.
   */
  revokeOAuthAuthorization(login: string, clientId?: string): number;
  /** Uses up a user's budget (shared by all their OAuth tokens) now; it resets `resetInMs` from now. */
  exhaustUserRateLimit(login: string, opts: { resetInMs: number }): void;
  /** Signs every browser out of the simulated github.com. */
  clearSessions(): void;

  // Inspection (API URLs inside bodies use the simulator's URL while started)
  installations(): GitHubInstallationJson[];
  users(): GitHubUserInfo[];
  /** Repositories as `GET /installation/repositories` shows them (one installation or all). */
  repositories(installationId?: number): GitHubRepositoryJson[];
  /**
   * Pull requests in the list endpoint's shape; the same parameters and defaults as the
   * endpoint except `state`, which defaults to `all`.
   */
  pullRequests(fullName: string, params?: GitHubPullListParams): GitHubPullRequestJson[];
  /** Every commit of a pull request, oldest first, even beyond the endpoint's 250 cap. */
  commits(fullName: string, number: number): GitHubCommitJson[];
  stats(): GitHubSimulatorStats;
  requestLog(): GitHubRequestLogEntry[];
  /** Clears the request log and the stats (not the rate-limit state). */
  resetStats(): void;
}

// ---------------------------------------------------------------------------------------
// Simulator
// ---------------------------------------------------------------------------------------

const USER_AGENT_MESSAGE =
  'Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.';
const ANONYMOUS_KEY = 'anonymous';
const APP_KEY = 'app';
const MAX_BODY_BYTES = 1 << 20;

type Credential = { kind: 'none' } | { kind: 'jwt'; value: string } | { kind: 'token'; value: string } | { kind: 'malformed' };

function parseAuthorization(header: string | undefined): Credential {
  if (header === undefined || header.trim() === '') return { kind: 'none' };
  const m = /^\s*(bearer|token)\s+(\S+)\s*$/i.exec(header);
  if (!m) return { kind: 'malformed' };
  return looksLikeJwt(m[2]) ? { kind: 'jwt', value: m[2] } : { kind: 'token', value: m[2] };
}

function installationKey(id: number): string {
  return `installation:${id}`;
}

/** A user's bucket: shared by every OAuth token of that user. */
function userKey(accountId: number): string {
  return `user:${accountId}`;
}

/** Parameter names whose values never reach the request log. */
const APP_CALLBACK_URLS = z.array(z.url({ protocol: /^https?$/ })).max(10);

const SECRET_PARAMS = new Set(['code', 'client_secret', 'code_verifier', 'password', 'access_token', 'refresh_token', 'token', 'device_code']);

function failureBody(status: number): unknown {
  if (status === 503) return { code: 'service_unavailable', message: 'Service Unavailable', documentation_url: DOCS.rest };
  return { message: status >= 500 ? 'Server Error' : (http.STATUS_CODES[status] ?? 'Error'), documentation_url: DOCS.rest, status: String(status) };
}

export function createGitHubSimulator(options: GitHubSimulatorOptions = {}): GitHubSimulator {
  const opts = GitHubSimulatorOptionsSchema.parse(options);
  const clock = opts.now ?? Date.now;
  const seedK = seedKey(opts.seed);
  const keys = loadOrCreateAppKeys(opts.privateKeyPem);

  const app: AppInfo = {
    id: opts.app.id,
    clientId: opts.app.clientId ?? 'Iv1.' + Rng.from(seedK, 'client-id').hex(16),
    slug: opts.app.slug,
    name: opts.app.name,
    owner: makeOwnerAccount(seedK, 'weft-sandbox-apps', 'Organization'),
    createdMs: Date.UTC(2022, 8, 1) + Rng.from(seedK, 'app-created').int(0, 200) * 86_400_000,
  };
  const store = new GitHubStore({
    seedK,
    installations: opts.installations,
    users: opts.users,
    pullsPerRepo: opts.pullsPerRepo,
    commitsPerPull: opts.commitsPerPull,
    oversizedPulls: opts.oversizedPulls,
  });
  const tokens = new TokenStore(seedK);
  const users = new UserDirectory(seedK);
  for (const u of opts.users) users.add(u, store.owner(u.login)!.account);
  const oauth = new OAuthState(seedK);
  for (const a of opts.oauthApps) oauth.register(a);
  let appCallbackUrls = [...opts.app.callbackUrls];
  let requestOAuthOnInstall = opts.app.requestOAuthOnInstall;
  const registerAppOAuth = () =>
    oauth.registerGitHubApp({
      clientId: app.clientId,
      clientSecret: opts.app.clientSecret,
      name: app.name,
      homepageUrl: `https://github.com/apps/${app.slug}`,
      callbackUrls: appCallbackUrls,
    });
  registerAppOAuth();
  let setupUrl: string | null = opts.setupUrl;
  const limiter = new RateLimiter({ limit: opts.rateLimit.limit, windowMs: opts.rateLimit.windowMs });
  // Unauthenticated callers (and bad credentials) share GitHub's 60/hour per-IP budget.
  limiter.defineFixed(ANONYMOUS_KEY, { limit: 60, windowMs: 3_600_000 });

  let secondaryRemaining = 0;
  let secondaryStatus: 403 | 429 = 403;
  let secondaryRetryAfter: number | null = 60;
  let requestCounter = 0;

  let log: GitHubRequestLogEntry[] = [];
  let byStatus: Record<number, number> = {};
  let primaryLimited = 0;
  let secondaryLimited = 0;
  let requestsWhileExhausted = 0;
  let tokensIssued = 0;
  let oauthAuthorizations = 0;
  let oauthTokenExchanges = 0;
  let oauthTokenExchangeErrors = 0;
  let installationsCreated = 0;
  let installationsUpdated = 0;

  const host = new SimulatorHost('GitHub', (req, res) => handle(req, res), opts.latencyMs);
  const webhooks = new GitHubWebhooks({ seedK, app, store, clock, render: () => render() });
  webhooks.configure(opts.webhook);

  const routes: Route[] = createRoutes({
    store,
    tokens,
    app,
    limiter,
    tokenTtlMs: () => opts.tokenTtlMs,
    onTokenIssued: () => {
      tokensIssued++;
    },
    onPullEdited: (before, pull, viewer) => {
      const sender = viewer.kind === 'user' ? viewer.user.account : webhooks.bot;
      webhooks.pullChanged(before, pull, sender);
    },
  });

  function apiBase(): string {
    return host.url ?? 'https://api.github.com';
  }

  const web = createWebFlows({
    oauth,
    users,
    store,
    app,
    setupUrl: () => setupUrl,
    installAuthorizationUrl: () => (requestOAuthOnInstall ? (appCallbackUrls[0] ?? null) : null),
    rememberGrants: () => opts.rememberOAuthGrants,
    events: {
      authorized: () => {
        oauthAuthorizations++;
      },
      exchanged: (ok) => {
        if (ok) oauthTokenExchanges++;
        else oauthTokenExchangeErrors++;
      },
      installed: (created) => {
        if (created) installationsCreated++;
        else installationsUpdated++;
      },
    },
  });

  /** Deterministic ids in GitHub's `XXXX:XXXXX:XXXXXXX:XXXXXXX:XXXXXXXX` shape. */
  function nextRequestId(): string {
    const rng = Rng.from(seedK, 'request-id', requestCounter++);
    return [rng.hex(4), rng.hex(5), rng.hex(7), rng.hex(7), rng.hex(8)].join(':').toUpperCase();
  }

  // ---- request handling ----------------------------------------------------------------

  interface Decision {
    reply: Reply;
    rateKey: string;
    installationId?: number;
    /** The user whose OAuth token made the request, that token's scopes and which kind of app issued it. */
    user?: { login: string; scopes: readonly string[]; via: 'oauth-app' | 'github-app' };
    route?: Route;
    version: ApiVersion;
  }

  function decide(req: http.IncomingMessage, method: string, url: URL, body: string, now: number, requestId: string): Decision {
    const path = url.pathname;
    const matched = matchRoute(routes, method, path);
    const route = matched?.route;
    const cred = parseAuthorization(typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined);

    // Who is calling, and whose rate-limit bucket the answer reports.
    let viewer: Viewer = { kind: 'anonymous' };
    let badCredentials = false;
    let jwtError: AuthError | null = null;
    if (cred.kind === 'token') {
      const rec = tokens.lookup(cred.value, now);
      const grant = rec ? undefined : oauth.lookup(cred.value, now);
      const user = grant ? users.get(grant.login) : undefined;
      if (rec) viewer = { kind: 'installation', installationId: rec.installationId, token: rec };
      else if (grant && user) viewer = { kind: 'user', user, scopes: grant.scopes, via: grant.kind };
      else badCredentials = true;
    } else if (cred.kind === 'jwt') {
      jwtError = verifyAppJwt(cred.value, app, keys.publicKey, now);
      if (!jwtError) viewer = { kind: 'app' };
    } else if (cred.kind === 'malformed') {
      badCredentials = true;
    }
    const rateKey =
      viewer.kind === 'installation'
        ? installationKey(viewer.installationId)
        : viewer.kind === 'user'
          ? userKey(viewer.user.account.id)
          : viewer.kind === 'app'
            ? APP_KEY
            : ANONYMOUS_KEY;
    const installationId =
      viewer.kind === 'installation'
        ? viewer.installationId
        : viewer.kind === 'app' && route?.method === 'POST' && matched
          ? Number(matched.params[0])
          : undefined;
    const counts = route ? route.counts : true;
    if (counts && limiter.snapshot(rateKey, now).remaining === 0) requestsWhileExhausted++;

    const versionHeader = req.headers['x-github-api-version'];
    const requested = typeof versionHeader === 'string' ? versionHeader.trim() : undefined;
    const version: ApiVersion = (API_VERSIONS as readonly string[]).includes(requested ?? '') ? (requested as ApiVersion) : DEFAULT_API_VERSION;
    const user = viewer.kind === 'user' ? { login: viewer.user.login, scopes: viewer.scopes, via: viewer.via } : undefined;
    const base = { rateKey, installationId, user, route, version };

    // 1. Injected failures.
    const failStatus = host.takeFailure();
    if (failStatus !== null) return { ...base, reply: { status: failStatus, body: failureBody(failStatus) } };
    // 2. Request hygiene.
    const ua = req.headers['user-agent'];
    if (typeof ua !== 'string' || ua.trim() === '') return { ...base, reply: githubError(403, USER_AGENT_MESSAGE, DOCS.userAgent) };
    if (requested !== undefined && requested !== '' && !(API_VERSIONS as readonly string[]).includes(requested)) {
      const supported = [...API_VERSIONS]
        .reverse()
        .map((v, i) => `"${v}"${i === 0 ? ' (most recent)' : ''}`)
        .join(', ');
      return {
        ...base,
        reply: githubError(
          400,
          `The version you specified in the "X-GitHub-Api-Version" request header, "${requested}", is not a supported version. The following versions are currently supported: ${supported}.`,
          DOCS.rest,
        ),
      };
    }
    // 3. Authentication (auth failures count against the unauthenticated budget, never blocked).
    const authFail = (reply: Reply): Decision => {
      if (counts) limiter.consume(rateKey, now);
      return { ...base, reply };
    };
    const docs = route?.docs ?? DOCS.rest;
    if (route?.auth === 'app') {
      if (cred.kind !== 'jwt') return authFail(githubError(401, JWT_NOT_DECODED, DOCS.rest));
      if (jwtError) return authFail(githubError(jwtError.status, jwtError.message, jwtError.documentationUrl));
    } else if (route?.auth === 'user') {
      if (badCredentials || jwtError) return authFail(githubError(401, 'Bad credentials', DOCS.rest));
      if (viewer.kind === 'anonymous') return authFail(githubError(401, 'Requires authentication', docs));
      if (viewer.kind !== 'user') return authFail(githubError(403, 'Resource not accessible by integration', docs));
    } else {
      if (badCredentials || jwtError) return authFail(githubError(401, 'Bad credentials', DOCS.rest));
      if (viewer.kind === 'app' && route && route.auth !== 'any') {
        return authFail(githubError(403, route?.jwtForbidden ?? 'Resource not accessible by integration', docs));
      }
      if (viewer.kind === 'anonymous' && route?.requiresAuth) return authFail(githubError(401, 'Requires authentication', docs));
    }
    // 4–5. Rate limits.
    if (counts) {
      const snap = limiter.snapshot(rateKey, now);
      if (snap.remaining === 0) {
        primaryLimited++;
        const who =
          viewer.kind === 'installation'
            ? `installation ID ${viewer.installationId}.`
            : viewer.kind === 'user'
              ? `user ID ${viewer.user.account.id}.`
              : viewer.kind === 'app'
                ? `app ID ${app.id}.`
                : `127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)`;
        const status = opts.rateLimit.exhaustedStatus;
        return { ...base, reply: githubError(status, `API rate limit exceeded for ${who}`, DOCS.primaryLimit) };
      }
      limiter.consume(rateKey, now);
      if (secondaryRemaining > 0) {
        secondaryRemaining--;
        secondaryLimited++;
        const headers: Record<string, string> = {};
        if (secondaryRetryAfter !== null) headers['retry-after'] = String(secondaryRetryAfter);
        return {
          ...base,
          reply: githubError(
            secondaryStatus,
            `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
            DOCS.secondaryLimit,
            headers,
          ),
        };
      }
    }
    // 6. The route.
    if (!matched) return { ...base, reply: githubError(404, 'Not Found', DOCS.rest) };
    const render: RenderContext = { api: apiBase(), version };
    let reply: Reply;
    try {
      reply = matched.route.handle({ nowMs: now, path, query: url.searchParams, body, params: matched.params, viewer, render, rateKey });
    } catch (err) {
      reply = githubError(500, `Server Error: ${(err as Error).message}`, DOCS.rest);
    }
    // Conditional requests: a 304 carries no body and does not count (GitHub's rule).
    if (reply.status === 200 && method === 'GET') {
      const etag = `W/"${crypto.createHash('sha256').update(JSON.stringify(reply.body)).digest('hex')}"`;
      reply.headers = { ...reply.headers, etag, 'cache-control': 'private, max-age=60, s-maxage=60' };
      if (route?.acceptedPermissions) reply.headers['x-accepted-github-permissions'] = route.acceptedPermissions;
      const inm = req.headers['if-none-match'];
      if (typeof inm === 'string' && inm.split(',').some((t) => t.trim() === etag || t.trim() === etag.slice(2))) {
        if (counts) limiter.refund(rateKey, now);
        reply = { status: 304, headers: reply.headers };
      }
    }
    return { ...base, reply };
  }

  function rateHeaders(snap: RateSnapshot): Record<string, string> {
    return {
      'x-ratelimit-limit': String(snap.limit),
      'x-ratelimit-remaining': String(snap.remaining),
      'x-ratelimit-reset': String(snap.reset),
      'x-ratelimit-used': String(snap.used),
      'x-ratelimit-resource': 'core',
    };
  }

  function redactedQuery(params: URLSearchParams): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    const looksSecret = (v: string) => /^gh[opsur]_/.test(v) || looksLikeJwt(v) || tokens.isIssued(v) || oauth.isIssued(v);
    for (const name of new Set(params.keys())) {
      const secretName = SECRET_PARAMS.has(name.toLowerCase());
      const values = params.getAll(name).map((v) => (secretName || looksSecret(v) ? '[redacted]' : v));
      out[name] = values.length === 1 ? values[0] : values;
    }
    return out;
  }

  function record(entry: GitHubRequestLogEntry): void {
    log.push(entry);
    byStatus[entry.status] = (byStatus[entry.status] ?? 0) + 1;
  }

  /** github.com pages and the token endpoint: no rate-limit headers, HTML or form/JSON bodies. */
  function respondWeb(req: http.IncomingMessage, res: http.ServerResponse, method: string, url: URL, body: string, now: number, requestId: string): void {
    const failStatus = host.takeFailure();
    let reply: WebReply;
    if (failStatus !== null) {
      const title = failStatus >= 500 ? 'Server Error' : (http.STATUS_CODES[failStatus] ?? 'Error');
      reply =
        url.pathname === '/login/oauth/access_token'
          ? { status: failStatus, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(failureBody(failStatus)) }
          : {
              status: failStatus,
              headers: { 'content-type': 'text/html; charset=utf-8' },
              body: messagePage({ title, text: 'Something went wrong (injected failure).' }),
            };
    } else {
      reply = web.handle({ method, url, headers: req.headers, body, nowMs: now, base: host.url ?? 'http://127.0.0.1' });
    }
    const entry: GitHubRequestLogEntry = { at: now, method, path: url.pathname, query: redactedQuery(url.searchParams), status: reply.status };
    if (reply.form && [...reply.form.keys()].length) entry.form = redactedQuery(reply.form);
    record(entry);
    const headers: Record<string, string | string[]> = { 'x-github-request-id': requestId, ...reply.headers };
    headers['content-length'] = String(Buffer.byteLength(reply.body));
    host.respondAfter(() => {
      if (res.writableEnded || res.destroyed) return;
      res.writeHead(reply.status, headers);
      res.end(reply.body);
    });
  }

  function respond(req: http.IncomingMessage, res: http.ServerResponse, body: string, now: number): void {
    const method = (req.method ?? 'GET').toUpperCase();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://127.0.0.1');
    } catch {
      url = new URL('http://127.0.0.1/');
    }
    const requestId = nextRequestId();
    if (web.isWebRequest(method, url.pathname, req.headers)) {
      respondWeb(req, res, method, url, body, now, requestId);
      return;
    }
    const d = decide(req, method, url, body, now, requestId);
    const snap = limiter.snapshot(d.rateKey, now);
    const headers: Record<string, string> = {
      ...rateHeaders(snap),
      'x-github-request-id': requestId,
      'x-github-api-version-selected': d.version,
      'x-github-media-type': 'github.v3; format=json',
      vary: 'Accept, Authorization, Cookie, X-GitHub-OTP, Accept-Encoding',
      ...d.reply.headers,
    };
    // GitHub tells OAuth App token callers which scopes their token has (App user tokens have none).
    if (d.user?.via === 'oauth-app') headers['x-oauth-scopes'] = d.user.scopes.join(', ');
    let payload: string | undefined;
    if (d.reply.body !== undefined && d.reply.status !== 304) {
      payload = JSON.stringify(d.reply.body);
      headers['content-type'] = 'application/json; charset=utf-8';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }

    const entry: GitHubRequestLogEntry = { at: now, method, path: url.pathname, query: redactedQuery(url.searchParams), status: d.reply.status };
    if (d.installationId !== undefined && Number.isFinite(d.installationId)) entry.installationId = d.installationId;
    if (d.user) entry.user = d.user.login;
    record(entry);

    const send = () => {
      if (res.writableEnded || res.destroyed) return;
      res.writeHead(d.reply.status, headers);
      res.end(payload);
    };
    host.respondAfter(send);
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const now = clock();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => respond(req, res, Buffer.concat(chunks).toString('utf8'), now));
    req.on('error', () => res.destroy());
  }

  // ---- helpers for control / inspection -------------------------------------------------

  function render(): RenderContext {
    return { api: apiBase(), version: DEFAULT_API_VERSION };
  }

  function requirePull(fullName: string, number: number) {
    const repo = store.requireRepo(fullName);
    const pull = store.pull(repo, number);
    if (!pull) throw new Error(`${fullName} has no pull request #${number}`);
    return pull;
  }

  function nonNegativeInt(n: number, what: string): void {
    if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer`);
  }

  const sim: GitHubSimulator = {
    start: (port = 0) => host.start(port),
    stop: () => {
      // Deliveries under way end as errors ("aborted") rather than outlive the simulator.
      webhooks.abortAll();
      return host.stop();
    },
    get url() {
      return host.url;
    },
    options: opts,
    appPrivateKeyPem: keys.privateKeyPem,
    app: Object.freeze({
      id: app.id,
      clientId: app.clientId,
      clientSecret: opts.app.clientSecret,
      slug: app.slug,
      name: app.name,
      get publicLink() {
        return `${host.url ?? 'https://github.com'}/apps/${app.slug}`;
      },
    }),

    failNext: (n, status = 500) => host.failNext(n, status),
    setLatency: (ms) => host.setLatency(ms),
    triggerSecondaryLimit(n, o = {}) {
      nonNegativeInt(n, 'triggerSecondaryLimit: n');
      const retry = o.retryAfterSeconds === undefined ? 60 : o.retryAfterSeconds;
      if (retry !== null && (!Number.isInteger(retry) || retry < 0))
        throw new Error('triggerSecondaryLimit: retryAfterSeconds must be a non-negative integer or null');
      const status = o.status ?? 403;
      if (status !== 403 && status !== 429) throw new Error('triggerSecondaryLimit: status must be 403 or 429');
      secondaryRemaining = n;
      secondaryRetryAfter = retry;
      secondaryStatus = status;
    },
    setRateLimit(next) {
      if (next.limit !== undefined && (!Number.isInteger(next.limit) || next.limit < 1)) throw new Error('setRateLimit: limit must be a positive integer');
      if (next.windowMs !== undefined && (!Number.isFinite(next.windowMs) || next.windowMs <= 0)) throw new Error('setRateLimit: windowMs must be positive');
      limiter.configure(next);
    },
    exhaustRateLimit(installationId, o) {
      if (!store.installations.has(installationId)) throw new Error(`exhaustRateLimit: unknown installation ${installationId}`);
      if (!Number.isFinite(o.resetInMs) || o.resetInMs < 0) throw new Error('exhaustRateLimit: resetInMs must be a non-negative number');
      limiter.exhaust(installationKey(installationId), clock(), o.resetInMs);
    },
    resetRateLimits() {
      limiter.reset();
    },
    addPullRequests(fullName, n) {
      nonNegativeInt(n, 'addPullRequests: n');
      const repo = store.requireRepo(fullName);
      const numbers = store.addPulls(repo, n, clock());
      for (const number of numbers) webhooks.pullOpened(store.pull(repo, number)!);
      return numbers;
    },
    updatePullRequests(fullName, countOrNumbers) {
      const repo = store.requireRepo(fullName);
      const pulls = store.resolvePulls(repo, countOrNumbers, 'updatePullRequests');
      const before = pulls.map(snapshotPull);
      store.updatePulls(pulls, clock());
      // Merged: the merger sent it; any other change: the author.
      pulls.forEach((p, i) => webhooks.pullChanged(before[i], p, !before[i].merged && p.mergedBy ? p.mergedBy : p.author));
      return pulls.map((p) => p.number);
    },
    addCommits(fullName, number, n) {
      nonNegativeInt(n, 'addCommits: n');
      const pull = requirePull(fullName, number);
      const before = snapshotPull(pull).headSha;
      store.addCommits(pull, n, clock());
      if (n > 0) webhooks.pullSynchronized(before, pull, pull.author);
      return commitCount(pull);
    },
    removeRepository(fullName) {
      const repo = store.requireRepo(fullName);
      const inst = repo.installationId === null ? undefined : store.installations.get(repo.installationId);
      const seen = inst !== undefined && store.installationSees(inst.id, repo);
      store.removeRepository(fullName);
      if (inst && seen) webhooks.repositoriesChanged('removed', inst, [repo], webhooks.accountActor(inst));
    },
    addRepository(installationId, name) {
      const inst = store.installations.get(installationId);
      if (!inst) throw new Error(`addRepository: unknown installation ${installationId}`);
      // Its history runs up to now (never before the seeded data ends, so it stays ordered).
      const repo = store.addRepository(installationId, name, Math.max(clock(), DATA_END_MS));
      if (store.installationSees(installationId, repo)) webhooks.repositoriesChanged('added', inst, [repo], webhooks.accountActor(inst));
      return repo.fullName;
    },
    expireTokens() {
      tokens.expireAll();
    },

    setAppWebhook(webhook) {
      webhooks.configure(webhook);
    },
    webhookDeliveries: () => webhooks.deliveries(),
    flushWebhooks: () => webhooks.flush(),
    redeliver(deliveryId) {
      webhooks.redeliver(deliveryId);
    },

    addUser(input) {
      const u = GitHubUserOptionSchema.parse(input);
      if (users.get(u.login)) throw new Error(`addUser: user ${u.login} already exists`);
      const existing = store.owner(u.login);
      if (existing && existing.account.type !== 'User') throw new Error(`addUser: ${u.login} is an Organization`);
      if (!existing && store.loginTaken(u.login)) throw new Error(`addUser: login ${u.login} is taken by a generated user`);
      for (const org of u.organizations) {
        if (store.owner(org)?.account.type !== 'Organization' || store.owner(org)?.installationId == null)
          throw new Error(`addUser: ${org} is not the account of an Organization installation`);
      }
      const owner = store.addUserAccount(u.login, u.repositoryCount);
      users.add(u, owner.account);
      return { login: owner.account.login, id: owner.account.id };
    },
    registerOAuthApp(input) {
      oauth.register(GitHubOAuthAppOptionSchema.parse(input));
    },
    setAppSetupUrl(url) {
      setupUrl = url === null ? null : GitHubSimulatorOptionsSchema.shape.setupUrl.parse(url);
    },
    configureAppUserAuthorization(settings) {
      const urls = settings.callbackUrls === undefined ? appCallbackUrls : APP_CALLBACK_URLS.parse(settings.callbackUrls);
      const on = settings.requestOAuthOnInstall ?? requestOAuthOnInstall;
      if (on && urls.length === 0) throw new Error('configureAppUserAuthorization: requesting user authorization during installation needs a callback URL');
      appCallbackUrls = [...urls];
      requestOAuthOnInstall = on;
      registerAppOAuth();
    },
    revokeOAuthToken(token) {
      return oauth.revokeToken(token);
    },
    revokeOAuthAuthorization(login, clientId) {
      return oauth.revokeAuthorization(login, clientId);
    },
    exhaustUserRateLimit(login, o) {
      const user = users.get(login);
      if (!user) throw new Error(`exhaustUserRateLimit: unknown user ${login}`);
      if (!Number.isFinite(o.resetInMs) || o.resetInMs < 0) throw new Error('exhaustUserRateLimit: resetInMs must be a non-negative number');
      limiter.exhaust(userKey(user.account.id), clock(), o.resetInMs);
    },
    clearSessions() {
      web.clearSessions();
    },

    installations() {
      const ctx = render();
      return [...store.installations.values()].map((i) => installationJson(i, app, ctx) as GitHubInstallationJson);
    },
    users() {
      return users.all().map((u) => ({
        login: u.login,
        id: u.account.id,
        name: u.name,
        email: u.email,
        installationId: store.owner(u.login)?.installationId ?? null,
        repositories: store.ownedRepos(u.login).map((r) => r.fullName),
      }));
    },
    repositories(installationId) {
      const ctx = render();
      return store.visibleRepos(installationId).map((r) => repoJson(r, ctx, { openPulls: store.openPullCount(r), permissions: true }) as GitHubRepositoryJson);
    },
    pullRequests(fullName, params = {}) {
      const repo = store.requireRepo(fullName);
      const ctx = render();
      const sort = params.sort ?? 'created';
      const list = store.queryPulls(repo, {
        state: params.state ?? 'all',
        sort,
        direction: params.direction ?? (sort === 'created' ? 'desc' : 'asc'),
        nowMs: clock(),
      });
      const repoJsonCache = new Map<unknown, Record<string, unknown>>();
      const helpers = {
        repo: (r: typeof repo) => {
          let j = repoJsonCache.get(r);
          if (!j) repoJsonCache.set(r, (j = repoJson(r, ctx, { openPulls: r.fork ? 0 : store.openPullCount(r), permissions: true })));
          return j;
        },
        fork: store.fork.bind(store),
      };
      return list.map((p) => pullSimpleJson(p, ctx, helpers) as GitHubPullRequestJson);
    },
    commits(fullName, number) {
      const pull = requirePull(fullName, number);
      const ctx = render();
      return store.commits(pull).map((c) => commitJson(pull.repo, c, ctx) as GitHubCommitJson);
    },

    stats() {
      return {
        requests: log.length,
        byStatus: { ...byStatus },
        primaryLimited,
        secondaryLimited,
        requestsWhileExhausted,
        tokensIssued,
        oauthAuthorizations,
        oauthTokenExchanges,
        oauthTokenExchangeErrors,
        installationsCreated,
        installationsUpdated,
      };
    },
    requestLog() {
      return log.map((e) => ({ ...e, query: structuredClone(e.query) }));
    },
    resetStats() {
      log = [];
      byStatus = {};
      primaryLimited = 0;
      secondaryLimited = 0;
      requestsWhileExhausted = 0;
      tokensIssued = 0;
      oauthAuthorizations = 0;
      oauthTokenExchanges = 0;
      oauthTokenExchangeErrors = 0;
      installationsCreated = 0;
      installationsUpdated = 0;
    },
  };
  return sim;
}
