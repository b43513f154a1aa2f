import net, { type AddressInfo } from 'node:net';
import express from 'express';
import { DEFAULT_USER } from '../../sandbox/github';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { bindBrowser, isSameBrowser } from '../../api/services/browser-binding';
import { CONNECT_SESSION_MAX_ATTEMPTS } from '../../store/connect-sessions';
import { SANDBOX_SIMULATORS, startSandbox } from '../../app/start/sandbox';
import { startApi } from '../../app/api/build-api';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { connectGitHub, createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { Browser, type Page } from '../support/form-browser';
import type { paths } from '../../cli/api-client/weft-api';

/**
 * Connect link → install page (signing in when needed) → Install; returns GitHub's redirect to
 * Weft (to `urls.callback`, the App's registered callback, when it is not `urls.api`), not followed.
 */
async function installThroughGitHub(
  urls: { api: string; github: string; callback?: string },
  browser: Browser,
  token: string,
  integration: string,
  user: { login: string; password: string },
): Promise<URL> {
  const start = await browser.request(`${urls.api}/oauth/connect/${integration}?connect_session_token=${token}`);
  expect(start.status).toBe(302);
  let page = await browser.follow(start, urls.github);
  if (page.url.includes('/login?')) page = await browser.follow(await browser.submit(page, /^\/session$/, user), urls.github);
  const done = await browser.submit(page, /\/installations$/, { repository_selection: 'all', action: 'install' });
  expect(done.status).toBe(302);
  expect(done.location).toMatch(new RegExp(`^${urls.callback ?? urls.api}/app-auth/connect\\?`));
  return new URL(done.location!);
}

const errorCode = (page: Page) => /data-error-code="([^"]+)"/.exec(page.html)?.[1] ?? null;
const connectionOf = (page: Page) => /data-connection-id="([^"]+)"/.exec(page.html)?.[1] ?? null;

/** Organizations the default user belongs to: enough installations that theirs is on page 2. */
const ORGS = Array.from({ length: 100 }, (_, i) => `org-${i}`);

describe('connect flows are bound to the person connecting', () => {
  let stack: WeftStack;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    stack = await startWeftStack({
      egressAllow: { webhooks: [hooks.url] },
      github: {
        seed: 3,
        pullsPerRepo: 1,
        installations: [
          { id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 1 },
          ...ORGS.map((login, i) => ({ id: 5000 + i, account: { login, type: 'Organization' as const }, repositoryCount: 0 })),
        ],
        users: [
          { ...DEFAULT_USER, organizations: ORGS },
          { login: 'org-member', password: 'member-password', organizations: ['sandbox-org'] },
        ],
      },
    });
    // The App requests user authorization during installation; its callback URL is Weft's.
    stack.github.configureAppUserAuthorization({ callbackUrls: [`${stack.apiUrl}/app-auth/connect`], requestOAuthOnInstall: true });
    expect((await stack.client.PATCH('/environment', { body: { webhook_url: hooks.url } })).response.status).toBe(200);
    const app = {
      type: 'APP' as const,
      app_id: String(stack.github.app.id),
      app_link: stack.github.app.publicLink,
      private_key: stack.github.appPrivateKeyPem,
    };
    const overrides = { base_url: stack.github.url!, auth_base_url: stack.github.url! };
    for (const [unique_key, credentials] of [
      ['github', { ...app, client_id: stack.github.app.clientId, client_secret: stack.github.app.clientSecret }],
      ['github-no-client', app],
    ] as const) {
      const res = await stack.client.POST('/integrations', { body: { unique_key, provider: 'github', credentials, provider_overrides: overrides } });
      expect(res.response.status).toBe(201);
    }
    await createLumaIntegration(stack);
    expect((await connectGitHub(stack, 'victim')).status).toBe(201);
  });
  afterAll(async () => {
    await stack?.shutdown();
    await hooks?.close();
  });

  type SessionBody = paths['/connect/sessions']['post']['requestBody']['content']['application/json'];
  async function session(body: SessionBody = {}): Promise<string> {
    const res = await stack.client.POST('/connect/sessions', { body });
    expect(res.response.status).toBe(201);
    return res.data!.data.token;
  }

  async function connections(integration: string) {
    return (await stack.client.GET('/connections', { params: { query: { integrationId: integration } } })).data!.connections;
  }

  /** A connection of the github integration, with its credentials (the typed client). */
  async function githubConnection(connectionId: string) {
    const res = await stack.client.GET('/connections/{connectionId}', { params: { path: { connectionId }, query: { provider_config_key: 'github' } } });
    expect(res.response.status).toBe(200);
    return res.data!;
  }
  /** Its App installation id (a GitHub App connection's credentials are of type APP). */
  async function installationOf(connectionId: string) {
    const { credentials } = await githubConnection(connectionId);
    if (credentials.type !== 'APP') throw new Error(`a GitHub App connection's credentials, got ${credentials.type}`);
    return credentials.installation_id;
  }

  function installUntilCallback(
    browser: Browser,
    token: string,
    integration = 'github',
    user: { login: string; password: string } = DEFAULT_USER,
  ): Promise<URL> {
    return installThroughGitHub({ api: stack.apiUrl, github: stack.github.url as string }, browser, token, integration, user);
  }

  describe('GitHub App installations are proven by the installing user', () => {
    test("the user's own installation is listed for them (on the second page): it is stored, and the app told", async () => {
      stack.github.resetStats();
      const browser = new Browser();
      const callback = await installUntilCallback(browser, await session());
      expect(callback.searchParams.get('code')).toBeTruthy();
      const done = await browser.request(callback.href);
      expect(done.status).toBe(200);
      const connectionId = connectionOf(done)!;
      expect(connectionId).toMatch(/^[0-9a-f-]{36}$/);
      const conn = await githubConnection(connectionId);
      expect(await installationOf(connectionId)).toBe(callback.searchParams.get('installation_id'));
      expect(stack.github.users().find((u) => u.login === DEFAULT_USER.login)?.installationId).toBe(Number(callback.searchParams.get('installation_id')));
      // Weft paged through GET /user/installations (101 installations, 100 per page).
      const listed = stack.github.requestLog().filter((e) => e.path === '/user/installations');
      expect(listed.map((e) => [e.status, e.query.page ?? '1', e.query.per_page])).toEqual([
        [200, '1', '100'],
        [200, '2', '100'],
      ]);
      const hook = await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === connectionId);
      expect(hook.body).toMatchObject({ operation: 'creation', success: true, authMode: 'APP' });
      // The user token was used for the check only.
      expect(JSON.stringify(conn)).not.toMatch(/ghu_|ghr_/);
      expect(stack.logs.join('\n')).not.toMatch(/ghu_|ghr_/);
    });

    test('a spoofed installation_id (an installation the user cannot see) is refused: nothing stored, the app told', async () => {
      const browser = new Browser();
      const callback = await installUntilCallback(browser, await session());
      const before = await connections('github');
      callback.searchParams.set('installation_id', '1001'); // sandbox-org's: not this user's
      const page = await browser.request(callback.href);
      expect(page.status).toBe(400);
      expect(errorCode(page)).toBe('installation_not_verified');
      expect(page.html).toContain('installation 1001 is not one the signed-in GitHub user can access');
      expect(await connections('github')).toEqual(before);
      const hook = await hooks.waitFor((w) => w.body.type === 'auth' && w.body.success === false && w.body.error?.type === 'installation_not_verified');
      expect(hook.body).toMatchObject({ providerConfigKey: 'github', operation: 'creation', authMode: 'APP' });
      expect(await connections('github')).toHaveLength(before.length);
    });

    test("a member of the organization may connect the organization's installation", async () => {
      const browser = new Browser();
      const callback = await installUntilCallback(browser, await session(), 'github', { login: 'org-member', password: 'member-password' });
      callback.searchParams.set('installation_id', '1001');
      const page = await browser.request(callback.href);
      expect(page.status).toBe(200);
      expect(await installationOf(connectionOf(page)!)).toBe('1001');
    });

    test('no App client credentials, no code, or a refused code: installation_not_verified and nothing stored', async () => {
      const before = (await connections('github')).length;
      const noClient = new Browser();
      const page = await noClient.request((await installUntilCallback(noClient, await session(), 'github-no-client')).href);
      expect(errorCode(page)).toBe('installation_not_verified');
      expect(page.html).toMatch(/no OAuth client id and secret/);
      expect(await connections('github-no-client')).toHaveLength(0);

      const browser = new Browser();
      const noCode = await installUntilCallback(browser, await session());
      noCode.searchParams.delete('code');
      const withoutCode = await browser.request(noCode.href);
      expect(errorCode(withoutCode)).toBe('installation_not_verified');
      expect(withoutCode.html).toMatch(/must request user authorization/);

      const badCode = await installUntilCallback(browser, await session());
      badCode.searchParams.set('code', '0123456789abcdef0123');
      const refused = await browser.request(badCode.href);
      expect(errorCode(refused)).toBe('installation_not_verified');
      expect(refused.html).toMatch(/bad_verification_code/);
      expect((await connections('github')).length).toBe(before);
    });
  });

  describe('the state is bound to the browser that started the flow', () => {
    test('the flow start sets an HttpOnly, SameSite=Lax cookie; a callback opened in another browser is refused and used up', async () => {
      const browser = new Browser();
      const before = (await connections('github')).length;
      const callback = await installUntilCallback(browser, await session());
      const cookie = [...browser.cookies.keys()].find((k) => k.includes('weft_flow'));
      expect(cookie).toBe('weft_flow');

      const other = await new Browser().request(callback.href);
      expect(other.status).toBe(400);
      expect(errorCode(other)).toBe('browser_mismatch');
      await hooks.waitFor((w) => w.body.type === 'auth' && w.body.success === false && w.body.error?.type === 'browser_mismatch');
      // The state is consumed: not even the right browser can use it afterwards.
      expect(errorCode(await browser.request(callback.href))).toBe('invalid_state');
      expect((await connections('github')).length).toBe(before);
    });

    test('several flows started in one browser all complete', async () => {
      const browser = new Browser();
      const first = await installUntilCallback(browser, await session());
      const second = await installUntilCallback(browser, await session());
      expect(second.searchParams.get('state')).not.toBe(first.searchParams.get('state'));
      const pages = [await browser.request(second.href), await browser.request(first.href)];
      expect(pages.map((p) => p.status)).toEqual([200, 200]);
      expect(new Set(pages.map(connectionOf)).size).toBe(2);
    });

    test('the cookie attributes: HttpOnly, SameSite=Lax, short-lived; Secure with a __Host- name on https', async () => {
      const start = await new Browser().request(`${stack.apiUrl}/oauth/connect/github?connect_session_token=${await session()}`);
      const [cookie] = start.headers.getSetCookie();
      expect(cookie).toMatch(/^weft_flow=[A-Za-z0-9_-]{43};/);
      expect(cookie).toMatch(/; HttpOnly/i);
      expect(cookie).toMatch(/; SameSite=Lax/i);
      expect(cookie).toMatch(/; Path=\//);
      expect(cookie).toMatch(/; Max-Age=600/);
      expect(cookie).not.toMatch(/Secure/i);

      // Behind https (WEFT_PUBLIC_URL https://…) the same code sets a Secure, __Host- cookie.
      const app = express();
      app.get('/start', (req, res) => void res.json({ hash: bindBrowser(req, res, { secure: true, maxAgeMs: 600_000 }) }));
      app.get('/check/:hash', (req, res) => void res.json({ same: isSameBrowser(req, req.params.hash, { secure: true }) }));
      const server = app.listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const res = await fetch(`${base}/start`);
        const secure = res.headers.getSetCookie()[0];
        expect(secure).toMatch(/^__Host-weft_flow=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/);
        const { hash } = (await res.json()) as { hash: string };
        const check = async (cookieHeader?: string) =>
          ((await (await fetch(`${base}/check/${hash}`, { headers: cookieHeader ? { cookie: cookieHeader } : {} })).json()) as { same: boolean }).same;
        expect(await check(secure.split(';')[0])).toBe(true);
        expect(await check()).toBe(false);
        expect(await check(`__Host-weft_flow=${'A'.repeat(43)}`)).toBe(false);
        // The very value under the plain name (which a sibling subdomain or an http page can set): not on https.
        expect(await check(`weft_flow=${secure.split(';')[0].split('=')[1]}`)).toBe(false);
      } finally {
        server.close();
      }
    });
    test('on https (WEFT_PUBLIC_URL https://…) only the __Host- cookie binds: the same value planted as plain weft_flow is refused', async () => {
      // A second API process on the stack's database, configured as served over https (TLS ends in front of it).
      const publicUrl = 'https://weft.example.test';
      const secure = await startApi(stack.core, {
        port: 0,
        host: '127.0.0.1',
        alter: (deps) => ({ ...deps, settings: { ...deps.settings, publicUrl } }),
      });
      // GitHub sends the installing browser to the public https URL; the test's requests reach the process there.
      stack.github.configureAppUserAuthorization({ callbackUrls: [`${publicUrl}/app-auth/connect`, `${stack.apiUrl}/app-auth/connect`] });
      try {
        const urls = { api: secure.url, github: stack.github.url as string, callback: publicUrl };
        const atSecureApi = (callback: URL) => `${secure.url}${callback.pathname}${callback.search}`;
        const before = (await connections('github')).length;

        const victim = new Browser();
        const planted = await installThroughGitHub(urls, victim, await session(), 'github', DEFAULT_USER);
        expect([...victim.cookies.keys()].filter((k) => k.includes('weft_flow'))).toEqual(['__Host-weft_flow']);
        const value = victim.cookies.get('__Host-weft_flow')!;
        // Someone able to set cookies for the host without https, holding the victim's very value.
        const attacker = new Browser();
        attacker.cookies.set('weft_flow', value);
        const refused = await attacker.request(atSecureApi(planted));
        expect(refused.status).toBe(400);
        expect(errorCode(refused)).toBe('browser_mismatch');
        expect((await connections('github')).length).toBe(before);

        // The browser holding the __Host- cookie completes its own flow.
        const own = await installThroughGitHub(urls, victim, await session(), 'github', DEFAULT_USER);
        const done = await victim.request(atSecureApi(own));
        expect([done.status, errorCode(done)]).toEqual([200, null]);
        expect(connectionOf(done)).toMatch(/^[0-9a-f-]{36}$/);
      } finally {
        stack.github.configureAppUserAuthorization({ callbackUrls: [`${stack.apiUrl}/app-auth/connect`] });
        await secure.close();
      }
    });
  });

  describe('the browser never chooses the connection', () => {
    test("connection_id in the connect URL is refused; the other user's connection is untouched", async () => {
      const before = await installationOf('victim');
      const res = await new Browser().request(`${stack.apiUrl}/oauth/connect/github?connect_session_token=${await session()}&connection_id=victim`);
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe('connection_id_not_allowed');
      expect(await installationOf('victim')).toBe(before);
    });

    test('an API key flow makes a new connection with a generated id, whatever the request names', async () => {
      const token = await session();
      const res = await fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${token}&connection_id=victim`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: LUMA_DEFAULT_API_KEY, connection_id: 'victim' }),
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as any;
      expect(body.data.connection_id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await connections('luma')).map((c) => c.connection_id)).not.toContain('victim');
    });

    test('a reconnect session re-authorizes its own connection and no other', async () => {
      const created = await stack.client.POST('/connections', {
        body: { provider_config_key: 'luma', connection_id: 'luma-user', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
      });
      expect(created.response.status).toBe(201);
      const token = await session({ connection_id: 'luma-user', allowed_integrations: ['luma'] });
      const count = (await connections('luma')).length;
      const res = await fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${token}&connection_id=someone-else`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: LUMA_DEFAULT_API_KEY }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).data.connection_id).toBe('luma-user');
      expect((await connections('luma')).length).toBe(count);
      await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === 'luma-user' && w.body.operation === 'override' && w.body.success === true);
    });

    test('a reconnect session needs its connection: refused at creation, and at the flow when it was deleted since', async () => {
      const missing = await stack.client.POST('/connect/sessions', { body: { connection_id: 'ghost' } });
      expect(missing.response.status).toBe(404);
      expect(missing.error?.error.code).toBe('unknown_connection');
      // victim is a github connection: a session limited to luma cannot reconnect it.
      const elsewhere = await stack.client.POST('/connect/sessions', { body: { connection_id: 'victim', allowed_integrations: ['luma'] } });
      expect(elsewhere.response.status).toBe(404);

      expect(
        (
          await stack.client.POST('/connections', {
            body: { provider_config_key: 'luma', connection_id: 'short-lived', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
          })
        ).response.status,
      ).toBe(201);
      const token = await session({ connection_id: 'short-lived' });
      const deleted = await stack.client.DELETE('/connections/{connectionId}', {
        params: { path: { connectionId: 'short-lived' }, query: { provider_config_key: 'luma' } },
      });
      expect(deleted.response.status).toBe(200);
      const res = await fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: LUMA_DEFAULT_API_KEY }),
      });
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.code).toBe('reconnect_connection_not_found');
      expect((await connections('luma')).map((c) => c.connection_id)).not.toContain('short-lived');
    });
  });

  describe('a connect session allows a bounded number of attempts', () => {
    test(`${CONNECT_SESSION_MAX_ATTEMPTS} flow starts, then 429 with a page, also under concurrency`, async () => {
      const token = await session();
      const results = await Promise.all(
        Array.from({ length: 25 }, () => new Browser().request(`${stack.apiUrl}/oauth/connect/github?connect_session_token=${token}`)),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 302)).toHaveLength(CONNECT_SESSION_MAX_ATTEMPTS);
      expect(statuses.filter((s) => s === 429)).toHaveLength(25 - CONNECT_SESSION_MAX_ATTEMPTS);
      const refused = results.find((r) => r.status === 429)!;
      expect(refused.headers.get('content-type')).toMatch(/text\/html/);
      expect(errorCode(refused)).toBe('too_many_attempts');
      expect(refused.html).toContain(`${CONNECT_SESSION_MAX_ATTEMPTS} attempts`);
    });

    test('API key submissions count, as a form and as JSON', async () => {
      const token = await session();
      const before = (await connections('luma')).length;
      for (let i = 0; i < CONNECT_SESSION_MAX_ATTEMPTS; i++) {
        const page = await new Browser().request(`${stack.apiUrl}/connect/api-key/luma`, { connect_session_token: token, apiKey: `wrong-${i}` });
        expect(errorCode(page)).toBe('invalid_credentials');
      }
      const form = await new Browser().request(`${stack.apiUrl}/connect/api-key/luma`, { connect_session_token: token, apiKey: LUMA_DEFAULT_API_KEY });
      expect(form.status).toBe(429);
      expect(errorCode(form)).toBe('too_many_attempts');
      const json = await fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: LUMA_DEFAULT_API_KEY }),
      });
      expect(json.status).toBe(429);
      expect(((await json.json()) as any).error.code).toBe('too_many_attempts');
      // The right key came too late: nothing was stored with it.
      expect((await connections('luma')).length).toBe(before);
    });
  });
});

describe('npm start -- --sandbox: the sandbox GitHub App connects through its install page', () => {
  test("its integration carries the App's OAuth client and the App comes back with a code: the install is verified and stored", async () => {
    // The sandbox simulator's port is known up front, so the stack's egress can allow exactly it.
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const stack = await startWeftStack({ egressAllow: { providers: [`127.0.0.1:${port}`] }, worker: false });
    const sandbox = await startSandbox({
      stores: stack.core.stores,
      cipher: stack.core.cipher,
      registry: stack.core.registry,
      ports: { github: port },
      specs: SANDBOX_SIMULATORS.filter((s) => s.id === 'github'),
    });
    try {
      sandbox.apiReady(stack.apiUrl);
      expect(sandbox.integrations).toMatchObject([{ uniqueKey: 'github', outcome: 'created' }]);
      const created = await stack.client.POST('/connect/sessions', { body: { allowed_integrations: ['github'] } });
      const browser = new Browser();
      const callback = await installThroughGitHub(
        { api: stack.apiUrl, github: `http://127.0.0.1:${port}` },
        browser,
        created.data!.data.token,
        'github',
        DEFAULT_USER,
      );
      const page = await browser.request(callback.href);
      expect(page.status).toBe(200);
      const conn = await stack.client.GET('/connections/{connectionId}', {
        params: { path: { connectionId: connectionOf(page)! }, query: { provider_config_key: 'github' } },
      });
      expect(conn.data?.credentials).toMatchObject({
        type: 'APP',
        installation_id: callback.searchParams.get('installation_id'),
        access_token: expect.stringMatching(/^ghs_/),
      });
    } finally {
      await sandbox.stop();
      await stack.shutdown();
    }
  });
});
