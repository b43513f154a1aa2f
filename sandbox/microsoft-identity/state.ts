/**
 * What the route handlers share: the stores, the mutable settings, the counters, and the
 * facts of the request being answered.
 */
import type { Directory, UserRecord } from './directory';
import type { TraceIds } from './errors';
import type { FlowStore } from './flows';
import type { Grants } from './grants';
import type { IdTokenSigner } from './id-token';
import type { ScopeContext } from './scopes';
import type { SessionStore } from './sessions';
import type { AccessTokenEvent, AccessTokenStore, CodeStore, RefreshTokenStore } from './tokens';

export interface Counters {
  authorizeRequests: number;
  adminConsentRequests: number;
  signIns: { succeeded: number; failed: number };
  consents: { accepted: number; declined: number };
  tokenRequests: { authorization_code: number; refresh_token: number; other: number };
  issued: { codes: number; accessTokens: number; refreshTokens: number; idTokens: number };
  injectedFailures: number;
}

export function newCounters(): Counters {
  return {
    authorizeRequests: 0,
    adminConsentRequests: 0,
    signIns: { succeeded: 0, failed: 0 },
    consents: { accepted: 0, declined: 0 },
    tokenRequests: { authorization_code: 0, refresh_token: 0, other: 0 },
    issued: { codes: 0, accessTokens: 0, refreshTokens: 0, idTokens: 0 },
    injectedFailures: 0,
  };
}

export interface Settings {
  codeLifetimeMs: number;
  refreshTokenInactivityMs: number;
  accessTokenLifetimeSeconds: number;
  /** Lower-case team-site host. */
  sharePointHost: string;
  sharePointConsentFrom: string[];
  sharePointScopes: string[];
  adminConsentScopes: string[];
}

export interface IdentityState {
  directory: Directory;
  grants: Grants;
  flows: FlowStore;
  sessions: SessionStore;
  codes: CodeStore;
  refreshTokens: RefreshTokenStore;
  accessTokens: AccessTokenStore;
  idTokens: IdTokenSigner;
  settings: Settings;
  counters: Counters;
  scopeContext(): ScopeContext;
  /** Next issue sequence number (refresh tokens, sessions): revocation compares these. */
  nextSeq(): number;
  /** Stores an access token and tells the onAccessToken listeners. */
  issueAccessToken(e: Omit<AccessTokenEvent, 'token'>, now: number): AccessTokenEvent;
  /** Takes a queued failNext() status, or null. */
  takeFailure(): number | null;
}

export interface RequestInfo {
  ids: TraceIds;
  now: number;
  /** `http://127.0.0.1:PORT` of this simulator. */
  base: string;
  /** The `{tenant}` path segment. */
  tenant: string;
  cookieHeader: string | undefined;
}

/** `{base}/{tenant id}/v2.0`: the issuer of ID tokens and of the discovery document. */
export function issuerOf(state: IdentityState, req: RequestInfo): string {
  return `${req.base}/${state.directory.tenant.id}/v2.0`;
}

export function isRevoked(user: UserRecord, seq: number): boolean {
  return seq < user.validFromSeq;
}
