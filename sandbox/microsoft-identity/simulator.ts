/**
 * A deterministic local simulator of the Microsoft identity platform v2.0 (login.microsoftonline.com)
 * as Microsoft documents it: authorization code + PKCE with HTML sign-in and consent
 * pages a headless browser can drive, the token endpoint (authorization_code,
 * refresh_token), admin consent, SSO cookies, and the team-site token.
 *
 * Routes (one host; `{tenant}` = common | organizations | consumers | tenant id | domain):
 *   GET  /{tenant}/oauth2/v2.0/authorize       → sign-in / consent pages, then 302 to the app
 *   POST /{tenant}/oauth2/v2.0/token           → JSON tokens or an AADSTS error body
 *   GET  /{tenant}/v2.0/adminconsent           → admin sign-in + consent, then 302 to the app
 *   POST /{tenant}/login, POST /{tenant}/consent → the pages' forms (hidden field flowToken)
 *   GET  /{tenant}/oauth2/v2.0/logout          → ends the SSO session
 *   GET  /{tenant}/v2.0/.well-known/openid-configuration, GET /{tenant}/discovery/v2.0/keys
 *
 * Request pipeline (in this order):
 *   1. Access tokens past their expiry are announced to onAccessTokenRevoked.
 *   2. Route by path (unknown → 404). Unknown / malformed tenant → AADSTS90002 / 900023
 *      (a page on the interactive routes, JSON on the token endpoint).
 *   3. Token endpoint only: failNext() injections (the request still counts in
 *      stats().tokenRequests under its grant_type).
 *   4. The route (authorize.ts, token-endpoint.ts).
 * Every answer is logged with secrets redacted, counted, then delayed by the latency.
 * The simulator writes nothing to the console.
 */
import type http from 'node:http';
import { hash32, Rng } from '../shared/prng';
import { SimulatorHost } from '../shared/simulator-host';
import { handleAdminConsent, handleAuthorize, handleConsent, handleLogin, handleLogout } from './authorize';
import { Directory, type AppRecord, type MicrosoftIdentityApp, type MicrosoftIdentityUser, type TenantInfo, type UserRecord } from './directory';
import { aadTimestamp, type TraceIds } from './errors';
import { FlowStore } from './flows';
import { Grants, type GrantSnapshot } from './grants';
import { IdTokenSigner } from './id-token';
import {
  HostnameSchema,
  MicrosoftIdentitySimulatorOptionsSchema,
  MS_IDENTITY_DEFAULT_ADMIN_PASSWORD,
  MS_IDENTITY_DEFAULT_USER_PASSWORD,
  type AppRegistration,
  type MicrosoftIdentitySimulatorOptions,
  type ResolvedMicrosoftIdentitySimulatorOptions,
  type UserRegistration,
} from './options';
import { htmlOutcome, jsonOutcome, parseForm, readBody, type Outcome } from './responses';
import { configScope, type GrantScope } from './scopes';
import { SessionStore } from './sessions';
import { newCounters, type Counters, type IdentityState, type RequestInfo } from './state';
import { handleToken } from './token-endpoint';
import { AccessTokenStore, CodeStore, RefreshTokenStore, type AccessTokenEvent, type AccessTokenInfo } from './tokens';

// ---------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------

export type MicrosoftIdentityEndpoint = 'authorize' | 'token' | 'adminconsent' | 'login' | 'consent' | 'logout' | 'openid-configuration' | 'keys' | 'unknown';

export interface MicrosoftIdentityRequestLogEntry {
  /** Arrival time, epoch ms from the simulator clock. */
  at: number;
  method: string;
  path: string;
  endpoint: MicrosoftIdentityEndpoint;
  /** Query parameters (repeated ones as arrays), secrets redacted. */
  query: Record<string, string | string[]>;
  /** Form fields of a POST, secrets redacted. */
  form?: Record<string, string | string[]>;
  status: number;
  /** `error` of an error answer (token JSON, error page or error redirect). */
  error?: string;
  /** Its AADSTS number. */
  errorCode?: number;
  /** Set when the simulator itself (or an access-token listener) threw: the answer was a 500. */
  internalError?: string;
}

export interface MicrosoftIdentityStats extends Counters {
  /** All requests received. */
  requests: number;
  byStatus: Record<number, number>;
  /** Error answers by AADSTS number, e.g. `{ 54005: 1 }`. */
  errors: Record<number, number>;
}

export type AccessTokenListener = (event: AccessTokenEvent) => void;

export interface MicrosoftIdentityEndpoints {
  authorize: string;
  token: string;
  adminConsent: string;
  logout: string;
}

export interface MicrosoftIdentitySimulator {
  /** Starts listening on 127.0.0.1 (port 0 = any free port); resolves with `http://127.0.0.1:PORT`. */
  start(port?: number): Promise<string>;
  stop(): Promise<void>;
  /** Base URL while started (the "login.microsoftonline.com" of the sandbox), else null. */
  readonly url: string | null;
  readonly options: Readonly<ResolvedMicrosoftIdentitySimulatorOptions>;
  readonly tenant: Readonly<TenantInfo>;
  /** `{url}/{tenant}` (default: the tenant id): the authority to configure clients with. */
  authority(tenant?: string): string;
  /** The endpoint URLs under `authority(tenant)`. */
  endpoints(tenant?: string): MicrosoftIdentityEndpoints;
  /** Current team-site host (lower-case). */
  readonly sharePointHost: string;
  /** Sets the team-site host (a bare host, or a URL whose host is taken), e.g. Graph's `siteCollection.hostname`. */
  setSharePointHost(host: string): void;

  // Directory
  registerApp(app: AppRegistration): MicrosoftIdentityApp;
  addRedirectUri(clientId: string, uri: string): void;
  /** The app's secret now answers AADSTS7000222. */
  expireClientSecret(clientId: string): void;
  addUser(user: UserRegistration): MicrosoftIdentityUser;
  users(): MicrosoftIdentityUser[];
  apps(): MicrosoftIdentityApp[];

  // Consent
  /** Admin pre-authorization: every user of the tenant has these scopes (`.default` = the app's registered permissions). */
  grantTenantWide(clientId: string, scopes: string | readonly string[]): void;
  /** As if `user` (username or id) had accepted the consent page for these scopes. */
  grantConsent(user: string, clientId: string, scopes: string | readonly string[]): void;
  /** Forgets the user's own consent (one app or all). */
  revokeConsent(user: string, clientId?: string): void;
  revokeTenantWide(clientId: string): void;
  grants(): GrantSnapshot;

  // Tokens and sessions
  /** `expires_in` of access tokens issued from now on. */
  setAccessTokenLifetime(seconds: number): void;
  /** Every live access token expires now (announced to onAccessTokenRevoked); returns how many. */
  expireAccessTokens(): number;
  /** Revokes one access token (announced); false when unknown or already ended. */
  revokeAccessToken(token: string): boolean;
  isAccessTokenValid(token: string): boolean;
  accessTokenInfo(token: string): AccessTokenInfo | undefined;
  /** Announces tokens that lapsed by the clock (automatic with the default clock); returns how many. */
  sweepExpiredAccessTokens(): number;
  /** Outstanding authorization codes expire now (AADSTS70008). */
  expireAuthorizationCodes(): void;
  /** Every refresh token issued so far answers AADSTS70008; returns how many. */
  expireRefreshTokens(): number;
  /** Revokes the user's refresh tokens (AADSTS50173) and SSO sessions, like revokeSignInSessions. */
  revokeRefreshTokens(user: string): void;
  /** Ends every SSO session (the next authorize shows the sign-in page). */
  signOutAll(): void;
  /** Adds a listener; returns a function that removes it. */
  onAccessToken(listener: AccessTokenListener): () => void;
  onAccessTokenRevoked(listener: AccessTokenListener): () => void;

  // Injection
  /** The next `n` token requests answer `status` (default 503) with an AADSTS body. */
  failNext(n: number, status?: number): void;
  setLatency(ms: number): void;

  // Inspection
  stats(): MicrosoftIdentityStats;
  requestLog(): MicrosoftIdentityRequestLogEntry[];
  /** Clears the request log and the stats. */
  resetStats(): void;
}

// ---------------------------------------------------------------------------------------
// Simulator
// ---------------------------------------------------------------------------------------

/** Form and query fields never logged. */
const SECRET_FIELDS = new Set([
  'code',
  'code_verifier',
  'client_secret',
  'client_assertion',
  'refresh_token',
  'access_token',
  'id_token',
  'passwd',
  'password',
  'flowtoken',
]);

function redact(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name).map((v) => (SECRET_FIELDS.has(name.toLowerCase()) ? '[redacted]' : v));
    out[name] = values.length === 1 ? values[0] : values;
  }
  return out;
}

function toList(scopes: string | readonly string[]): string[] {
  return (typeof scopes === 'string' ? scopes.split(/\s+/) : [...scopes]).filter((s) => s.length > 0);
}

export function createMicrosoftIdentitySimulator(options: MicrosoftIdentitySimulatorOptions = {}): MicrosoftIdentitySimulator {
  const opts = MicrosoftIdentitySimulatorOptionsSchema.parse(options);
  const clock = opts.now ?? Date.now;
  const seedK = hash32('microsoft-identity', String(opts.seed));
  const tenantName = opts.tenant.name;
  const tenant: TenantInfo = {
    id: (opts.tenant.id ?? Rng.from(seedK, 'tenant-id').uuid()).toLowerCase(),
    name: tenantName,
    displayName: opts.tenant.displayName ?? tenantName.charAt(0).toUpperCase() + tenantName.slice(1),
    domain: `${tenantName}.onmicrosoft.com`,
  };

  const directory = new Directory(seedK, tenant);
  if (opts.defaultApp) directory.registerApp(opts.defaultApp);
  for (const app of opts.apps) directory.registerApp(app);
  if (opts.defaultUsers) {
    directory.addUser({ username: `admin@${tenant.domain}`, password: MS_IDENTITY_DEFAULT_ADMIN_PASSWORD, isAdmin: true, displayName: 'Sandbox Admin' });
    directory.addUser({ username: `user@${tenant.domain}`, password: MS_IDENTITY_DEFAULT_USER_PASSWORD, isAdmin: false, displayName: 'Sandbox User' });
  }
  for (const user of opts.users) directory.addUser(user);

  const revokedListeners: AccessTokenListener[] = opts.onAccessTokenRevoked ? [opts.onAccessTokenRevoked] : [];
  const issuedListeners: AccessTokenListener[] = opts.onAccessToken ? [opts.onAccessToken] : [];
  const accessTokens = new AccessTokenStore();
  let seq = 0;
  let requestCounter = 0;
  let counters = newCounters();
  let log: MicrosoftIdentityRequestLogEntry[] = [];
  let byStatus: Record<number, number> = {};
  let errors: Record<number, number> = {};
  let expiryTimer: NodeJS.Timeout | null = null;

  const host = new SimulatorHost('Microsoft identity', (req, res) => void handle(req, res), opts.latencyMs);

  const state: IdentityState = {
    directory,
    grants: new Grants(),
    flows: new FlowStore(),
    sessions: new SessionStore(),
    codes: new CodeStore(),
    refreshTokens: new RefreshTokenStore(),
    accessTokens,
    idTokens: new IdTokenSigner(),
    settings: {
      codeLifetimeMs: opts.codeLifetimeMs,
      refreshTokenInactivityMs: opts.refreshTokenInactivityMs,
      accessTokenLifetimeSeconds: opts.accessTokenLifetimeSeconds,
      sharePointHost: (opts.sharePointHost ?? `${tenantName}.sharepoint.com`).toLowerCase(),
      sharePointConsentFrom: opts.sharePointConsentFrom,
      sharePointScopes: opts.sharePointScopes,
      adminConsentScopes: opts.adminConsentScopes,
    },
    get counters() {
      return counters;
    },
    scopeContext: () => ({ sharePointHost: state.settings.sharePointHost, tenantName: tenant.displayName }),
    nextSeq: () => ++seq,
    issueAccessToken(e, now) {
      const event = accessTokens.issue(e, now);
      counters.issued.accessTokens++;
      for (const l of [...issuedListeners]) l(event);
      armExpiryTimer();
      return event;
    },
    takeFailure: () => host.takeFailure(),
  };

  // ---- access token lapses ---------------------------------------------------------------

  function announceRevoked(events: AccessTokenEvent[]): void {
    for (const e of events) for (const l of [...revokedListeners]) l(e);
  }

  function sweep(): number {
    const events = accessTokens.sweep(clock());
    announceRevoked(events);
    return events.length;
  }

  /**
   * With the real clock, a timer announces each lapse when it happens, so a Graph simulator
   * wired to onAccessTokenRevoked starts refusing the token on time. A manual clock has no
   * timers to drive: lapses are announced by the next request or sweepExpiredAccessTokens().
   */
  function armExpiryTimer(): void {
    if (expiryTimer) clearTimeout(expiryTimer);
    expiryTimer = null;
    if (opts.now !== undefined || host.url === null) return;
    const next = accessTokens.nextExpiry();
    if (next === null) return;
    expiryTimer = setTimeout(
      () => {
        expiryTimer = null;
        sweep();
        armExpiryTimer();
      },
      Math.max(0, next - Date.now()) + 1,
    );
    expiryTimer.unref();
  }

  // ---- helpers -------------------------------------------------------------------------

  function userOrThrow(userOrId: string, op: string): UserRecord {
    const u = directory.findUser(userOrId);
    if (!u) throw new Error(`${op}: unknown user ${userOrId}`);
    return u;
  }

  function appOrThrow(clientId: string, op: string): AppRecord {
    const a = directory.app(clientId);
    if (!a) throw new Error(`${op}: unknown clientId ${clientId}`);
    return a;
  }

  /** Configured scope names → grant scopes; `.default` = the app's registered permissions. */
  function grantScopes(app: AppRecord, scopes: string | readonly string[], op: string): GrantScope[] {
    const list = toList(scopes);
    if (list.length === 0) throw new Error(`${op}: no scopes given`);
    const out: GrantScope[] = [];
    for (const s of list) {
      const g = configScope(s);
      if (g) out.push(g);
      else
        for (const p of app.permissions) {
          const pg = configScope(p);
          if (pg) out.push(pg);
        }
    }
    return out;
  }

  function normalizeHost(input: string): string {
    let h = input.trim();
    if (/^https?:\/\//i.test(h)) h = new URL(h).host;
    return HostnameSchema.parse(h).toLowerCase();
  }

  function traceIds(req: http.IncomingMessage, now: number): TraceIds {
    const n = ++requestCounter;
    const given = req.headers['client-request-id'];
    const correlationId =
      typeof given === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(given)
        ? given
        : Rng.from(seedK, 'correlation', n).uuid();
    return { traceId: Rng.from(seedK, 'trace', n).uuid(), correlationId, now };
  }

  function discovery(base: string, segment: string): unknown {
    const multi = ['common', 'organizations', 'consumers'].includes(segment.toLowerCase());
    const authority = `${base}/${segment}`;
    return {
      token_endpoint: `${authority}/oauth2/v2.0/token`,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      jwks_uri: `${authority}/discovery/v2.0/keys`,
      response_modes_supported: ['query', 'fragment', 'form_post'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      // Multi-tenant authorities publish the issuer as a template, as Microsoft does.
      issuer: `${base}/${multi ? '{tenantid}' : tenant.id}/v2.0`,
      request_uri_parameter_supported: false,
      authorization_endpoint: `${authority}/oauth2/v2.0/authorize`,
      end_session_endpoint: `${authority}/oauth2/v2.0/logout`,
      code_challenge_methods_supported: ['plain', 'S256'],
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nbf', 'name', 'nonce', 'oid', 'preferred_username', 'tid', 'ver', 'email'],
      tenant_region_scope: null,
      cloud_instance_name: 'microsoftonline.com',
    };
  }

  // ---- pipeline ------------------------------------------------------------------------

  async function route(
    req: http.IncomingMessage,
    method: string,
    path: string,
    query: URLSearchParams,
    info: RequestInfo,
    entry: MicrosoftIdentityRequestLogEntry,
  ): Promise<Outcome> {
    const m = /^\/([^/]+)(\/.*)$/.exec(path);
    const rest = m ? m[2] : '';
    const isPost = method === 'POST';
    const body = async () => {
      const text = await readBody(req);
      const form = parseForm(req.headers['content-type'], text ?? '');
      entry.form = redact(form);
      return form;
    };
    const notFound = () => htmlOutcome(404, '<!DOCTYPE html><html lang="en"><body><h1>Not found</h1></body></html>');

    switch (rest) {
      case '/oauth2/v2.0/authorize':
        entry.endpoint = 'authorize';
        return method === 'GET' ? handleAuthorize(state, query, info) : notFound();
      case '/oauth2/v2.0/token': {
        entry.endpoint = 'token';
        const form = isPost ? await body() : new URLSearchParams();
        return handleToken(state, { method, form, authorization: req.headers.authorization }, info);
      }
      case '/v2.0/adminconsent':
        entry.endpoint = 'adminconsent';
        return method === 'GET' ? handleAdminConsent(state, query, info) : notFound();
      case '/login':
        entry.endpoint = 'login';
        return isPost ? handleLogin(state, await body(), info) : notFound();
      case '/consent':
        entry.endpoint = 'consent';
        return isPost ? handleConsent(state, await body(), info) : notFound();
      case '/oauth2/v2.0/logout':
        entry.endpoint = 'logout';
        return handleLogout(state, query, info);
      case '/v2.0/.well-known/openid-configuration': {
        entry.endpoint = 'openid-configuration';
        const e = directory.checkTenant(info.tenant);
        return e ? jsonOutcome(400, { error: e.error, error_description: e.message }, e) : jsonOutcome(200, discovery(info.base, info.tenant));
      }
      case '/discovery/v2.0/keys':
        entry.endpoint = 'keys';
        return jsonOutcome(200, state.idTokens.jwks(`${info.base}/${tenant.id}/v2.0`));
      default:
        return notFound();
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const now = clock();
    const method = (req.method ?? 'GET').toUpperCase();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1));
    const ids = traceIds(req, now);
    const entry: MicrosoftIdentityRequestLogEntry = { at: now, method, path, endpoint: 'unknown', query: redact(query), status: 0 };
    let segment = '';
    try {
      segment = decodeURIComponent(path.split('/')[1] ?? '');
    } catch {
      segment = path.split('/')[1] ?? '';
    }
    const info: RequestInfo = {
      ids,
      now,
      base: host.url ?? `http://${req.headers.host ?? '127.0.0.1'}`,
      tenant: segment,
      cookieHeader: req.headers.cookie,
    };

    let outcome: Outcome;
    try {
      sweep();
      outcome = await route(req, method, path, query, info, entry);
    } catch (err) {
      // A bug here or in a listener: answer like Microsoft's own outage, keep the server up,
      // and keep the cause in the request log (never on the console).
      entry.internalError = err instanceof Error ? err.message : String(err);
      outcome = jsonOutcome(500, {
        error: 'server_error',
        error_description: `AADSTS90033: A transient error has occurred. Please try again.\r\nTrace ID: ${ids.traceId}\r\nCorrelation ID: ${ids.correlationId}\r\nTimestamp: ${aadTimestamp(now)}`,
        error_codes: [90033],
        timestamp: aadTimestamp(now),
        trace_id: ids.traceId,
        correlation_id: ids.correlationId,
      });
    }
    req.resume();

    entry.status = outcome.status;
    if (outcome.error) {
      entry.error = outcome.error.error;
      entry.errorCode = outcome.error.code;
      errors[outcome.error.code] = (errors[outcome.error.code] ?? 0) + 1;
    }
    log.push(entry);
    byStatus[outcome.status] = (byStatus[outcome.status] ?? 0) + 1;

    host.respondAfter(() => {
      if (res.writableEnded || res.destroyed) return;
      res.writeHead(outcome.status, {
        ...outcome.headers,
        'x-ms-request-id': ids.traceId,
        'client-request-id': ids.correlationId,
        'content-length': String(Buffer.byteLength(outcome.body)),
      });
      res.end(outcome.body);
    });
  }

  // ---- the object ----------------------------------------------------------------------

  const sim: MicrosoftIdentitySimulator = {
    start: async (port = 0) => {
      const url = await host.start(port);
      armExpiryTimer();
      return url;
    },
    stop: async () => {
      if (expiryTimer) clearTimeout(expiryTimer);
      expiryTimer = null;
      await host.stop();
    },
    get url() {
      return host.url;
    },
    options: opts,
    tenant,
    authority(t = tenant.id) {
      if (host.url === null) throw new Error('authority: the simulator is not started');
      return `${host.url}/${t}`;
    },
    endpoints(t) {
      const a = sim.authority(t);
      return {
        authorize: `${a}/oauth2/v2.0/authorize`,
        token: `${a}/oauth2/v2.0/token`,
        adminConsent: `${a}/v2.0/adminconsent`,
        logout: `${a}/oauth2/v2.0/logout`,
      };
    },
    get sharePointHost() {
      return state.settings.sharePointHost;
    },
    setSharePointHost(h) {
      state.settings.sharePointHost = normalizeHost(h);
    },

    registerApp(app) {
      const rec = directory.registerApp(app);
      return directory.listApps().find((a) => a.clientId === rec.clientId)!;
    },
    addRedirectUri(clientId, uri) {
      const app = appOrThrow(clientId, 'addRedirectUri');
      let ok = false;
      try {
        const u = new URL(uri);
        ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.hash === '';
      } catch {
        ok = false;
      }
      if (!ok) throw new Error('addRedirectUri: must be an absolute http(s) URL without a fragment');
      if (!app.redirectUris.includes(uri)) app.redirectUris.push(uri);
    },
    expireClientSecret(clientId) {
      const app = appOrThrow(clientId, 'expireClientSecret');
      if (app.clientSecret === undefined) throw new Error('expireClientSecret: the app is a public client');
      app.secretExpired = true;
    },
    addUser(user) {
      const u = directory.addUser(user);
      return { id: u.id, username: u.username, displayName: u.displayName, email: u.email, isAdmin: u.isAdmin };
    },
    users: () => directory.listUsers(),
    apps: () => directory.listApps(),

    grantTenantWide(clientId, scopes) {
      const app = appOrThrow(clientId, 'grantTenantWide');
      state.grants.grantTenant(app.clientId, grantScopes(app, scopes, 'grantTenantWide'));
    },
    grantConsent(user, clientId, scopes) {
      const u = userOrThrow(user, 'grantConsent');
      const app = appOrThrow(clientId, 'grantConsent');
      state.grants.grantUser(u.id, app.clientId, grantScopes(app, scopes, 'grantConsent'));
    },
    revokeConsent(user, clientId) {
      const u = userOrThrow(user, 'revokeConsent');
      state.grants.revokeUser(u.id, clientId === undefined ? undefined : appOrThrow(clientId, 'revokeConsent').clientId);
    },
    revokeTenantWide(clientId) {
      state.grants.revokeTenant(appOrThrow(clientId, 'revokeTenantWide').clientId);
    },
    grants: () => state.grants.snapshot(),

    setAccessTokenLifetime(seconds) {
      if (!Number.isInteger(seconds) || seconds < 1) throw new Error('setAccessTokenLifetime: seconds must be a positive integer');
      state.settings.accessTokenLifetimeSeconds = seconds;
    },
    expireAccessTokens() {
      const events = accessTokens.expireAll(clock());
      announceRevoked(events);
      armExpiryTimer();
      return events.length;
    },
    revokeAccessToken(token) {
      const e = accessTokens.revoke(token);
      if (e) announceRevoked([e]);
      return e !== undefined;
    },
    isAccessTokenValid: (token) => accessTokens.isValid(token, clock()),
    accessTokenInfo: (token) => accessTokens.info(token, clock()),
    sweepExpiredAccessTokens: () => sweep(),
    expireAuthorizationCodes() {
      state.codes.expireAll(clock());
    },
    expireRefreshTokens: () => state.refreshTokens.expireAll(),
    revokeRefreshTokens(user) {
      const u = userOrThrow(user, 'revokeRefreshTokens');
      u.validFromSeq = ++seq;
      u.validFromMs = clock();
    },
    signOutAll() {
      state.sessions.clear();
    },
    onAccessToken(listener) {
      issuedListeners.push(listener);
      return () => {
        const i = issuedListeners.indexOf(listener);
        if (i >= 0) issuedListeners.splice(i, 1);
      };
    },
    onAccessTokenRevoked(listener) {
      revokedListeners.push(listener);
      return () => {
        const i = revokedListeners.indexOf(listener);
        if (i >= 0) revokedListeners.splice(i, 1);
      };
    },

    failNext: (n, status = 503) => host.failNext(n, status),
    setLatency: (ms) => host.setLatency(ms),

    stats() {
      return { ...structuredClone(counters), requests: log.length, byStatus: { ...byStatus }, errors: { ...errors } };
    },
    requestLog: () => structuredClone(log),
    resetStats() {
      log = [];
      byStatus = {};
      errors = {};
      counters = newCounters();
    },
  };
  return sim;
}
