import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import { CODE_TTL_MS, createGitHubSimulator, DEFAULT_OAUTH_APP, DEFAULT_USER, type GitHubSimulator, type GitHubSimulatorOptions } from '../../sandbox/github';

type Json = Record<string, any>;

const UA = 'weft-tests/1.0';
const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
/** Where the default OAuth App sends codes (loopback callback: any port matches). */
const CALLBACK = 'http://127.0.0.1:4567/oauth/callback';
// One RSA key for every simulator here: generating one per test is the slow part.
const PRIVATE_KEY_PEM = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

const running: GitHubSimulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function startSim(options: GitHubSimulatorOptions = {}) {
  const clock = { t: T0 };
  const sim = createGitHubSimulator({ now: () => clock.t, privateKeyPem: PRIVATE_KEY_PEM, pullsPerRepo: 3, ...options });
  running.push(sim);
  const base = await sim.start();
  return { sim, base, clock };
}

// ---- a tiny "browser": cookies by hand, forms parsed from the HTML ----------------------

interface Page {
  status: number;
  url: string;
  location: string | null;
  html: string;
  headers: Headers;
}

class Browser {
  readonly cookies = new Map<string, string>();

  constructor(private readonly base: string) {}

  async request(url: string, o: { method?: string; form?: Record<string, string | string[]> } = {}): Promise<Page> {
    const abs = new URL(url, this.base).toString();
    const headers: Record<string, string> = { accept: 'text/html' };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (o.form) {
      const p = new URLSearchParams();
      for (const [k, v] of Object.entries(o.form)) for (const item of Array.isArray(v) ? v : [v]) p.append(k, item);
      body = p.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(abs, { method: o.method ?? (o.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(i + 1).trim());
    }
    return { status: res.status, url: abs, location: res.headers.get('location'), html: await res.text(), headers: res.headers };
  }

  /** Follows redirects while they stay on the simulator; stops at the first one leaving it. */
  async follow(first: Page): Promise<Page> {
    let page = first;
    for (let i = 0; i < 10 && page.status === 302 && page.location && page.location.startsWith(this.base); i++) page = await this.request(page.location);
    return page;
  }

  async open(url: string): Promise<Page> {
    return this.follow(await this.request(url));
  }

  /** Submits the page's (only or matching) form with its hidden fields plus `fields`. */
  async submit(page: Page, fields: Record<string, string | string[]>, action?: string): Promise<Page> {
    const form = forms(page.html).find((f) => action === undefined || f.action === action);
    if (!form) throw new Error(`no form${action ? ` ${action}` : ''} on ${page.url}:\n${page.html}`);
    return this.request(form.action, { form: { ...form.hidden, ...fields } });
  }

  async signIn(page: Page, login: string = DEFAULT_USER.login, password: string = DEFAULT_USER.password): Promise<Page> {
    expect(page.html).toContain('<label for="login_field">Username or email address</label>');
    expect(page.html).toContain('<label for="password">Password</label>');
    expect(page.html).toMatch(/<button type="submit"[^>]*>Sign in<\/button>/);
    return this.follow(await this.submit(page, { login, password }, '/session'));
  }
}

function decodeEntities(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function forms(html: string): Array<{ action: string; hidden: Record<string, string>; buttons: string[] }> {
  return [...html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)].map((m) => ({
    action: decodeEntities(m[1]),
    hidden: Object.fromEntries([...m[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((h) => [h[1], decodeEntities(h[2])])),
    buttons: [...m[2].matchAll(/<button[^>]*>([^<]*)<\/button>/g)].map((b) => b[1]),
  }));
}

function authorizeUrl(params: Record<string, string>): string {
  return `/login/oauth/authorize?${new URLSearchParams({ client_id: DEFAULT_OAUTH_APP.clientId, ...params })}`;
}

/** Runs the authorize page to its redirect (signing in first); returns the redirect's query. */
async function authorize(browser: Browser, params: Record<string, string>, decision: '1' | '0' = '1'): Promise<URLSearchParams> {
  let page = await browser.open(authorizeUrl(params));
  if (page.url.includes('/login?')) page = await browser.signIn(page);
  if (page.status === 200) page = await browser.submit(page, { authorize: decision });
  expect(page.status).toBe(302);
  return new URL(page.location!).searchParams;
}

async function exchange(base: string, params: Record<string, string>, accept = 'application/json'): Promise<Response> {
  return fetch(`${base}/login/oauth/access_token`, {
    method: 'POST',
    headers: { accept, 'content-type': 'application/x-www-form-urlencoded', 'user-agent': UA },
    body: new URLSearchParams({ client_id: DEFAULT_OAUTH_APP.clientId, client_secret: DEFAULT_OAUTH_APP.clientSecret, ...params }).toString(),
  });
}

function api(base: string, path: string, auth?: string): Promise<Response> {
  const headers: Record<string, string> = { 'user-agent': UA, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };
  if (auth) headers.authorization = auth;
  return fetch(base + path, { headers });
}

async function installationToken(sim: GitHubSimulator, base: string, nowMs: number, installationId: number): Promise<string> {
  const nowS = Math.floor(nowMs / 1000);
  const jwt = await new SignJWT({ iat: nowS - 60, exp: nowS + 540, iss: sim.app.clientId })
    .setProtectedHeader({ alg: 'RS256' })
    .sign(crypto.createPrivateKey(sim.appPrivateKeyPem));
  const res = await fetch(`${base}/app/installations/${installationId}/access_tokens`, {
    method: 'POST',
    headers: { 'user-agent': UA, accept: 'application/vnd.github+json', authorization: `Bearer ${jwt}` },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as Json).token;
}

// ---------------------------------------------------------------------------------------

describe('GitHub simulator: OAuth App web flow', () => {
  it('signs in, authorizes, exchanges the code and uses the token on /user and /user/repos', async () => {
    const { sim, base } = await startSim();
    const browser = new Browser(base);

    // Not signed in: GitHub sends the browser to /login with the authorize URL as return_to.
    const first = await browser.request(authorizeUrl({ redirect_uri: CALLBACK, scope: 'repo read:user', state: 'st-1', login: 'sandbox-user' }));
    expect(first.status).toBe(302);
    expect(first.location).toMatch(new RegExp(`^${base}/login\\?`));
    let page = await browser.follow(first);
    expect(page.html).toContain('to continue to <strong>Weft Sandbox OAuth</strong>');
    expect(page.html).toContain('value="sandbox-user"'); // `login` pre-fills the username

    // A wrong password re-renders the form with GitHub's message and no session.
    const wrong = await browser.follow(await browser.submit(page, { login: 'sandbox-user', password: 'nope' }));
    expect(wrong.status).toBe(200);
    expect(wrong.html).toContain('<div role="alert">Incorrect username or password.</div>');
    expect(browser.cookies.size).toBe(0);

    page = await browser.signIn(wrong);
    expect(browser.cookies.size).toBe(1);
    expect(page.status).toBe(200);
    expect(page.html).toContain('<h1>Authorize Weft Sandbox OAuth</h1>');
    expect(page.html).toContain('data-scope="repo"');
    expect(page.html).toContain('data-scope="read:user"');
    const [form] = forms(page.html);
    expect(form.buttons).toEqual(['Authorize Weft Sandbox OAuth', 'Cancel']);
    expect(form.hidden.authorize_request).toMatch(/^[A-Za-z0-9_-]{20,}$/);

    const done = await browser.submit(page, { authorize: '1' });
    expect(done.status).toBe(302);
    const redirect = new URL(done.location!);
    expect(redirect.origin + redirect.pathname).toBe(CALLBACK);
    expect(redirect.searchParams.get('state')).toBe('st-1');
    const code = redirect.searchParams.get('code')!;
    expect(code).toMatch(/^[0-9a-f]{20}$/);

    const res = await exchange(base, { code, redirect_uri: CALLBACK });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const token = (await res.json()) as Json;
    expect(token).toEqual({ access_token: expect.stringMatching(/^gho_[A-Za-z0-9]{36}$/), scope: 'repo,read:user', token_type: 'bearer' });

    const me = await api(base, '/user', `Bearer ${token.access_token}`);
    expect(me.status).toBe(200);
    expect(me.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(me.headers.get('x-ratelimit-used')).toBe('1');
    expect(me.headers.get('x-oauth-scopes')).toBe('repo, read:user');
    const user = (await me.json()) as Json;
    expect(user).toMatchObject({ login: 'sandbox-user', type: 'User', name: 'Sandbox User', email: 'sandbox-user@example.com' });
    expect(user.id).toBe(sim.users()[0].id);

    // `token` prefix works too; the same per-user bucket counts; Link pagination as elsewhere.
    const p1 = await api(base, '/user/repos?per_page=2', `token ${token.access_token}`);
    expect(p1.status).toBe(200);
    expect(p1.headers.get('x-ratelimit-used')).toBe('2');
    expect(p1.headers.get('link')).toContain('rel="next"');
    const p2 = await api(base, '/user/repos?per_page=2&page=2', `token ${token.access_token}`);
    const names = [...((await p1.json()) as Json[]), ...((await p2.json()) as Json[])].map((r) => r.full_name);
    expect(names).toEqual([...sim.users()[0].repositories].sort());
    expect(names.every((n) => n.startsWith('sandbox-user/'))).toBe(true);

    expect(sim.stats()).toMatchObject({ oauthAuthorizations: 1, oauthTokenExchanges: 1, oauthTokenExchangeErrors: 0 });
    const dump = JSON.stringify(sim.requestLog());
    for (const secret of [code, token.access_token, DEFAULT_OAUTH_APP.clientSecret, DEFAULT_USER.password, 'nope']) expect(dump).not.toContain(secret);
    expect(sim.requestLog().find((e) => e.path === '/session')?.form).toMatchObject({ login: 'sandbox-user', password: '[redacted]' });
    expect(sim.requestLog().at(-1)).toMatchObject({ path: '/user/repos', status: 200, user: 'sandbox-user' });

    // Revocation: the token stops working at once.
    expect(sim.revokeOAuthToken(token.access_token)).toBe(true);
    expect((await api(base, '/user', `Bearer ${token.access_token}`)).status).toBe(401);
  });

  it('skips the page for a remembered grant until the user revokes the app', async () => {
    const { sim, base } = await startSim();
    const browser = new Browser(base);
    const code1 = (await authorize(browser, { scope: 'repo' })).get('code')!;
    expect((await exchange(base, { code: code1 })).status).toBe(200);
    // Same scopes again: straight back with a code, no page.
    const again = await browser.request(authorizeUrl({ scope: 'repo', state: 's2' }));
    expect(again.status).toBe(302);
    expect(new URL(again.location!).searchParams.get('state')).toBe('s2');
    // A new scope needs the page.
    expect((await browser.request(authorizeUrl({ scope: 'repo gist' }))).status).toBe(200);
    expect(sim.revokeOAuthAuthorization('sandbox-user')).toBe(1);
    expect((await browser.request(authorizeUrl({ scope: 'repo' }))).status).toBe(200);
  });

  it('redirects with access_denied when the user cancels', async () => {
    const { sim, base } = await startSim();
    const q = await authorize(new Browser(base), { redirect_uri: CALLBACK, state: 'cancel-me' }, '0');
    expect(Object.fromEntries(q)).toEqual({
      error: 'access_denied',
      error_description: 'The user has denied your application access.',
      error_uri: expect.stringMatching(/^https:\/\/docs\.github\.com\/.+#access-denied$/),
      state: 'cancel-me',
    });
    expect(sim.stats().oauthAuthorizations).toBe(0);
  });

  it('answers a bad redirect_uri at the registered callback, and an unknown client with a 404 page', async () => {
    const { base } = await startSim();
    const browser = new Browser(base);
    const bad = await browser.request(authorizeUrl({ redirect_uri: 'http://evil.example.com/oauth/callback', state: 'x' }));
    expect(bad.status).toBe(302);
    const loc = new URL(bad.location!);
    expect(loc.origin + loc.pathname).toBe(DEFAULT_OAUTH_APP.callbackUrl);
    expect(loc.searchParams.get('error')).toBe('redirect_uri_mismatch');
    expect(loc.searchParams.get('state')).toBe('x');
    // Loopback callbacks take any port; paths below the callback are fine; others are not.
    expect((await browser.request(authorizeUrl({ redirect_uri: 'http://127.0.0.1:1/oauth/callback/deeper' }))).location).toMatch(/\/login\?/);
    expect((await browser.request(authorizeUrl({ redirect_uri: 'http://127.0.0.1:1/other' }))).location).toMatch(/error=redirect_uri_mismatch/);

    const unknown = await browser.request('/login/oauth/authorize?client_id=nope');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('answers exchange errors with HTTP 200: replayed, expired and wrong codes, bad secret, redirect mismatch', async () => {
    const { sim, base, clock } = await startSim();
    const browser = new Browser(base);
    const code = (await authorize(browser, { redirect_uri: CALLBACK })).get('code')!;

    const errorOf = async (res: Response) => {
      expect(res.status).toBe(200);
      return ((await res.json()) as Json).error;
    };
    expect(await errorOf(await exchange(base, { code, client_secret: 'wrong' }))).toBe('incorrect_client_credentials');
    expect(await errorOf(await exchange(base, { code, client_id: 'Ov23liUnknown' }))).toBe('incorrect_client_credentials');
    expect(await errorOf(await exchange(base, { code: 'deadbeefdeadbeefdead' }))).toBe('bad_verification_code');
    expect(await errorOf(await exchange(base, { code, redirect_uri: 'http://127.0.0.1:4567/elsewhere' }))).toBe('redirect_uri_mismatch');
    // None of those used the code up; the first good exchange does.
    expect((await (await exchange(base, { code, redirect_uri: CALLBACK })).json()) as Json).toHaveProperty('access_token');
    const replay = (await (await exchange(base, { code })).json()) as Json;
    expect(replay).toEqual({
      error: 'bad_verification_code',
      error_description: 'The code passed is incorrect or expired.',
      error_uri: expect.stringMatching(/^https:\/\/docs\.github\.com\/.+#bad-verification-code$/),
    });

    // Codes live 10 minutes of the simulator's clock.
    const late = (await authorize(browser, { scope: 'gist' })).get('code')!;
    const onTime = (await authorize(browser, { scope: 'gist' })).get('code')!;
    clock.t += CODE_TTL_MS + 1000;
    expect(await errorOf(await exchange(base, { code: late }))).toBe('bad_verification_code');
    clock.t = T0 + CODE_TTL_MS;
    expect((await (await exchange(base, { code: onTime })).json()) as Json).toHaveProperty('access_token');

    expect(sim.stats()).toMatchObject({ oauthTokenExchanges: 2, oauthTokenExchangeErrors: 6 });
    expect(JSON.stringify(sim.requestLog())).not.toContain(code);
  });

  it('checks PKCE S256 and refuses other methods', async () => {
    const { base } = await startSim();
    const browser = new Browser(base);
    const verifier = crypto.randomBytes(32).toString('base64url');
    const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
    const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };

    const code = (await authorize(browser, { ...pkce, scope: 'repo' })).get('code')!;
    const err = async (params: Record<string, string>) => ((await (await exchange(base, params)).json()) as Json).error;
    expect(await err({ code })).toBe('bad_verification_code');
    expect(await err({ code, code_verifier: crypto.randomBytes(32).toString('base64url') })).toBe('bad_verification_code');
    expect((await (await exchange(base, { code, code_verifier: verifier })).json()) as Json).toMatchObject({ scope: 'repo', token_type: 'bearer' });

    const plain = await browser.request(authorizeUrl({ code_challenge: verifier, code_challenge_method: 'plain', state: 'p' }));
    expect(plain.status).toBe(302);
    expect(new URL(plain.location!).searchParams.get('error')).toBe('invalid_request');
    expect(new URL(plain.location!).searchParams.get('state')).toBe('p');
  });

  it('answers form-encoded by default, JSON on Accept: application/json, and takes JSON bodies', async () => {
    const { base } = await startSim();
    const browser = new Browser(base);
    const code1 = (await authorize(browser, { scope: 'repo gist' })).get('code')!;
    const form = await exchange(base, { code: code1 }, '*/*');
    expect(form.status).toBe(200);
    expect(form.headers.get('content-type')).toMatch(/^application\/x-www-form-urlencoded/);
    const text = await form.text();
    expect(text).toMatch(/^access_token=gho_[A-Za-z0-9]{36}&scope=repo%2Cgist&token_type=bearer$/);

    const formError = await (await exchange(base, { code: code1 }, '*/*')).text();
    expect(Object.fromEntries(new URLSearchParams(formError))).toMatchObject({ error: 'bad_verification_code' });

    const code2 = (await authorize(browser, { scope: 'repo gist' })).get('code')!;
    const json = await fetch(`${base}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: DEFAULT_OAUTH_APP.clientId, client_secret: DEFAULT_OAUTH_APP.clientSecret, code: code2 }),
    });
    expect((await json.json()) as Json).toMatchObject({ access_token: expect.stringMatching(/^gho_/), scope: 'repo,gist' });
  });

  it('keeps user tokens to user routes, private repositories to the repo scope, and limits per user', async () => {
    const { sim, base } = await startSim();
    const browser = new Browser(base);
    const tokenFor = async (scope: string) => {
      const code = (await authorize(browser, { scope })).get('code')!;
      return ((await (await exchange(base, { code })).json()) as Json).access_token as string;
    };
    const publicOnly = await tokenFor('');
    const withRepo = await tokenFor('repo');
    const all = sim.users()[0].repositories.length;
    const seen = async (t: string) => ((await (await api(base, '/user/repos', `Bearer ${t}`)).json()) as Json[]).length;
    expect(await seen(withRepo)).toBe(all);
    expect(await seen(publicOnly)).toBeLessThanOrEqual(all);
    const privates = (await (await api(base, '/user/repos?visibility=private', `Bearer ${withRepo}`)).json()) as Json[];
    expect(await seen(publicOnly)).toBe(all - privates.length);
    expect(privates.every((r) => r.private && r.permissions.admin === true)).toBe(true);

    expect((await api(base, '/installation/repositories', `Bearer ${withRepo}`)).status).toBe(403);
    const inst = await installationToken(sim, base, T0, 1001);
    expect((await api(base, '/user', `Bearer ${inst}`)).status).toBe(403);
    expect((await api(base, '/user')).status).toBe(401);

    // Both tokens share the user's bucket.
    sim.exhaustUserRateLimit('sandbox-user', { resetInMs: 60_000 });
    const limited = await api(base, '/user', `Bearer ${publicOnly}`);
    expect(limited.status).toBe(403);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(((await limited.json()) as Json).message).toBe(`API rate limit exceeded for user ID ${sim.users()[0].id}.`);
  });

  it('registers OAuth apps and users at runtime', async () => {
    const { sim, base } = await startSim({ users: [{ login: 'alice', password: 'pw-alice', repositoryCount: 1 }] });
    sim.registerOAuthApp({
      clientId: 'Ov23liOther',
      clientSecret: 's3cret',
      name: 'Other App',
      homepageUrl: 'https://other.example.com',
      callbackUrl: 'https://other.example.com/cb',
    });
    const bob = sim.addUser({ login: 'bob', password: 'pw-bob', repositoryCount: 2 });
    expect(sim.users().map((u) => [u.login, u.repositories.length])).toEqual([
      ['alice', 1],
      ['bob', 2],
    ]);
    expect(() => sim.addUser({ login: 'bob', password: 'x' })).toThrow(/already exists/);

    const browser = new Browser(base);
    let page = await browser.open(`/login/oauth/authorize?client_id=Ov23liOther&state=o`);
    page = await browser.signIn(page, 'bob', 'pw-bob');
    expect(page.html).toContain('<h1>Authorize Other App</h1>');
    expect(page.html).toContain('Public information (read-only)');
    const done = await browser.submit(page, { authorize: '1' });
    expect(done.location).toMatch(/^https:\/\/other\.example\.com\/cb\?code=[0-9a-f]{20}&state=o$/);
    const code = new URL(done.location!).searchParams.get('code')!;
    const res = await fetch(`${base}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'Ov23liOther', client_secret: 's3cret', code }).toString(),
    });
    const token = (await res.json()) as Json;
    expect(token.scope).toBe('');
    const me = (await (await api(base, '/user', `Bearer ${token.access_token}`)).json()) as Json;
    expect(me).toMatchObject({ login: 'bob', id: bob.id, name: 'bob', email: null });

    // prompt=select_account asks for an account even when signed in; here alice takes over.
    const pick = await browser.open(`/login/oauth/authorize?client_id=Ov23liOther&prompt=select_account`);
    expect(pick.url).toContain('/login?');
    const asAlice = await browser.signIn(pick, 'alice', 'pw-alice');
    expect(asAlice.html).toContain('wants to access your <strong>alice</strong> account');

    expect(() => sim.addUser({ login: 'sandbox-org', password: 'x' })).toThrow(/Organization/);
    expect(() =>
      createGitHubSimulator({
        users: [
          { login: 'a', password: 'x' },
          { login: 'A', password: 'y' },
        ],
      }),
    ).toThrow();
    expect(() => createGitHubSimulator({ users: [{ login: 'sandbox-org', password: 'x' }] })).toThrow();
    expect(() => createGitHubSimulator({ oauthApps: [{ ...DEFAULT_OAUTH_APP, callbackUrl: 'javascript:alert(1)' }] })).toThrow();
  });
});

describe('GitHub simulator: App installation page', () => {
  it('installs with state, redirects to the Setup URL, and the installation serves its repositories', async () => {
    const { sim, base, clock } = await startSim();
    expect(sim.app.publicLink).toBe(`${base}/apps/weft-sandbox`);
    sim.setAppSetupUrl('http://127.0.0.1:4567/github/setup?from=sim');
    const browser = new Browser(base);

    const appPage = await browser.open(sim.app.publicLink);
    expect(appPage.html).toContain('<h1>Weft Sandbox</h1>');

    let page = await browser.open(`${sim.app.publicLink}/installations/new?state=abc%20123`);
    expect(page.url).toContain('/login?');
    page = await browser.signIn(page);
    expect(page.html).toContain('<h1>Install Weft Sandbox</h1>');
    expect(page.html).toContain('<label for="install_target_all">All repositories</label>');
    expect(page.html).toContain('<label for="install_target_selected">Only select repositories</label>');
    expect(forms(page.html)[0].buttons).toEqual(['Install', 'Cancel']);

    const done = await browser.submit(page, { repository_selection: 'all', action: 'install' });
    expect(done.status).toBe(302);
    const setup = new URL(done.location!);
    expect(setup.origin + setup.pathname).toBe('http://127.0.0.1:4567/github/setup');
    const installationId = Number(setup.searchParams.get('installation_id'));
    expect(Object.fromEntries(setup.searchParams)).toEqual({ from: 'sim', installation_id: String(installationId), setup_action: 'install', state: 'abc 123' });
    expect(sim.users()[0].installationId).toBe(installationId);
    expect(sim.installations().map((i) => i.id)).toEqual([1001, installationId]);

    const token = await installationToken(sim, base, clock.t, installationId);
    const res = await api(base, '/installation/repositories', `token ${token}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.repository_selection).toBe('all');
    expect(body.repositories.map((r: Json) => r.full_name)).toEqual(sim.users()[0].repositories);
    expect(body.total_count).toBe(3);
    const pulls = await api(base, `/repos/${body.repositories[0].full_name}/pulls?state=all`, `token ${token}`);
    expect(((await pulls.json()) as Json[]).length).toBe(3);

    // Installing again (here: one repository only) updates the same installation.
    page = await browser.open(`${sim.app.publicLink}/installations/new`);
    expect(page.html).toContain(`data-installation-id="${installationId}"`);
    const one = body.repositories[1];
    const invalid = await browser.submit(page, { repository_selection: 'selected', action: 'install' });
    expect(invalid.status).toBe(422);
    expect(invalid.html).toContain('Select at least one repository.');
    const updated = await browser.submit(invalid, { repository_selection: 'selected', repository_ids: String(one.id), action: 'install' });
    expect(Object.fromEntries(new URL(updated.location!).searchParams)).toEqual({
      from: 'sim',
      installation_id: String(installationId),
      setup_action: 'update',
    });
    const after = (await (
      await api(base, '/installation/repositories', `token ${await installationToken(sim, base, clock.t, installationId)}`)
    ).json()) as Json;
    expect(after).toMatchObject({ total_count: 1, repository_selection: 'selected' });
    expect(after.repositories[0].full_name).toBe(one.full_name);

    expect(sim.stats()).toMatchObject({ installationsCreated: 1, installationsUpdated: 1 });
  });

  it('cancels without installing or redirecting, and ends on a page without a Setup URL', async () => {
    const { sim, base } = await startSim();
    const browser = new Browser(base);
    let page = await browser.signIn(await browser.open(`${sim.app.publicLink}/installations/new?state=s`));
    const cancelled = await browser.submit(page, { action: 'cancel' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.html).toContain('<h1>Installation cancelled</h1>');
    expect(sim.installations().map((i) => i.id)).toEqual([1001]);

    page = await browser.open(`${sim.app.publicLink}/installations/new`);
    const installed = await browser.submit(page, { repository_selection: 'all', action: 'install' });
    expect(installed.status).toBe(200);
    const id = /data-installation-id="(\d+)"/.exec(installed.html)![1];
    expect(sim.users()[0].installationId).toBe(Number(id));
    expect(sim.stats()).toMatchObject({ installationsCreated: 1, installationsUpdated: 0 });
    // The pending request was used up: the same form cannot install twice.
    expect((await browser.submit(page, { repository_selection: 'all', action: 'install' })).status).toBe(422);
  });

  it("treats a User installation from the options as the signed-in user's (setup_action=update)", async () => {
    const { sim, base } = await startSim({
      installations: [{ id: 1001, account: { login: 'sandbox-user', type: 'User' }, repositoryCount: 2 }],
      setupUrl: 'https://weft.example.com/setup',
    });
    expect(sim.users()[0]).toMatchObject({ installationId: 1001, repositories: sim.repositories(1001).map((r) => r.full_name) });
    const browser = new Browser(base);
    const page = await browser.signIn(await browser.open(`${sim.app.publicLink}/installations/new?state=s`));
    const done = await browser.submit(page, { repository_selection: 'all', action: 'install' });
    expect(done.location).toBe('https://weft.example.com/setup?installation_id=1001&setup_action=update&state=s');
    expect(sim.installations()).toHaveLength(1);
  });

  it('gives the same seeded repositories and installation id for the same seed', async () => {
    const run = async () => {
      const { sim, base } = await startSim({ seed: 7 });
      sim.setAppSetupUrl('https://weft.example.com/setup');
      const browser = new Browser(base);
      const page = await browser.signIn(await browser.open(`${sim.app.publicLink}/installations/new`));
      const done = await browser.submit(page, { repository_selection: 'all', action: 'install' });
      const id = new URL(done.location!).searchParams.get('installation_id');
      // API URLs inside the JSON carry each simulator's port; compare the data itself.
      return { id, repos: sim.repositories(Number(id)).map((r) => [r.id, r.full_name, r.private, r.pushed_at]) };
    };
    const [a, b] = [await run(), await run()];
    expect(a.id).toBe(b.id);
    expect(a.repos).toEqual(b.repos);
    expect(a.repos).toHaveLength(3);
  });
});

describe('GitHub simulator: user authorization during installation, and GET /user/installations', () => {
  const APP_CALLBACK = 'http://127.0.0.1:4567/app-auth/connect';

  async function installWithCode(browser: Browser, sim: GitHubSimulator, state = 'st-1'): Promise<URLSearchParams> {
    let page = await browser.open(`${sim.app.publicLink}/installations/new?state=${state}`);
    if (page.url.includes('/login?')) page = await browser.signIn(page);
    const done = await browser.submit(page, { repository_selection: 'all', action: 'install' });
    expect(done.status).toBe(302);
    const to = new URL(done.location!);
    expect(to.origin + to.pathname).toBe(APP_CALLBACK);
    return to.searchParams;
  }

  async function appExchange(base: string, sim: GitHubSimulator, params: Record<string, string>): Promise<Json> {
    const res = await exchange(base, { client_id: sim.app.clientId, client_secret: sim.app.clientSecret, ...params });
    expect(res.status).toBe(200); // errors too, as on GitHub
    return (await res.json()) as Json;
  }

  it('sends the browser to the callback URL with code, installation_id, setup_action and state; the code gives a ghu_ user token', async () => {
    const { sim, base, clock } = await startSim({
      app: { callbackUrls: [APP_CALLBACK], requestOAuthOnInstall: true },
      setupUrl: 'https://weft.example.com/setup',
    });
    const browser = new Browser(base);
    const q = await installWithCode(browser, sim);
    const installationId = Number(q.get('installation_id'));
    expect([...q.keys()].sort()).toEqual(['code', 'installation_id', 'setup_action', 'state']);
    expect(q.get('setup_action')).toBe('install');
    expect(q.get('state')).toBe('st-1');
    expect(q.get('code')).toMatch(/^[0-9a-f]{20}$/);
    expect(sim.users()[0].installationId).toBe(installationId);

    // The App's own client id and secret redeem the code; a wrong secret is refused (HTTP 200).
    expect(await appExchange(base, sim, { code: q.get('code')!, client_secret: 'wrong' })).toMatchObject({ error: 'incorrect_client_credentials' });
    const tokens = await appExchange(base, sim, { code: q.get('code')!, redirect_uri: APP_CALLBACK });
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^ghu_[A-Za-z0-9]{36}$/),
      expires_in: 28800,
      refresh_token: expect.stringMatching(/^ghr_[A-Za-z0-9]{76}$/),
      refresh_token_expires_in: 15811200,
      scope: '',
      token_type: 'bearer',
    });
    expect(await appExchange(base, sim, { code: q.get('code')! })).toMatchObject({ error: 'bad_verification_code' });
    // The OAuth App cannot redeem the App's code.
    expect(((await (await exchange(base, { code: q.get('code')! })).json()) as Json).error).toBe('bad_verification_code');

    const user = await api(base, '/user', `Bearer ${tokens.access_token}`);
    expect(user.status).toBe(200);
    expect(((await user.json()) as Json).login).toBe(DEFAULT_USER.login);
    expect(user.headers.get('x-oauth-scopes')).toBeNull(); // App user tokens have no scopes
    const res = await api(base, '/user/installations', `Bearer ${tokens.access_token}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    // Only the installation on the user's own account: 1001 (sandbox-org) is not theirs to see.
    expect(body.total_count).toBe(1);
    expect(body.installations).toHaveLength(1);
    expect(body.installations[0]).toMatchObject({
      id: installationId,
      app_id: sim.app.id,
      account: { login: DEFAULT_USER.login, type: 'User' },
      target_type: 'User',
    });
    expect(res.headers.get('link')).toBeNull();

    // 8 hours later the user token is dead; its refresh token gives a new pair, once.
    clock.t += 28_800_000;
    expect((await api(base, '/user/installations', `Bearer ${tokens.access_token}`)).status).toBe(401);
    const refreshed = await appExchange(base, sim, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refreshed.access_token).toMatch(/^ghu_/);
    expect((await api(base, '/user/installations', `Bearer ${refreshed.access_token}`)).status).toBe(200);
    expect(await appExchange(base, sim, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).toMatchObject({ error: 'bad_refresh_token' });
    // Codes and tokens never reach the request log.
    expect(JSON.stringify(sim.requestLog())).not.toMatch(/ghu_|ghr_|[0-9a-f]{20}"/);
  });

  it('lists the installations of the organizations a user belongs to, paginated with Link; not the others', async () => {
    const orgs = ['org-a', 'org-b', 'org-c', 'org-d'];
    const { sim, base } = await startSim({
      installations: orgs.map((login, i) => ({ id: 2001 + i, account: { login, type: 'Organization' as const }, repositoryCount: 0 })),
      users: [
        { ...DEFAULT_USER, organizations: ['org-a', 'org-c', 'org-d'] },
        { login: 'outsider', password: 'pw' },
      ],
      app: { callbackUrls: [APP_CALLBACK], requestOAuthOnInstall: true },
    });
    const browser = new Browser(base);
    const own = Number((await installWithCode(browser, sim)).get('installation_id'));
    // A second install (an update) on the same account carries a fresh code too.
    const update = await installWithCode(browser, sim, 'st-2');
    expect(update.get('setup_action')).toBe('update');
    const token = (await appExchange(base, sim, { code: update.get('code')! })).access_token;
    const seen: number[] = [];
    let url: string | null = '/user/installations?per_page=2';
    let pages = 0;
    while (url) {
      const res: Response = await api(base, url.replace(base, ''), `Bearer ${token}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.total_count).toBe(4);
      seen.push(...body.installations.map((i: Json) => i.id));
      url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
      pages++;
    }
    expect(pages).toBe(2);
    expect(seen.sort()).toEqual([2001, 2003, 2004, own].sort());

    // Someone outside the organizations sees only the installation on their own account.
    const other = new Browser(base);
    let page = await other.open(`${sim.app.publicLink}/installations/new?state=o`);
    page = await other.signIn(page, 'outsider', 'pw');
    const q = new URL((await other.submit(page, { repository_selection: 'all', action: 'install' })).location!).searchParams;
    const theirs = (await appExchange(base, sim, { code: q.get('code')! })).access_token;
    const listed = (await (await api(base, '/user/installations', `Bearer ${theirs}`)).json()) as Json;
    expect(listed.installations.map((i: Json) => i.id)).toEqual([Number(q.get('installation_id'))]);
  });

  it('answers /user/installations only for App user tokens', async () => {
    const { sim, base, clock } = await startSim();
    expect((await api(base, '/user/installations')).status).toBe(401);
    const installation = await installationToken(sim, base, clock.t, 1001);
    expect((await api(base, '/user/installations', `token ${installation}`)).status).toBe(403);
    const q = await authorize(new Browser(base), { redirect_uri: CALLBACK, scope: 'repo' });
    const gho = (await (await exchange(base, { code: q.get('code')! })).json()) as Json;
    const res = await api(base, '/user/installations', `Bearer ${gho.access_token}`);
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).message).toBe('You must authenticate with an access token authorized to a GitHub App in order to list installations');
  });

  it('without the setting the install page uses the Setup URL and issues no code; the setting needs a callback URL', async () => {
    const { sim, base } = await startSim({ app: { callbackUrls: [APP_CALLBACK] }, setupUrl: 'https://weft.example.com/setup' });
    const browser = new Browser(base);
    const page = await browser.signIn(await browser.open(`${sim.app.publicLink}/installations/new?state=s`));
    const done = await browser.submit(page, { repository_selection: 'all', action: 'install' });
    expect(new URL(done.location!).searchParams.has('code')).toBe(false);
    expect(() => sim.configureAppUserAuthorization({ callbackUrls: [], requestOAuthOnInstall: true })).toThrow(/needs a callback URL/);
    expect(() => createGitHubSimulator({ privateKeyPem: PRIVATE_KEY_PEM, app: { requestOAuthOnInstall: true } })).toThrow(/callback URL/);
    expect(() => createGitHubSimulator({ privateKeyPem: PRIVATE_KEY_PEM, users: [{ ...DEFAULT_USER, organizations: ['nowhere'] }] })).toThrow(
      /Organization installation/,
    );
    sim.configureAppUserAuthorization({ requestOAuthOnInstall: true });
    const again = await browser.submit(await browser.open(`${sim.app.publicLink}/installations/new?state=t`), {
      repository_selection: 'all',
      action: 'install',
    });
    expect(new URL(again.location!).searchParams.get('code')).toMatch(/^[0-9a-f]{20}$/);
  });
});
