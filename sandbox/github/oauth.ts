/**
 * The OAuth App side of github.com: registered apps, redirect_uri rules,
 * authorization codes (10 minutes, single use, optional PKCE S256), the code-for-token
 * exchange with GitHub's error codes, and the `gho_` tokens the REST routes accept.
 * HTTP and HTML live in `web/`; this module is plain state and rules.
 */
import crypto from 'node:crypto';
import { Rng } from '../shared/prng';

/**
 * A client of the web flow: an OAuth App (`gho_` tokens that never expire, scopes) or the
 * GitHub App's own OAuth side (`ghu_` user tokens for 8 hours with a `ghr_` refresh token,
 * no scopes: the App's permissions apply).
 */
export interface OAuthAppRec {
  kind: 'oauth-app' | 'github-app';
  clientId: string;
  clientSecret: string;
  name: string;
  homepageUrl: string;
  /** Registered callback URLs (an OAuth App has one; a GitHub App up to 10, the first is the default). */
  callbackUrls: string[];
}

/** GitHub App user access tokens live 8 hours, their refresh tokens 6 months. */
const USER_TOKEN_TTL_S = 28_800;
const REFRESH_TOKEN_TTL_S = 15_811_200;

/** Authorization codes are valid for 10 minutes. */
export const CODE_TTL_MS = 10 * 60_000;

const TROUBLESHOOT_AUTHORIZE = 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors';
const TROUBLESHOOT_TOKEN = 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors';

/** Error parameters of the authorize redirect (`error`, `error_description`, `error_uri`). */
export const AUTHORIZE_ERRORS = {
  redirect_uri_mismatch: {
    error: 'redirect_uri_mismatch',
    error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
    error_uri: `${TROUBLESHOOT_AUTHORIZE}/#redirect-uri-mismatch`,
  },
  access_denied: {
    error: 'access_denied',
    error_description: 'The user has denied your application access.',
    error_uri: `${TROUBLESHOOT_AUTHORIZE}/#access-denied`,
  },
  // Not in GitHub's documented list: RFC 7636 §4.4.1's answer to a PKCE request GitHub
  // cannot honour (only S256 is supported), so a client sees the failure at once.
  invalid_request: {
    error: 'invalid_request',
    error_description: 'code_challenge_method must be S256 and code_challenge 43-128 characters of [A-Za-z0-9-._~].',
    error_uri: `${TROUBLESHOOT_AUTHORIZE}/`,
  },
} as const;

export type TokenError = { error: string; error_description: string; error_uri: string };

/** Errors of `POST /login/oauth/access_token`; GitHub sends them with HTTP 200. */
const TOKEN_ERRORS = {
  incorrect_client_credentials: {
    error: 'incorrect_client_credentials',
    error_description: 'The client_id and/or client_secret passed are incorrect.',
    error_uri: `${TROUBLESHOOT_TOKEN}/#incorrect-client-credentials`,
  },
  redirect_uri_mismatch: {
    error: 'redirect_uri_mismatch',
    error_description: 'The redirect_uri MUST match the registered callback URL for this application.',
    error_uri: `${TROUBLESHOOT_TOKEN}/#redirect-uri-mismatch2`,
  },
  bad_verification_code: {
    error: 'bad_verification_code',
    error_description: 'The code passed is incorrect or expired.',
    error_uri: `${TROUBLESHOOT_TOKEN}/#bad-verification-code`,
  },
  // OAuth App tokens never expire, so there is nothing to refresh (GitHub App user tokens can be).
  bad_refresh_token: {
    error: 'bad_refresh_token',
    error_description: 'The refresh token passed is incorrect or expired.',
    error_uri: `${TROUBLESHOOT_TOKEN}/#bad-refresh-token`,
  },
  unsupported_grant_type: {
    error: 'unsupported_grant_type',
    error_description: 'The grant type is not supported.',
    error_uri: `${TROUBLESHOOT_TOKEN}/`,
  },
} as const satisfies Record<string, TokenError>;

/** OAuth App scopes and the wording the authorize page shows for them. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = Object.freeze({
  repo: 'Full control of private repositories',
  'repo:status': 'Access commit status',
  repo_deployment: 'Access deployment status',
  public_repo: 'Access public repositories',
  'repo:invite': 'Access repository invitations',
  security_events: 'Read and write security events',
  'admin:repo_hook': 'Full control of repository hooks',
  'write:repo_hook': 'Write repository hooks',
  'read:repo_hook': 'Read repository hooks',
  'admin:org': 'Full control of orgs and teams, read and write org projects',
  'write:org': 'Read and write org and team membership, read and write org projects',
  'read:org': 'Read org and team membership, read org projects',
  'admin:public_key': 'Full control of user public keys',
  'write:public_key': 'Write user public keys',
  'read:public_key': 'Read user public keys',
  'admin:org_hook': 'Full control of organization hooks',
  gist: 'Create gists',
  notifications: 'Access notifications',
  user: 'Update ALL user data',
  'read:user': 'Read ALL user profile data',
  'user:email': 'Access user email addresses (read-only)',
  'user:follow': 'Follow and unfollow users',
  project: 'Full control of projects',
  'read:project': 'Read access of projects',
  delete_repo: 'Delete repositories',
  'write:packages': 'Upload packages to GitHub Package Registry',
  'read:packages': 'Download packages from GitHub Package Registry',
  'delete:packages': 'Delete packages from GitHub Package Registry',
  'admin:gpg_key': 'Full control of public user GPG keys',
  'write:gpg_key': 'Write public user GPG keys',
  'read:gpg_key': 'Read public user GPG keys',
  codespace: 'Full control of codespaces',
  workflow: 'Update GitHub Action workflows',
});

/**
 * The `scope` parameter: space-delimited (commas tolerated), duplicates dropped, order
 * kept. GitHub ignores scopes it does not know rather than failing the request.
 */
export function parseScopes(raw: string | null | undefined): string[] {
  const out: string[] = [];
  for (const s of (raw ?? '').split(/[\s,]+/)) if (s && SCOPE_DESCRIPTIONS[s] !== undefined && !out.includes(s)) out.push(s);
  return out;
}

/** Whether granted scopes let a token see private repositories. */
export function hasRepoScope(scopes: readonly string[]): boolean {
  return scopes.includes('repo');
}

function isLoopbackIp(hostname: string): boolean {
  return hostname === '127.0.0.1' || hostname === '[::1]';
}

/** Whether `redirectUri` is allowed by any of the registered callback URLs. */
export function redirectUriAllowedByAny(callbackUrls: readonly string[], redirectUri: string): boolean {
  return callbackUrls.some((cb) => redirectUriAllowed(cb, redirectUri));
}

/**
 * GitHub's redirect_uri rules: same scheme, the callback's host or a subdomain of it, the
 * same port, and the callback's path or a path below it. Loopback IP callbacks (127.0.0.1,
 * [::1]) accept any port, which is how native and local apps pick a free one.
 */
function redirectUriAllowed(callbackUrl: string, redirectUri: string): boolean {
  let cb: URL;
  let ru: URL;
  try {
    cb = new URL(callbackUrl);
    ru = new URL(redirectUri);
  } catch {
    return false;
  }
  if (cb.protocol !== ru.protocol || ru.username || ru.password) return false;
  const host = ru.hostname.toLowerCase();
  const cbHost = cb.hostname.toLowerCase();
  if (host !== cbHost && !(host.endsWith(`.${cbHost}`) && !isLoopbackIp(cbHost))) return false;
  if (!isLoopbackIp(cbHost) && ru.port !== cb.port) return false;
  const cbPath = cb.pathname.replace(/\/+$/, '');
  return ru.pathname === cb.pathname || ru.pathname === cbPath || ru.pathname.startsWith(`${cbPath}/`);
}

/** `url` with `params` appended to its query (values that are null/undefined are left out). */
export function withParams(url: string, params: Record<string, string | number | null | undefined>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) u.searchParams.append(k, String(v));
  return u.toString();
}

/** RFC 7636: BASE64URL(SHA256(code_verifier)). */
function s256(verifier: string): string {
  return crypto.createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export const CODE_CHALLENGE_RE = /^[A-Za-z0-9._~-]{43,128}$/;

interface CodeRec {
  clientId: string;
  login: string;
  /** The redirect_uri of the authorize request, or null when it relied on the callback URL. */
  redirectUri: string | null;
  scopes: string[];
  codeChallenge: string | null;
  expiresAtMs: number;
  used: boolean;
}

export interface OAuthTokenRec {
  kind: OAuthAppRec['kind'];
  login: string;
  clientId: string;
  scopes: string[];
  createdMs: number;
  /** null: never expires (OAuth App tokens). */
  expiresAtMs: number | null;
  revoked: boolean;
}

interface RefreshTokenRec {
  login: string;
  clientId: string;
  expiresAtMs: number;
  used: boolean;
}

export type TokenBody =
  | { access_token: string; scope: string; token_type: 'bearer' }
  | { access_token: string; expires_in: number; refresh_token: string; refresh_token_expires_in: number; scope: string; token_type: 'bearer' };

export type ExchangeResult = { ok: true; body: TokenBody; login: string } | { ok: false; body: TokenError };

export class OAuthState {
  readonly apps = new Map<string, OAuthAppRec>();
  private readonly codes = new Map<string, CodeRec>();
  private readonly tokens = new Map<string, OAuthTokenRec>();
  private readonly refreshTokens = new Map<string, RefreshTokenRec>();
  /** Scopes each user granted each app (key: login + NUL + client id). */
  private readonly grants = new Map<string, Set<string>>();
  private codeCounter = 0;
  private tokenCounter = 0;

  constructor(private readonly seedK: number) {}

  /** Registers or replaces an OAuth App (tests often learn their callback port late). */
  register(app: { clientId: string; clientSecret: string; name: string; homepageUrl: string; callbackUrl: string }): void {
    const { callbackUrl, ...rest } = app;
    this.apps.set(app.clientId, { ...rest, kind: 'oauth-app', callbackUrls: [callbackUrl] });
  }

  /** Registers or replaces the GitHub App's OAuth side. */
  registerGitHubApp(app: Omit<OAuthAppRec, 'kind'>): void {
    this.apps.set(app.clientId, { ...app, callbackUrls: [...app.callbackUrls], kind: 'github-app' });
  }

  private grantKey(login: string, clientId: string): string {
    return `${login.toLowerCase()}\0${clientId}`;
  }

  /** Whether the user already granted the app every one of `scopes`. */
  grantCovers(login: string, clientId: string, scopes: readonly string[]): boolean {
    const granted = this.grants.get(this.grantKey(login, clientId));
    return granted !== undefined && scopes.every((s) => granted.has(s));
  }

  /** The user approved: remembers the grant and issues a 20-hex-digit code. */
  authorize(a: { clientId: string; login: string; redirectUri: string | null; scopes: string[]; codeChallenge: string | null }, nowMs: number): string {
    const key = this.grantKey(a.login, a.clientId);
    const granted = this.grants.get(key) ?? new Set<string>();
    for (const s of a.scopes) granted.add(s);
    this.grants.set(key, granted);
    let code: string;
    do code = Rng.from(this.seedK, 'oauth-code', this.codeCounter++).hex(20);
    while (this.codes.has(code));
    this.codes.set(code, { ...a, scopes: [...a.scopes], expiresAtMs: nowMs + CODE_TTL_MS, used: false });
    return code;
  }

  /**
   * `POST /login/oauth/access_token` with its parameters (query and body merged). Checks in
   * GitHub's order: client credentials, then the code (unknown, another app's, used or
   * expired), then redirect_uri, then PKCE; a PKCE mismatch is a bad code, as on GitHub.
   */
  exchange(p: URLSearchParams, nowMs: number): ExchangeResult {
    const fail = (e: TokenError): ExchangeResult => ({ ok: false, body: { ...e } });
    const app = this.apps.get(p.get('client_id') ?? '');
    const secret = p.get('client_secret') ?? '';
    if (!app || !constantTimeEqual(secret, app.clientSecret)) return fail(TOKEN_ERRORS.incorrect_client_credentials);
    const grantType = p.get('grant_type');
    if (grantType === 'refresh_token') return this.refresh(app, p.get('refresh_token') ?? '', nowMs);
    if (grantType !== null && grantType !== 'authorization_code') return fail(TOKEN_ERRORS.unsupported_grant_type);
    const code = this.codes.get(p.get('code') ?? '');
    if (!code || code.clientId !== app.clientId || code.used || nowMs > code.expiresAtMs) return fail(TOKEN_ERRORS.bad_verification_code);
    const redirectUri = p.get('redirect_uri');
    if (redirectUri !== null && redirectUri !== '') {
      const ok = code.redirectUri !== null ? redirectUri === code.redirectUri : redirectUriAllowedByAny(app.callbackUrls, redirectUri);
      if (!ok) return fail(TOKEN_ERRORS.redirect_uri_mismatch);
    }
    // A code_verifier without a code_challenge is ignored (UNCONFIRMED what GitHub does;
    // a careful client never sends one alone).
    if (code.codeChallenge !== null) {
      const verifier = p.get('code_verifier') ?? '';
      if (!constantTimeEqual(s256(verifier), code.codeChallenge)) return fail(TOKEN_ERRORS.bad_verification_code);
    }
    code.used = true;
    return { ok: true, body: this.issue(app, code.login, code.scopes, nowMs), login: code.login };
  }

  /**
   * An OAuth App token (`gho_`, scopes, no expiry), or a GitHub App user token (`ghu_`, 8
   * hours, with a single-use `ghr_` refresh token; `scope` is empty: the App's permissions apply).
   */
  private issue(app: OAuthAppRec, login: string, scopes: string[], nowMs: number): TokenBody {
    const userToken = app.kind === 'github-app';
    let token: string;
    do token = (userToken ? 'ghu_' : 'gho_') + Rng.from(this.seedK, 'oauth-token', this.tokenCounter++).alnum(36);
    while (this.tokens.has(token));
    this.tokens.set(token, {
      kind: app.kind,
      login,
      clientId: app.clientId,
      scopes: userToken ? [] : [...scopes],
      createdMs: nowMs,
      expiresAtMs: userToken ? nowMs + USER_TOKEN_TTL_S * 1000 : null,
      revoked: false,
    });
    if (!userToken) return { access_token: token, scope: scopes.join(','), token_type: 'bearer' };
    let refresh: string;
    do refresh = 'ghr_' + Rng.from(this.seedK, 'refresh-token', this.tokenCounter++).alnum(76);
    while (this.refreshTokens.has(refresh));
    this.refreshTokens.set(refresh, { login, clientId: app.clientId, expiresAtMs: nowMs + REFRESH_TOKEN_TTL_S * 1000, used: false });
    return {
      access_token: token,
      expires_in: USER_TOKEN_TTL_S,
      refresh_token: refresh,
      refresh_token_expires_in: REFRESH_TOKEN_TTL_S,
      scope: '',
      token_type: 'bearer',
    };
  }

  /** `grant_type=refresh_token`: GitHub App user tokens only; each refresh token works once. */
  private refresh(app: OAuthAppRec, refreshToken: string, nowMs: number): ExchangeResult {
    const rec = this.refreshTokens.get(refreshToken);
    if (app.kind !== 'github-app' || !rec || rec.used || rec.clientId !== app.clientId || nowMs > rec.expiresAtMs) {
      return { ok: false, body: { ...TOKEN_ERRORS.bad_refresh_token } };
    }
    rec.used = true;
    return { ok: true, body: this.issue(app, rec.login, [], nowMs), login: rec.login };
  }

  /** A live token: not revoked and (GitHub App user tokens) not expired. */
  lookup(token: string, nowMs: number): OAuthTokenRec | undefined {
    const rec = this.tokens.get(token);
    if (!rec || rec.revoked) return undefined;
    return rec.expiresAtMs === null || nowMs < rec.expiresAtMs ? rec : undefined;
  }

  isIssued(token: string): boolean {
    return this.tokens.has(token) || this.refreshTokens.has(token);
  }

  revokeToken(token: string): boolean {
    const rec = this.tokens.get(token);
    if (!rec || rec.revoked) return false;
    rec.revoked = true;
    return true;
  }

  /**
   * The user revokes an app in their settings: every token of that user for the app (or for
   * every app) stops working and the grant is forgotten, so the next authorize shows the page.
   */
  revokeAuthorization(login: string, clientId?: string): number {
    let n = 0;
    for (const rec of this.tokens.values()) {
      if (rec.revoked || rec.login.toLowerCase() !== login.toLowerCase()) continue;
      if (clientId !== undefined && rec.clientId !== clientId) continue;
      rec.revoked = true;
      n++;
    }
    for (const rec of this.refreshTokens.values()) {
      if (rec.login.toLowerCase() === login.toLowerCase() && (clientId === undefined || rec.clientId === clientId)) rec.used = true;
    }
    for (const key of [...this.grants.keys()]) {
      const [l, c] = key.split('\0');
      if (l === login.toLowerCase() && (clientId === undefined || c === clientId)) this.grants.delete(key);
    }
    return n;
  }
}

function constantTimeEqual(a: string, b: string): boolean {
  const da = crypto.createHash('sha256').update(a).digest();
  const db = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(da, db);
}
