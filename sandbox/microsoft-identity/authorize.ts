/**
 * The interactive endpoints: authorize, admin consent, and the sign-in /
 * consent forms they lead to.
 *
 * Until the client and its redirect URI are known good, errors are shown as a page (never
 * redirected: sending them to an unregistered URI would leak them). After that every error
 * goes back to the app as `?error=...&error_description=...&error_uri=...&state=...`.
 *
 * A flow then walks: who is the user (SSO cookie, else the sign-in page) → does any
 * requested scope need an admin (non-admin: "Need admin approval", AADSTS90094) → is
 * anything not consented yet (the consent page) → redirect with a code.
 */
import { AAD, AadError, errorRedirectParams } from './errors';
import type { AppRecord, UserRecord } from './directory';
import type { Flow, Prompt, RedirectTarget, ResponseMode } from './flows';
import { adminApprovalPage, consentPage, errorPage, flowGonePage, formPostPage, signInPage, signedOutPage, type ScopeLine } from './pages';
import { htmlOutcome, param, readCookie, redirectOutcome, withHeader, type Outcome } from './responses';
import {
  checkStaticLimit,
  configScope,
  describeScope,
  fullScopeName,
  grantScopeOf,
  oidcGrantScope,
  parseScopes,
  type GrantScope,
  type ParsedScopes,
} from './scopes';
import { clearedSessionCookie, SESSION_COOKIE, sessionCookie } from './sessions';
import type { IdentityState, RequestInfo } from './state';

const RESPONSE_MODES: readonly ResponseMode[] = ['query', 'fragment', 'form_post'];
const PROMPTS: readonly Prompt[] = ['login', 'none', 'consent', 'select_account'];
const VERIFIER_CHARS = /^[A-Za-z0-9\-._~]+$/;

// ---------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------

function page(e: AadError, req: RequestInfo): Outcome {
  return htmlOutcome(400, errorPage(e, req.ids), e);
}

function redirect(target: RedirectTarget, params: Array<[string, string]>, error?: AadError): Outcome {
  const all: Array<[string, string]> = target.adminConsent ? [['admin_consent', 'True'], ...params] : [...params];
  if (target.state !== undefined) all.push(['state', target.state]);
  if (target.responseMode === 'form_post') return htmlOutcome(200, formPostPage(target.redirectUri, all), error);
  const encoded = new URLSearchParams(all).toString();
  const location =
    target.responseMode === 'fragment' ? `${target.redirectUri}#${encoded}` : `${target.redirectUri}${target.redirectUri.includes('?') ? '&' : '?'}${encoded}`;
  return redirectOutcome(location, error);
}

function redirectError(target: RedirectTarget, e: AadError, req: RequestInfo): Outcome {
  return redirect(target, errorRedirectParams(e, req.ids), e);
}

/** Ends the flow and sends the error back to the app. */
function finishWithError(state: IdentityState, flow: Flow, e: AadError, req: RequestInfo): Outcome {
  state.flows.end(flow.id);
  return redirectError(flow.target, e, req);
}

function formAction(flow: Flow, form: 'login' | 'consent'): string {
  return `/${encodeURIComponent(flow.tenantSegment)}/${form}`;
}

function scopeLines(scopes: GrantScope[]): ScopeLine[] {
  return scopes.map((g) => ({ scope: g.name, description: describeScope(g) }));
}

// ---------------------------------------------------------------------------------------
// Request validation
// ---------------------------------------------------------------------------------------

interface ClientCheck {
  app: AppRecord;
  redirectUri: string;
}

/** Client id and redirect URI: failures are pages. */
function checkClient(state: IdentityState, query: URLSearchParams, req: RequestInfo): ClientCheck | Outcome {
  const tenantError = state.directory.checkTenant(req.tenant);
  if (tenantError) return page(tenantError, req);
  const clientId = param(query, 'client_id');
  if (!clientId) return page(AAD.missingParameter('client_id'), req);
  const app = state.directory.app(clientId);
  if (!app) return page(AAD.appNotFound(clientId, state.directory.tenant.displayName), req);
  const redirectUri = param(query, 'redirect_uri');
  if (!redirectUri) return page(AAD.missingParameter('redirect_uri'), req);
  // Exact match: scheme, host, port, path and case.
  if (!app.redirectUris.includes(redirectUri)) return page(AAD.redirectMismatch(redirectUri, app.clientId), req);
  return { app, redirectUri };
}

function parsePkce(query: URLSearchParams): Flow['challenge'] {
  const value = param(query, 'code_challenge');
  if (value === undefined) return null;
  const method = param(query, 'code_challenge_method') ?? 'plain';
  if (method !== 'S256' && method !== 'plain') throw AAD.malformed();
  // S256 challenges are base64url SHA-256 (43 chars); plain ones are the verifier itself.
  const ok = method === 'S256' ? /^[A-Za-z0-9_-]{43}$/.test(value) : value.length >= 43 && value.length <= 128 && VERIFIER_CHARS.test(value);
  if (!ok) throw AAD.challengeSize();
  return { value, method };
}

function parseScopeParam(state: IdentityState, query: URLSearchParams): ParsedScopes {
  const scope = param(query, 'scope');
  if (!scope || scope.trim() === '') throw AAD.missingParameter('scope');
  const parsed = parseScopes(scope, state.scopeContext());
  checkStaticLimit(parsed);
  return parsed;
}

// ---------------------------------------------------------------------------------------
// GET /{tenant}/oauth2/v2.0/authorize
// ---------------------------------------------------------------------------------------

export function handleAuthorize(state: IdentityState, query: URLSearchParams, req: RequestInfo): Outcome {
  state.counters.authorizeRequests++;
  const client = checkClient(state, query, req);
  if ('status' in client) return client;
  const modeParam = param(query, 'response_mode');
  const target: RedirectTarget = {
    redirectUri: client.redirectUri,
    responseMode: RESPONSE_MODES.includes(modeParam as ResponseMode) ? (modeParam as ResponseMode) : 'query',
    state: param(query, 'state'),
    adminConsent: false,
  };
  let flow: Flow;
  try {
    if (modeParam !== undefined && !RESPONSE_MODES.includes(modeParam as ResponseMode)) throw AAD.malformed();
    const responseType = param(query, 'response_type');
    if (!responseType) throw AAD.missingParameter('response_type');
    const types = responseType.split(/\s+/).filter(Boolean);
    if (types.includes('token')) throw AAD.responseTypeToken();
    if (types.includes('id_token')) throw AAD.responseTypeIdToken();
    if (types.length !== 1 || types[0] !== 'code') throw AAD.malformed();
    const scopes = parseScopeParam(state, query);
    const prompt = param(query, 'prompt');
    if (prompt !== undefined && !PROMPTS.includes(prompt as Prompt)) throw AAD.malformed();
    const challenge = parsePkce(query);
    flow = state.flows.create(
      {
        kind: 'authorize',
        tenantSegment: req.tenant,
        app: client.app,
        target,
        scopes,
        prompt: prompt as Prompt | undefined,
        loginHint: param(query, 'login_hint'),
        challenge,
        nonce: param(query, 'nonce'),
        needsLogin: prompt === 'login' || prompt === 'select_account',
      },
      req.now,
    );
  } catch (e) {
    if (e instanceof AadError) return redirectError(target, e, req);
    throw e;
  }
  return advance(state, flow, req);
}

// ---------------------------------------------------------------------------------------
// GET /{tenant}/v2.0/adminconsent
// ---------------------------------------------------------------------------------------

export function handleAdminConsent(state: IdentityState, query: URLSearchParams, req: RequestInfo): Outcome {
  state.counters.adminConsentRequests++;
  const client = checkClient(state, query, req);
  if ('status' in client) return client;
  const target: RedirectTarget = { redirectUri: client.redirectUri, responseMode: 'query', state: param(query, 'state'), adminConsent: true };
  let scopes: ParsedScopes;
  try {
    scopes = parseScopeParam(state, query);
  } catch (e) {
    if (e instanceof AadError) return redirectError(target, e, req);
    throw e;
  }
  const flow = state.flows.create(
    {
      kind: 'adminconsent',
      tenantSegment: req.tenant,
      app: client.app,
      target,
      scopes,
      prompt: undefined,
      loginHint: undefined,
      challenge: null,
      nonce: undefined,
      needsLogin: false,
    },
    req.now,
  );
  return advance(state, flow, req);
}

// ---------------------------------------------------------------------------------------
// The flow's next step
// ---------------------------------------------------------------------------------------

function sessionUser(state: IdentityState, req: RequestInfo): UserRecord | undefined {
  const session = state.sessions.lookup(readCookie(req.cookieHeader, SESSION_COOKIE), req.now, (userId) => state.directory.userById(userId)?.validFromSeq);
  return session ? state.directory.userById(session.userId) : undefined;
}

function uniqueByKey(scopes: GrantScope[]): GrantScope[] {
  const seen = new Map<string, GrantScope>();
  for (const s of scopes) if (!seen.has(s.key)) seen.set(s.key, s);
  return [...seen.values()];
}

function staticPermissions(app: AppRecord): GrantScope[] {
  return app.permissions.map(configScope).filter((g): g is GrantScope => g !== null);
}

/**
 * What the request asks the user to have consented to. `.default` stands for the app's
 * registered permissions when no consent exists yet, and for nothing new otherwise
 * (with any grant in place it just returns what was granted). Admin consent always asks
 * for the registered permissions.
 */
function requestedScopes(state: IdentityState, flow: Flow, user: UserRecord): GrantScope[] {
  const out = [...flow.scopes.explicit.map(grantScopeOf), ...flow.scopes.oidc.map(oidcGrantScope)];
  if (flow.scopes.defaults.length > 0 && (flow.kind === 'adminconsent' || !state.grants.hasAny(user.id, flow.app.clientId))) {
    out.push(...staticPermissions(flow.app));
  }
  return uniqueByKey(out);
}

function adminOnlyKeys(state: IdentityState): Set<string> {
  return new Set(
    state.settings.adminConsentScopes
      .map(configScope)
      .filter((g): g is GrantScope => g !== null)
      .map((g) => g.key),
  );
}

function showSignIn(flow: Flow, error?: string, username?: string): Outcome {
  flow.stage = 'login';
  return htmlOutcome(
    200,
    signInPage({ action: formAction(flow, 'login'), flowToken: flow.id, appName: flow.app.displayName, username: username ?? flow.loginHint, error }),
  );
}

function advance(state: IdentityState, flow: Flow, req: RequestInfo): Outcome {
  // 1. Who is signing in.
  if (flow.userId === undefined) {
    const current = sessionUser(state, req);
    const hintMismatch = current !== undefined && flow.loginHint !== undefined && current.username.toLowerCase() !== flow.loginHint.toLowerCase();
    if (current && !flow.needsLogin && !hintMismatch) {
      flow.userId = current.id;
    } else if (flow.prompt === 'none') {
      return finishWithError(state, flow, AAD.noSession(), req);
    } else {
      return showSignIn(flow);
    }
  }
  const user = state.directory.userById(flow.userId);
  if (!user) return showSignIn(flow);

  const requested = requestedScopes(state, flow, user);
  if (flow.kind === 'adminconsent') {
    if (!user.isAdmin) return showAdminApproval(flow, user, requested);
    flow.stage = 'consent';
    flow.pendingConsent = requested;
    return consentOutcome(flow, user, true);
  }

  // 2. Admin-only scopes a non-admin cannot consent to (tenant-wide grants count as given).
  const granted = state.grants.granted(user.id, flow.app.clientId);
  const missing = requested.filter((g) => !granted.has(g.key));
  const adminOnly = adminOnlyKeys(state);
  const needAdmin = user.isAdmin ? [] : missing.filter((g) => adminOnly.has(g.key));
  const interaction = () => finishWithError(state, flow, AAD.consentRequired(flow.app.clientId, flow.app.displayName, 'interaction_required'), req);
  if (needAdmin.length > 0) {
    if (flow.prompt === 'none') return interaction();
    return showAdminApproval(flow, user, needAdmin);
  }

  // 3. Consent (prompt=consent asks even when everything is granted, once).
  const ask = flow.consentDone ? [] : flow.prompt === 'consent' ? requested : missing;
  if (ask.length > 0) {
    if (flow.prompt === 'none') return interaction();
    flow.stage = 'consent';
    flow.pendingConsent = ask;
    return consentOutcome(flow, user, false, user.isAdmin);
  }

  // 4. Done: a code for the app.
  return issueCode(state, flow, user, req);
}

function showAdminApproval(flow: Flow, user: UserRecord, scopes: GrantScope[]): Outcome {
  flow.stage = 'admin-approval';
  return htmlOutcome(
    200,
    adminApprovalPage({
      action: formAction(flow, 'consent'),
      flowToken: flow.id,
      appName: flow.app.displayName,
      username: user.username,
      scopes: scopeLines(scopes),
    }),
  );
}

function consentOutcome(flow: Flow, user: UserRecord, forOrganization: boolean, offerOrganizationConsent = false): Outcome {
  return htmlOutcome(
    200,
    consentPage({
      action: formAction(flow, 'consent'),
      flowToken: flow.id,
      appName: flow.app.displayName,
      username: user.username,
      scopes: scopeLines(flow.pendingConsent),
      offerOrganizationConsent,
      forOrganization,
    }),
  );
}

function issueCode(state: IdentityState, flow: Flow, user: UserRecord, req: RequestInfo): Outcome {
  const code = state.codes.issue({
    userId: user.id,
    clientId: flow.app.clientId,
    redirectUri: flow.target.redirectUri,
    scopes: flow.scopes,
    challenge: flow.challenge,
    nonce: flow.nonce,
    expiresAt: req.now + state.settings.codeLifetimeMs,
    redeemed: false,
  });
  state.counters.issued.codes++;
  state.flows.end(flow.id);
  return redirect(flow.target, [['code', code]]);
}

// ---------------------------------------------------------------------------------------
// POST /{tenant}/login: fields flowToken, loginfmt, passwd
// ---------------------------------------------------------------------------------------

export function handleLogin(state: IdentityState, form: URLSearchParams, req: RequestInfo): Outcome {
  const flow = state.flows.get(param(form, 'flowToken'), req.now);
  if (!flow || flow.stage !== 'login') return htmlOutcome(400, flowGonePage());
  const username = (param(form, 'loginfmt') ?? '').trim();
  const password = param(form, 'passwd') ?? '';
  const fail = (message: string) => {
    state.counters.signIns.failed++;
    return showSignIn(flow, message, username);
  };
  if (username === '') return fail('Enter a valid email address, phone number, or Skype name.');
  const user = state.directory.findUser(username);
  if (!user || user.username.toLowerCase() !== username.toLowerCase()) {
    return fail('This username may be incorrect. Make sure you typed it correctly. Otherwise, contact your admin.');
  }
  if (password === '') return fail('Please enter your password.');
  if (password !== user.password) return fail("Your account or password is incorrect. If you don't remember your password, reset it now.");

  state.counters.signIns.succeeded++;
  const session = state.sessions.create(user.id, state.nextSeq(), req.now);
  flow.userId = user.id;
  flow.needsLogin = false;
  return withHeader(advance(state, flow, req), 'set-cookie', sessionCookie(session.id));
}

// ---------------------------------------------------------------------------------------
// POST /{tenant}/consent: fields flowToken, action, consent_on_behalf
// ---------------------------------------------------------------------------------------

export function handleConsent(state: IdentityState, form: URLSearchParams, req: RequestInfo): Outcome {
  const flow = state.flows.get(param(form, 'flowToken'), req.now);
  const user = flow?.userId !== undefined ? state.directory.userById(flow.userId) : undefined;
  if (!flow || !user) return htmlOutcome(400, flowGonePage());
  const action = param(form, 'action');

  if (flow.stage === 'consent' && action === 'accept') {
    state.counters.consents.accepted++;
    if (flow.kind === 'adminconsent') {
      state.grants.grantTenant(flow.app.clientId, flow.pendingConsent);
      state.flows.end(flow.id);
      const host = state.settings.sharePointHost;
      return redirect(flow.target, [
        ['tenant', state.directory.tenant.id],
        ['scope', flow.pendingConsent.map((g) => fullScopeName(g, host)).join(' ')],
      ]);
    }
    state.grants.grantUser(user.id, flow.app.clientId, flow.pendingConsent);
    if (user.isAdmin && param(form, 'consent_on_behalf') === 'true') {
      state.grants.grantTenant(flow.app.clientId, requestedScopes(state, flow, user));
    }
    flow.consentDone = true;
    return advance(state, flow, req);
  }
  if (flow.stage === 'consent' && action === 'cancel') {
    state.counters.consents.declined++;
    return finishWithError(state, flow, AAD.userDeclined(), req);
  }
  if (flow.stage === 'admin-approval' && action === 'return') {
    return finishWithError(state, flow, AAD.adminApprovalRequired(), req);
  }
  if (flow.stage === 'admin-approval' && action === 'switch_account') {
    flow.userId = undefined;
    flow.needsLogin = true;
    flow.loginHint = undefined;
    return showSignIn(flow);
  }
  return htmlOutcome(400, flowGonePage());
}

// ---------------------------------------------------------------------------------------
// GET /{tenant}/oauth2/v2.0/logout
// ---------------------------------------------------------------------------------------

export function handleLogout(state: IdentityState, query: URLSearchParams, req: RequestInfo): Outcome {
  state.sessions.end(readCookie(req.cookieHeader, SESSION_COOKIE));
  const after = param(query, 'post_logout_redirect_uri');
  let out: Outcome = htmlOutcome(200, signedOutPage());
  if (after && /^https?:\/\//i.test(after)) out = redirectOutcome(after);
  return withHeader(out, 'set-cookie', clearedSessionCookie());
}
