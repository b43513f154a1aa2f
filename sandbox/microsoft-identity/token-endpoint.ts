/**
 * POST /{tenant}/oauth2/v2.0/token: the authorization_code and refresh_token
 * grants of a confidential (secret in the body or HTTP Basic) or public client.
 *
 * Order of checks: method and tenant → failNext() injections → grant_type present →
 * client authentication (unknown app 400 unauthorized_client, secret problems 401
 * invalid_client) → the grant's own checks → scope rules (AADSTS70011, 700022) → consent
 * (AADSTS65001 + suberror consent_required) → tokens.
 */
import crypto from 'node:crypto';
import { AAD, AadError, errorJson, injectedError } from './errors';
import type { AppRecord, UserRecord } from './directory';
import { jsonOutcome, param, parseBasicAuth, type Outcome } from './responses';
import {
  checkStaticLimit,
  configScope,
  formatScope,
  GRAPH_HOST,
  parseScopes,
  permissionKey,
  singleResource,
  type GrantScope,
  type OidcScope,
  type ParsedScopes,
  type Permission,
  type ResourceRef,
} from './scopes';
import { isRevoked, issuerOf, type IdentityState, type RequestInfo } from './state';

const VERIFIER_RE = /^[A-Za-z0-9\-._~]{43,128}$/;

export interface TokenRequestInput {
  method: string;
  form: URLSearchParams;
  authorization: string | undefined;
}

function fail(e: AadError, req: RequestInfo): Outcome {
  return jsonOutcome(e.status, errorJson(e, req.ids), e);
}

export async function handleToken(state: IdentityState, input: TokenRequestInput, req: RequestInfo): Promise<Outcome> {
  if (input.method !== 'POST') return fail(AAD.postOnly(input.method), req);
  const tenantError = state.directory.checkTenant(req.tenant);
  if (tenantError) return fail(tenantError, req);
  const { form } = input;
  const grantType = param(form, 'grant_type');
  if (grantType === 'authorization_code' || grantType === 'refresh_token') state.counters.tokenRequests[grantType]++;
  else state.counters.tokenRequests.other++;

  const injected = state.takeFailure();
  if (injected !== null) {
    state.counters.injectedFailures++;
    const e = injectedError(injected);
    return jsonOutcome(injected, errorJson(e, req.ids), e);
  }
  try {
    if (!grantType) throw AAD.missingParameter('grant_type');
    const app = authenticateClient(state, form, input.authorization);
    if (grantType === 'authorization_code') return await redeemCode(state, app, form, req);
    if (grantType === 'refresh_token') return await redeemRefreshToken(state, app, form, req);
    throw AAD.unsupportedGrantType(grantType);
  } catch (e) {
    if (e instanceof AadError) return fail(e, req);
    throw e;
  }
}

// ---------------------------------------------------------------------------------------
// Client authentication
// ---------------------------------------------------------------------------------------

function sameSecret(given: string, expected: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(a, b);
}

function authenticateClient(state: IdentityState, form: URLSearchParams, authorization: string | undefined): AppRecord {
  const basic = parseBasicAuth(authorization);
  const bodyId = param(form, 'client_id');
  if (basic && bodyId !== undefined && bodyId.toLowerCase() !== basic.clientId.toLowerCase()) throw AAD.malformed();
  const clientId = bodyId ?? basic?.clientId;
  if (!clientId) throw AAD.missingParameter('client_id');
  const app = state.directory.app(clientId);
  if (!app) throw AAD.appNotFound(clientId, state.directory.tenant.displayName);
  const secret = param(form, 'client_secret') ?? basic?.secret;
  const assertion = param(form, 'client_assertion');
  if (app.clientSecret === undefined) {
    if (secret !== undefined || assertion !== undefined) throw AAD.publicClientSecret();
    return app;
  }
  // Certificate credentials are not simulated: an assertion cannot be checked, so it fails like a bad secret.
  if (secret === undefined && assertion === undefined) throw AAD.missingSecret();
  if (app.secretExpired) throw AAD.secretExpired(app.clientId);
  if (secret === undefined || !sameSecret(secret, app.clientSecret)) throw AAD.invalidSecret(app.clientId);
  return app;
}

// ---------------------------------------------------------------------------------------
// Grants
// ---------------------------------------------------------------------------------------

function verifyPkce(challenge: { value: string; method: 'S256' | 'plain' }, verifier: string | undefined): void {
  if (verifier === undefined) throw AAD.missingParameter('code_verifier');
  if (!VERIFIER_RE.test(verifier)) throw AAD.pkceMismatch();
  const derived = challenge.method === 'S256' ? crypto.createHash('sha256').update(verifier, 'ascii').digest('base64url') : verifier;
  if (derived !== challenge.value) throw AAD.pkceMismatch();
}

/** The token request's scopes, or the original request's when it names none. */
function effectiveScopes(state: IdentityState, form: URLSearchParams, origin: ParsedScopes, emptyIsError: boolean): ParsedScopes {
  const raw = param(form, 'scope');
  if (raw === undefined) return origin;
  if (raw.trim() === '') {
    if (emptyIsError) throw AAD.emptyScopeOnCode();
    return origin;
  }
  const parsed = parseScopes(raw, state.scopeContext());
  checkStaticLimit(parsed);
  singleResource(parsed);
  return parsed;
}

interface Plan {
  user: UserRecord;
  app: AppRecord;
  ref: ResourceRef;
  explicit: Permission[];
  isDefault: boolean;
  oidc: OidcScope[];
  grant: 'authorization_code' | 'refresh_token';
  origin: ParsedScopes;
  nonce: string | undefined;
}

/**
 * Which resource a token is for: the one the request names; with only OIDC scopes, the
 * first resource of the original request ("if several resources, token is for the
 * first one"); Graph when that named none either.
 */
function plan(requested: ParsedScopes, origin: ParsedScopes): { ref: ResourceRef; explicit: Permission[]; isDefault: boolean } {
  const ref: ResourceRef = requested.resources[0] ?? origin.resources[0] ?? { resource: 'graph', host: GRAPH_HOST };
  const source = requested.resources.length > 0 ? requested : origin;
  const same = (r: ResourceRef) => r.resource === ref.resource && r.host === ref.host;
  return { ref, explicit: source.explicit.filter(same), isDefault: source.defaults.some(same) };
}

async function redeemCode(state: IdentityState, app: AppRecord, form: URLSearchParams, req: RequestInfo): Promise<Outcome> {
  const code = param(form, 'code');
  if (!code) throw AAD.missingParameter('code');
  const rec = state.codes.get(code);
  if (!rec || rec.clientId !== app.clientId) throw AAD.invalidGrant();
  if (rec.redeemed) throw AAD.codeRedeemed();
  if (req.now >= rec.expiresAt) throw AAD.expiredGrant();
  const redirectUri = param(form, 'redirect_uri');
  if (redirectUri === undefined) throw AAD.missingParameter('redirect_uri');
  if (redirectUri !== rec.redirectUri) throw AAD.replyAddressMismatch(redirectUri, rec.redirectUri);
  if (rec.challenge) verifyPkce(rec.challenge, param(form, 'code_verifier'));
  const user = state.directory.userById(rec.userId);
  if (!user) throw AAD.invalidGrant();

  const requested = effectiveScopes(state, form, rec.scopes, true);
  const p = plan(requested, rec.scopes);
  const oidc = [...new Set([...rec.scopes.oidc, ...requested.oidc])];
  const body = await issueTokens(state, req, { user, app, ...p, oidc, grant: 'authorization_code', origin: rec.scopes, nonce: rec.nonce });
  // Spent only once tokens were issued: a request refused for its scope can be retried.
  rec.redeemed = true;
  return jsonOutcome(200, body);
}

async function redeemRefreshToken(state: IdentityState, app: AppRecord, form: URLSearchParams, req: RequestInfo): Promise<Outcome> {
  const token = param(form, 'refresh_token');
  if (!token) throw AAD.missingParameter('refresh_token');
  const rec = state.refreshTokens.get(token);
  if (!rec) throw AAD.refreshMalformed();
  if (rec.clientId !== app.clientId) throw AAD.invalidGrant();
  const user = state.directory.userById(rec.userId);
  if (!user) throw AAD.invalidGrant();
  if (isRevoked(user, rec.seq)) throw AAD.revoked(stamp(rec.issuedAt), stamp(user.validFromMs ?? req.now));
  if (rec.expired || req.now - rec.lastUsedAt >= state.settings.refreshTokenInactivityMs) throw AAD.expiredGrant();

  const requested = effectiveScopes(state, form, rec.origin, false);
  const p = plan(requested, rec.origin);
  const body = await issueTokens(state, req, { user, app, ...p, oidc: requested.oidc, grant: 'refresh_token', origin: rec.origin, nonce: undefined });
  rec.lastUsedAt = req.now;
  return jsonOutcome(200, body);
}

function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace('T', ' ');
}

// ---------------------------------------------------------------------------------------
// Issuing
// ---------------------------------------------------------------------------------------

function sortByName(scopes: Iterable<GrantScope>): GrantScope[] {
  return [...scopes].sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
}

/**
 * SharePoint permissions the user holds: any consented explicitly, plus the configured
 * SharePoint scopes when one of `sharePointConsentFrom` (Graph) is consented.
 */
function sharePointGranted(state: IdentityState, granted: Map<string, GrantScope>): GrantScope[] {
  const out = new Map<string, GrantScope>();
  for (const g of granted.values()) if (g.kind === 'sharepoint') out.set(g.key, g);
  const implied = state.settings.sharePointConsentFrom.some((s) => {
    const g = configScope(s);
    return g !== null && granted.has(g.key);
  });
  if (implied) {
    for (const name of state.settings.sharePointScopes) {
      const key = permissionKey('sharepoint', name);
      if (!out.has(key)) out.set(key, { key, kind: 'sharepoint', name });
    }
  }
  return sortByName(out.values());
}

async function issueTokens(state: IdentityState, req: RequestInfo, p: Plan): Promise<Record<string, unknown>> {
  const { user, app, ref } = p;
  const granted = state.grants.granted(user.id, app.clientId);
  const resourceScopes = ref.resource === 'graph' ? state.grants.grantedFor(user.id, app.clientId, 'graph') : sharePointGranted(state, granted);
  const have = new Set(resourceScopes.map((g) => g.key));
  const consentRequired = () => AAD.consentRequired(app.clientId, app.displayName);
  for (const perm of p.explicit) if (!have.has(permissionKey(perm.resource, perm.name))) throw consentRequired();
  if (p.isDefault && resourceScopes.length === 0) throw consentRequired();
  for (const s of p.oidc) if (!granted.has(`oidc:${s}`)) throw consentRequired();

  const lifetime = state.settings.accessTokenLifetimeSeconds;
  const access = state.issueAccessToken(
    {
      resource: ref.resource,
      ...(ref.resource === 'sharepoint' ? { host: ref.host } : {}),
      scopes: resourceScopes.map((g) => g.name),
      userId: user.id,
      clientId: app.clientId,
      expiresAt: req.now + lifetime * 1000,
    },
    req.now,
  );
  const body: Record<string, unknown> = {
    token_type: 'Bearer',
    scope: [...resourceScopes.map((g) => formatScope(ref, g.name)), ...p.oidc].join(' '),
    expires_in: lifetime,
    ext_expires_in: lifetime,
    access_token: access.token,
  };
  // Refresh tokens only with offline_access; a refresh always rotates.
  if (p.grant === 'refresh_token' || p.oidc.includes('offline_access')) {
    body.refresh_token = state.refreshTokens.issue({ userId: user.id, clientId: app.clientId, seq: state.nextSeq(), issuedAt: req.now, origin: p.origin });
    state.counters.issued.refreshTokens++;
  }
  if (p.oidc.includes('openid')) {
    body.id_token = await state.idTokens.sign({
      issuer: issuerOf(state, req),
      clientId: app.clientId,
      tenantId: state.directory.tenant.id,
      user,
      nonce: p.nonce,
      includeEmail: p.oidc.includes('email'),
      nowMs: req.now,
    });
    state.counters.issued.idTokens++;
  }
  return body;
}
