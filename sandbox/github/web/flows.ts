/**
 * The browser-facing github.com routes: sign-in, the OAuth App web flow (authorize page and
 * code-for-token exchange) and the GitHub App install page. They answer
 * HTML (or the token endpoint's form/JSON), never the REST pipeline's rate-limit headers:
 * on GitHub they live on github.com, not api.github.com. Here both share one host.
 */
import type http from 'node:http';
import { AUTHORIZE_ERRORS, CODE_CHALLENGE_RE, parseScopes, redirectUriAllowedByAny, withParams, type OAuthState } from '../oauth';
import type { AppInfo } from '../render';
import type { GitHubStore } from '../store';
import type { UserDirectory, UserRec } from '../users';
import { html } from './html';
import { appPage, authorizePage, installPage, messagePage, signedInPage, signInPage } from './pages';
import { parseCookies, PendingStore, sessionCookie, sessionCookieName, SessionStore } from './sessions';

export interface WebRequest {
  method: string;
  /** Path and query as received (host irrelevant). */
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
  nowMs: number;
  /** The simulator's base URL, for absolute redirects and the cookie name. */
  base: string;
}

export interface WebReply {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  /** The parsed request body (form or JSON), for the request log (which redacts it). */
  form?: URLSearchParams;
}

export interface WebDeps {
  oauth: OAuthState;
  users: UserDirectory;
  store: GitHubStore;
  app: AppInfo;
  setupUrl(): string | null;
  /**
   * "Request user authorization (OAuth) during installation": the callback URL the install
   * page then sends the browser to with a code (instead of the Setup URL), or null when off.
   */
  installAuthorizationUrl(): string | null;
  rememberGrants(): boolean;
  events: {
    authorized(): void;
    exchanged(ok: boolean): void;
    installed(created: boolean): void;
  };
}

interface AuthorizeRequest {
  clientId: string;
  login: string;
  redirectUri: string | null;
  target: string;
  scopes: string[];
  state: string | null;
  codeChallenge: string | null;
}

interface InstallRequest {
  login: string;
  state: string | null;
}

const APP_PATH = /^\/apps\/([^/]+)$/;
const INSTALL_NEW_PATH = /^\/apps\/([^/]+)\/installations\/new$/;
const INSTALL_POST_PATH = /^\/apps\/([^/]+)\/installations$/;

function htmlReply(status: number, body: string, headers: Record<string, string | string[]> = {}): WebReply {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers }, body };
}

function redirect(location: string, headers: Record<string, string | string[]> = {}): WebReply {
  return { status: 302, headers: { location, 'cache-control': 'no-store', ...headers }, body: '' };
}

/** Only local paths: `return_to` must never send the browser elsewhere (open redirect). */
function safeReturnTo(raw: string | null): string | null {
  if (raw === null || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return null;
  return raw;
}

/** Form bodies, or JSON bodies (the token endpoint takes both); anything else is empty. */
function bodyParams(req: WebRequest): URLSearchParams {
  const type = String(req.headers['content-type'] ?? '');
  if (!/application\/json/i.test(type)) return new URLSearchParams(req.body);
  const out = new URLSearchParams();
  try {
    const parsed: unknown = JSON.parse(req.body);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string' || typeof v === 'number') out.set(k, String(v));
    }
  } catch {
    // An unreadable body carries no parameters; the exchange then fails on credentials.
  }
  return out;
}

/** `/apps/{slug}` is JSON on api.github.com: only browsers (not JSON clients) get the page. */
function wantsJson(headers: http.IncomingHttpHeaders): boolean {
  const accept = String(headers.accept ?? '');
  return /application\/(vnd\.github[^,;]*|json)/i.test(accept) && !/text\/html/i.test(accept);
}

export function createWebFlows(deps: WebDeps) {
  const { oauth, users, store, app } = deps;
  const sessions = new SessionStore();
  const pendingAuth = new PendingStore<AuthorizeRequest>();
  const pendingInstall = new PendingStore<InstallRequest>();

  function sessionId(req: WebRequest): string | undefined {
    return parseCookies(req.headers.cookie).get(sessionCookieName(req.base));
  }

  function currentUser(req: WebRequest): UserRec | undefined {
    const login = sessions.login(sessionId(req));
    return login === undefined ? undefined : users.get(login);
  }

  function toLogin(req: WebRequest, returnTo: string, extra: Record<string, string | null> = {}): WebReply {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(extra)) if (v !== null) q.set(k, v);
    q.set('return_to', returnTo);
    return redirect(`${req.base}/login?${q.toString()}`);
  }

  function notFoundPage(req: WebRequest): WebReply {
    return htmlReply(404, messagePage({ title: 'Page not found', text: 'This is not the web page you are looking for.', login: currentUser(req)?.login }));
  }

  // ---- sign-in ---------------------------------------------------------------------------

  /** The OAuth App a return_to leads back to (named on the sign-in page). */
  function appNameFor(returnTo: string | null): string | null {
    if (returnTo === null) return null;
    const u = new URL(returnTo, 'http://x');
    if (u.pathname === '/login/oauth/authorize') return oauth.apps.get(u.searchParams.get('client_id') ?? '')?.name ?? null;
    if (INSTALL_NEW_PATH.test(u.pathname)) return app.name;
    return null;
  }

  function getLogin(req: WebRequest): WebReply {
    const q = req.url.searchParams;
    const returnTo = safeReturnTo(q.get('return_to'));
    const user = currentUser(req);
    // Signed in already: carry on, unless the flow asked to pick an account again.
    if (user && q.get('prompt') !== 'select_account') return returnTo ? redirect(req.base + returnTo) : htmlReply(200, signedInPage(user.login));
    return htmlReply(
      200,
      signInPage({ returnTo: returnTo ?? '/login', login: q.get('login'), appName: appNameFor(returnTo), allowSignup: q.get('allow_signup') !== 'false' }),
    );
  }

  function postSession(req: WebRequest, form: URLSearchParams): WebReply {
    const returnTo = safeReturnTo(form.get('return_to')) ?? '/login';
    const user = users.verify(form.get('login') ?? '', form.get('password') ?? '');
    if (!user) {
      return htmlReply(
        200,
        signInPage({ returnTo, login: form.get('login'), error: 'Incorrect username or password.', appName: appNameFor(returnTo), allowSignup: true }),
      );
    }
    sessions.delete(sessionId(req));
    const id = sessions.create(user.login);
    return redirect(req.base + returnTo, { 'set-cookie': sessionCookie(sessionCookieName(req.base), id) });
  }

  function logout(req: WebRequest): WebReply {
    sessions.delete(sessionId(req));
    return redirect(`${req.base}/login`, { 'set-cookie': sessionCookie(sessionCookieName(req.base), null) });
  }

  // ---- OAuth App web flow ----------------------------------------------------------------

  function getAuthorize(req: WebRequest): WebReply {
    const q = req.url.searchParams;
    const client = oauth.apps.get(q.get('client_id') ?? '');
    if (!client) return notFoundPage(req);
    const state = q.get('state');
    const given = q.get('redirect_uri') || null;
    const registered = client.callbackUrls[0];
    // A GitHub App without a callback URL cannot authorize users at all.
    if (registered === undefined) {
      return htmlReply(
        200,
        messagePage({
          title: 'Redirect URI not set',
          text: 'This application has no callback URL, so it cannot authorize users.',
          login: currentUser(req)?.login,
        }),
      );
    }
    // GitHub answers a bad redirect_uri at the registered callback, never at the given URL.
    if (given !== null && !redirectUriAllowedByAny(client.callbackUrls, given)) {
      return redirect(withParams(registered, { ...AUTHORIZE_ERRORS.redirect_uri_mismatch, state }));
    }
    const target = given ?? registered;
    const challenge = q.get('code_challenge');
    const method = q.get('code_challenge_method');
    if (challenge !== null || method !== null) {
      if (method !== 'S256' || challenge === null || !CODE_CHALLENGE_RE.test(challenge)) {
        return redirect(withParams(target, { ...AUTHORIZE_ERRORS.invalid_request, state }));
      }
    }
    const user = currentUser(req);
    if (!user || q.get('prompt') === 'select_account') {
      // Back here after sign-in, without `prompt` so the account choice is not asked again.
      const back = new URLSearchParams(q);
      back.delete('prompt');
      return toLogin(req, `/login/oauth/authorize?${back.toString()}`, {
        client_id: client.clientId,
        login: q.get('login'),
        allow_signup: q.get('allow_signup'),
        prompt: q.get('prompt') === 'select_account' ? 'select_account' : null,
      });
    }
    const pending: AuthorizeRequest = {
      clientId: client.clientId,
      login: user.login,
      redirectUri: given,
      target,
      // GitHub Apps have no scopes: their permissions apply to user tokens.
      scopes: client.kind === 'github-app' ? [] : parseScopes(q.get('scope')),
      state,
      codeChallenge: challenge,
    };
    // Already granted every requested scope: GitHub redirects at once, no page.
    if (deps.rememberGrants() && oauth.grantCovers(user.login, client.clientId, pending.scopes)) return approve(req, pending);
    const pendingId = pendingAuth.create(pending, req.nowMs);
    return htmlReply(
      200,
      authorizePage({ appName: client.name, homepageUrl: client.homepageUrl, login: user.login, scopes: pending.scopes, pendingId, redirectTo: target }),
    );
  }

  function approve(req: WebRequest, p: AuthorizeRequest): WebReply {
    const code = oauth.authorize(
      { clientId: p.clientId, login: p.login, redirectUri: p.redirectUri, scopes: p.scopes, codeChallenge: p.codeChallenge },
      req.nowMs,
    );
    deps.events.authorized();
    return redirect(withParams(p.target, { code, state: p.state }));
  }

  function postAuthorize(req: WebRequest, form: URLSearchParams): WebReply {
    const user = currentUser(req);
    if (!user)
      return htmlReply(403, messagePage({ title: 'Sign in again', text: html`Your session has ended. <a href="/login">Sign in</a> and start again.` }));
    const id = form.get('authorize_request');
    const p = pendingAuth.get(id, req.nowMs);
    if (!p || p.login !== user.login) {
      return htmlReply(
        422,
        messagePage({
          title: 'Request expired',
          text: 'This authorization request has expired or was already answered. Start again from the application.',
          login: user.login,
        }),
      );
    }
    pendingAuth.delete(id);
    if (form.get('authorize') === '1') return approve(req, p);
    return redirect(withParams(p.target, { ...AUTHORIZE_ERRORS.access_denied, state: p.state }));
  }

  function postAccessToken(req: WebRequest, form: URLSearchParams): WebReply {
    const params = new URLSearchParams(req.url.searchParams);
    for (const [k, v] of form) params.set(k, v);
    const result = oauth.exchange(params, req.nowMs);
    deps.events.exchanged(result.ok);
    const body: Record<string, string | number> = { ...result.body };
    // Errors too come back with HTTP 200.
    if (/application\/json/i.test(String(req.headers.accept ?? ''))) {
      return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }, body: JSON.stringify(body) };
    }
    return {
      status: 200,
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', 'cache-control': 'no-store' },
      body: new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)])).toString(),
    };
  }

  // ---- GitHub App installation -----------------------------------------------------------

  function getAppPage(req: WebRequest, slug: string): WebReply {
    if (slug.toLowerCase() !== app.slug.toLowerCase()) return notFoundPage(req);
    const state = req.url.searchParams.get('state');
    const installHref = `/apps/${app.slug}/installations/new${state !== null ? `?${new URLSearchParams({ state })}` : ''}`;
    return htmlReply(200, appPage({ appName: app.name, slug: app.slug, installHref, login: currentUser(req)?.login ?? null }));
  }

  function installForm(user: UserRec, pendingId: string, extra: { chosen?: { selection: string; repoIds: ReadonlySet<number> }; error?: string } = {}): string {
    const owner = store.owner(user.login);
    const inst = owner?.installationId != null ? store.installations.get(owner.installationId) : undefined;
    return installPage({
      appName: app.name,
      slug: app.slug,
      login: user.login,
      repos: store.ownedRepos(user.login).map((r) => ({ id: r.id, fullName: r.fullName, private: r.private })),
      pendingId,
      existing: inst ? { id: inst.id, selectedRepoIds: inst.selectedRepoIds } : null,
      ...extra,
    });
  }

  function getInstallNew(req: WebRequest, slug: string): WebReply {
    if (slug.toLowerCase() !== app.slug.toLowerCase()) return notFoundPage(req);
    const user = currentUser(req);
    if (!user) return toLogin(req, req.url.pathname + req.url.search);
    const pendingId = pendingInstall.create({ login: user.login, state: req.url.searchParams.get('state') }, req.nowMs);
    return htmlReply(200, installForm(user, pendingId));
  }

  function postInstall(req: WebRequest, slug: string, form: URLSearchParams): WebReply {
    if (slug.toLowerCase() !== app.slug.toLowerCase()) return notFoundPage(req);
    const user = currentUser(req);
    if (!user)
      return htmlReply(403, messagePage({ title: 'Sign in again', text: html`Your session has ended. <a href="/login">Sign in</a> and start again.` }));
    const id = form.get('install_request');
    const p = pendingInstall.get(id, req.nowMs);
    if (!p || p.login !== user.login) {
      return htmlReply(
        422,
        messagePage({
          title: 'Request expired',
          text: 'This installation request has expired or was already answered. Start again from the application.',
          login: user.login,
        }),
      );
    }
    if (form.get('action') === 'cancel') {
      // GitHub has no setup_action for a cancelled install (only install, update, request):
      // the Setup URL is never called, so the browser stays on GitHub and the integration's
      // pending connection is simply never completed.
      pendingInstall.delete(id);
      return htmlReply(
        200,
        messagePage({ title: 'Installation cancelled', text: `${app.name} was not installed. Nothing changed on ${user.login}.`, login: user.login }),
      );
    }
    const selection = form.get('repository_selection') ?? 'all';
    const owned = new Map(store.ownedRepos(user.login).map((r) => [r.id, r]));
    const repoIds = new Set(
      form
        .getAll('repository_ids')
        .map(Number)
        .filter((n) => owned.has(n)),
    );
    if (selection !== 'all' && selection !== 'selected') {
      return htmlReply(
        422,
        installForm(user, id!, { chosen: { selection: 'all', repoIds }, error: 'Choose "All repositories" or "Only select repositories".' }),
      );
    }
    if (selection === 'selected' && repoIds.size === 0) {
      return htmlReply(422, installForm(user, id!, { chosen: { selection, repoIds }, error: 'Select at least one repository.' }));
    }
    pendingInstall.delete(id);
    const { installation, created } = store.install(user.login, selection === 'all' ? null : repoIds, req.nowMs);
    deps.events.installed(created);
    const setupAction = created ? 'install' : 'update';
    // With user authorization requested during installation, GitHub sends the browser to the
    // App's callback URL with a code for a user token (the Setup URL is then unused): the
    // app can check, with that token, that the installation is really this user's.
    const callbackUrl = deps.installAuthorizationUrl();
    if (callbackUrl !== null) {
      const code = oauth.authorize({ clientId: app.clientId, login: user.login, redirectUri: null, scopes: [], codeChallenge: null }, req.nowMs);
      deps.events.authorized();
      return redirect(withParams(callbackUrl, { code, installation_id: installation.id, setup_action: setupAction, state: p.state }));
    }
    const setupUrl = deps.setupUrl();
    if (setupUrl !== null) return redirect(withParams(setupUrl, { installation_id: installation.id, setup_action: setupAction, state: p.state }));
    return htmlReply(
      200,
      messagePage({
        title: created ? `${app.name} installed` : `${app.name} updated`,
        text: html`${app.name} is installed on <strong>${user.login}</strong> (installation <span data-installation-id="${installation.id}">${installation.id}</span>, setup_action <code>${setupAction}</code>). The App has no Setup URL, so this page is the end of the flow.`,
        login: user.login,
      }),
    );
  }

  // ---- dispatch --------------------------------------------------------------------------

  return {
    /** Whether a request belongs to github.com rather than the REST API. */
    isWebRequest(method: string, path: string, headers: http.IncomingHttpHeaders): boolean {
      if (method === 'GET') {
        if (path === '/login' || path === '/signup' || path === '/logout' || path === '/login/oauth/authorize') return true;
        if (INSTALL_NEW_PATH.test(path)) return true;
        return APP_PATH.test(path) && !wantsJson(headers);
      }
      if (method === 'POST') {
        return (
          path === '/session' || path === '/logout' || path === '/login/oauth/authorize' || path === '/login/oauth/access_token' || INSTALL_POST_PATH.test(path)
        );
      }
      return false;
    },

    handle(req: WebRequest): WebReply {
      const path = req.url.pathname;
      const form = req.method === 'POST' ? bodyParams(req) : undefined;
      const reply = route(req, path, form ?? new URLSearchParams());
      if (form) reply.form = form;
      return reply;
    },

    /** Signs every browser out. */
    clearSessions(): void {
      sessions.clear();
    },
  };

  function route(req: WebRequest, path: string, form: URLSearchParams): WebReply {
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    };
    if (req.method === 'GET') {
      if (path === '/login') return getLogin(req);
      if (path === '/logout') return logout(req);
      if (path === '/signup')
        return htmlReply(200, messagePage({ title: 'Join GitHub', text: 'Signing up is not available in the sandbox. Sign in with a configured user.' }));
      if (path === '/login/oauth/authorize') return getAuthorize(req);
      const install = INSTALL_NEW_PATH.exec(path);
      if (install) return getInstallNew(req, decode(install[1]));
      const appMatch = APP_PATH.exec(path);
      if (appMatch) return getAppPage(req, decode(appMatch[1]));
    } else {
      if (path === '/session') return postSession(req, form);
      if (path === '/logout') return logout(req);
      if (path === '/login/oauth/authorize') return postAuthorize(req, form);
      if (path === '/login/oauth/access_token') return postAccessToken(req, form);
      const install = INSTALL_POST_PATH.exec(path);
      if (install) return postInstall(req, decode(install[1]), form);
    }
    return notFoundPage(req);
  }
}

export type WebFlows = ReturnType<typeof createWebFlows>;
