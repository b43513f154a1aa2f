import type { Browser, Page } from 'playwright-core';
import { DEFAULT_OAUTH_APP, DEFAULT_USER } from '../../sandbox/github';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { connectResult as result, launchBrowser } from '../support/browser';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/** GitHub (App installation) and Luma (API key) through the Connect page, in Chromium. */
describe('Connect: GitHub App install and Luma API key in a browser', () => {
  let stack: WeftStack;
  let browser: Browser;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    // The authorize page is shown every time (no remembered grants): its form POST is where a
    // test can hold GitHub's redirect back to Weft.
    stack = await startWeftStack({ github: { seed: 5, rememberOAuthGrants: false }, egressAllow: { webhooks: [hooks.url] } });
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: hooks.url } })).status).toBe(200);
    const github = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'github',
        provider: 'github',
        display_name: 'GitHub',
        // With the App's OAuth client: Weft proves who installed it (GET /user/installations).
        credentials: {
          type: 'APP',
          app_id: String(stack.github.app.id),
          app_link: stack.github.app.publicLink,
          private_key: stack.github.appPrivateKeyPem,
          client_id: stack.github.app.clientId,
          client_secret: stack.github.app.clientSecret,
        },
        provider_overrides: { base_url: stack.github.url, auth_base_url: stack.github.url },
      },
    });
    expect(github.status).toBe(201);
    // The App requests user authorization during installation: GitHub comes back to its
    // callback URL, Weft's installation callback, with a code besides the installation_id.
    stack.github.configureAppUserAuthorization({ callbackUrls: [`${stack.apiUrl}/app-auth/connect`], requestOAuthOnInstall: true });
    await createLumaIntegration(stack);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await hooks?.close();
    await stack?.shutdown();
  });

  async function connectLink(integration: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: [integration], ...extra } });
    expect(res.status).toBe(201);
    return res.body.data.connect_link;
  }

  async function connectionIds(integration: string): Promise<string[]> {
    return (await stack.api('GET', `/connections?integrationId=${integration}`)).body.connections.map((c: any) => c.connection_id).sort();
  }

  /** Connect page → "Connect GitHub" → sign in when asked → Install. */
  async function installFromConnectPage(page: Page, link: string): Promise<void> {
    await page.goto(link);
    await page.getByRole('link', { name: 'Connect GitHub' }).click();
    const login = page.getByLabel('Username or email address');
    await page.getByRole('button', { name: 'Install' }).or(login).first().waitFor();
    if (await login.isVisible()) {
      await login.fill(DEFAULT_USER.login);
      await page.getByLabel('Password').fill(DEFAULT_USER.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await page.getByRole('button', { name: 'Install' }).click();
  }

  /**
   * The next form POST to the simulated github.com's `path` runs, but the redirect back to
   * Weft it answers with is held: `rewrite` may change where it points (the browser then
   * follows it), otherwise the browser stays on a plain page. Resolves with GitHub's Location.
   * (Playwright routes only the first request of a redirect chain, hence the POST.)
   */
  function holdRedirect(page: Page, path: string, rewrite?: (location: URL) => URL): Promise<string> {
    return new Promise((resolve, reject) => {
      let held = false;
      void page.route(
        (url) => url.origin === stack.github.url && url.pathname === path,
        async (route) => {
          if (held || route.request().method() !== 'POST') return route.fallback();
          held = true;
          try {
            const answer = await route.fetch({ maxRedirects: 0 });
            const location = answer.headers().location;
            if (!location) throw new Error(`GitHub answered ${answer.status()} without a redirect`);
            resolve(location);
            // Held: a plain page instead (an aborted navigation would land on an error page
            // later, racing the test's next navigation).
            if (rewrite) await route.fulfill({ status: 302, headers: { location: rewrite(new URL(location)).href } });
            else await route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>held</title><p>held by the test</p>' });
          } catch (err) {
            reject(err);
          }
        },
      );
    });
  }

  let installedConnectionId: string;

  test('GitHub: the user installs the App; Weft checks the installation is theirs, the connection syncs repositories and the app got the auth webhook', async () => {
    const page = await (await browser.newContext()).newPage();
    stack.github.resetStats();
    await installFromConnectPage(page, await connectLink('github'));
    const done = await result(page);
    expect(done.result).toBe('success');
    // Every success page has the one wording, with the integration's display name.
    expect(done.message).toBe('The GitHub app is installed and your account is connected.');
    const connectionId = done.connectionId as string;
    installedConnectionId = connectionId;
    // The code came back with the installation and bought a user token that lists it.
    expect(
      stack.github
        .requestLog()
        .filter((e) => e.path === '/user/installations')
        .map((e) => e.status),
    ).toEqual([200]);
    expect(stack.github.stats().oauthTokenExchanges).toBe(1);

    const conn = await stack.api('GET', `/connections/${connectionId}?provider_config_key=github`);
    // GET /connections/:id hands out a current installation token (minted if needed).
    expect(conn.body.credentials).toMatchObject({ type: 'APP', app_id: String(stack.github.app.id), access_token: expect.stringMatching(/^ghs_/) });
    expect(Date.parse(conn.body.credentials.expires_at)).toBeGreaterThan(Date.now() + 5 * 60_000);
    const installationId = Number(conn.body.credentials.installation_id);
    expect(stack.github.users().find((u) => u.login === DEFAULT_USER.login)?.installationId).toBe(installationId);

    const run: any = await stack.waitForSync(connectionId, 'repositories', { providerConfigKey: 'github' });
    expect(run.result.Repository.added).toBe(stack.github.users().find((u) => u.login === DEFAULT_USER.login)?.repositories.length);
    const hook = await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === connectionId);
    expect(hook.body).toMatchObject({ operation: 'creation', success: true, authMode: 'APP', provider: 'github' });
  });

  test("GitHub: an installation_id swapped on the way back (someone else's installation) is refused; nothing is stored", async () => {
    const page = await (await browser.newContext()).newPage();
    const before = await connectionIds('github');
    // GitHub sends the browser back with this user's installation; the address bar says 1001
    // (sandbox-org's, which sandbox-user cannot access) by the time it reaches Weft.
    const sent = holdRedirect(page, `/apps/${stack.github.app.slug}/installations`, (location) => {
      location.searchParams.set('installation_id', '1001');
      return location;
    });
    await installFromConnectPage(page, await connectLink('github'));
    expect(new URL(await sent).searchParams.get('installation_id')).not.toBe('1001');
    expect(await result(page)).toMatchObject({ result: 'error', code: 'installation_not_verified', connectionId: null });
    expect(await page.getByRole('alert').textContent()).toContain('installation 1001 is not one the signed-in GitHub user can access');
    expect(await connectionIds('github')).toEqual(before);
    const hook = await hooks.waitFor((w) => w.body.type === 'auth' && w.body.providerConfigKey === 'github' && w.body.success === false);
    expect(hook.body).toMatchObject({ authMode: 'APP', operation: 'creation', error: { type: 'installation_not_verified' } });
  });

  test('GitHub: the browser never picks the connection; a reconnect link re-authorizes exactly its own', async () => {
    const page = await (await browser.newContext()).newPage();
    const before = await connectionIds('github');
    // A connect URL naming a connection is refused before anything happens.
    const link = new URL(await connectLink('github'));
    await page.goto(
      `${stack.apiUrl}/oauth/connect/github?connect_session_token=${link.searchParams.get('session_token')}&connection_id=${installedConnectionId}`,
    );
    expect(await result(page)).toMatchObject({ result: 'error', code: 'connection_id_not_allowed' });

    // The app's reconnect session for the installed connection: same id, new credentials.
    await installFromConnectPage(page, await connectLink('github', { connection_id: installedConnectionId }));
    expect(await result(page)).toMatchObject({ result: 'success', connectionId: installedConnectionId });
    expect(await connectionIds('github')).toEqual(before);
    await hooks.waitFor(
      (w) => w.body.type === 'auth' && w.body.connectionId === installedConnectionId && w.body.operation === 'override' && w.body.success === true,
    );
  });

  test('GitHub: a callback whose state was not issued by Weft creates nothing', async () => {
    const page = await (await browser.newContext()).newPage();
    const before = (await stack.api('GET', '/connections?integrationId=github')).body.connections.length;
    await page.goto(`${stack.apiUrl}/app-auth/connect?installation_id=1001&setup_action=install&state=forged`);
    expect(await result(page)).toMatchObject({ result: 'error', code: 'invalid_state' });
    expect((await stack.api('GET', '/connections?integrationId=github')).body.connections.length).toBe(before);
  });

  test('GitHub OAuth App registrations are checked: name length, homepage, App ID and private key', async () => {
    const oauth = (extra: Record<string, unknown>) => ({ type: 'OAUTH2', client_id: 'x', client_secret: 'y', ...extra });
    const create = (credentials: Record<string, unknown>) =>
      stack.api('POST', '/integrations', { body: { unique_key: `gh-${Math.random().toString(36).slice(2, 8)}`, provider: 'github', credentials } });
    const tooLong = await create(oauth({ app_name: 'x'.repeat(35), homepage_url: 'https://example.com' }));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'invalid_app_registration', message: expect.stringMatching(/at most 34 characters/) });
    expect((await create(oauth({ app_name: 'Fine name' }))).body.error).toMatchObject({
      code: 'invalid_app_registration',
      message: expect.stringMatching(/homepage_url is required/),
    });
    const app = { type: 'APP', app_id: String(stack.github.app.id), app_link: stack.github.app.publicLink };
    expect((await create({ ...app, private_key: 'not a key' })).body.error.code).toBe('invalid_private_key');
    expect((await create({ ...app, app_id: 'abc', private_key: stack.github.appPrivateKeyPem })).body.error.code).toBe('invalid_body');
    expect((await stack.api('GET', '/integrations')).body.data.filter((i: any) => i.unique_key.startsWith('gh-'))).toHaveLength(0);
  });

  test('GitHub OAuth App mode: authorize in the browser, the user token syncs repositories; a token error sent with HTTP 200 ends cleanly', async () => {
    const body = (secret: string) => ({
      credentials: {
        type: 'OAUTH2',
        client_id: DEFAULT_OAUTH_APP.clientId,
        client_secret: secret,
        app_name: DEFAULT_OAUTH_APP.name,
        homepage_url: DEFAULT_OAUTH_APP.homepageUrl,
      },
    });
    const created = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'github-oauth',
        provider: 'github',
        display_name: 'GitHub OAuth',
        ...body('wrong-secret'),
        provider_overrides: { base_url: stack.github.url, auth_base_url: stack.github.url },
      },
    });
    expect(created.status).toBe(201);
    const page = await (await browser.newContext()).newPage();
    const authorize = async () => {
      await page.goto(await connectLink('github-oauth'));
      await page.getByRole('link', { name: 'Connect GitHub OAuth' }).click();
      if (
        await page
          .getByLabel('Username or email address')
          .isVisible()
          .catch(() => false)
      ) {
        await page.getByLabel('Username or email address').fill(DEFAULT_USER.login);
        await page.getByLabel('Password').fill(DEFAULT_USER.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
      }
      const button = page.getByRole('button', { name: `Authorize ${DEFAULT_OAUTH_APP.name}` });
      if (await button.isVisible().catch(() => false)) await button.click();
      return result(page);
    };

    // GitHub answers a bad client secret with HTTP 200 and an error body: no connection, a clear page.
    const failed = await authorize();
    expect(failed).toMatchObject({ result: 'error', code: 'oauth_error' });
    await expect(page.locator('main').textContent()).resolves.toMatch(/incorrect_client_credentials/);
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.providerConfigKey === 'github-oauth' && w.body.success === false);
    expect((await stack.api('GET', '/connections?integrationId=github-oauth')).body.connections).toHaveLength(0);

    expect((await stack.api('PATCH', '/integrations/github-oauth', { body: body(DEFAULT_OAUTH_APP.clientSecret) })).status).toBe(200);
    const done = await authorize();
    expect(done.result).toBe('success');
    expect(done.message).toBe('Your GitHub OAuth account is connected.');
    const conn = await stack.api('GET', `/connections/${done.connectionId}?provider_config_key=github-oauth`);
    expect(conn.body.credentials).toMatchObject({ type: 'OAUTH2', access_token: expect.stringMatching(/^gho_/) });
    const run: any = await stack.waitForSync(done.connectionId as string, 'repositories', { providerConfigKey: 'github-oauth' });
    expect(run.result.Repository.added).toBe(stack.github.users().find((u) => u.login === DEFAULT_USER.login)?.repositories.length);
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === done.connectionId && w.body.success === true && w.body.authMode === 'OAUTH2');
  });

  test('GitHub OAuth App: a callback opened in a second browser is refused and used up; several flows started in one browser all complete', async () => {
    const [a, b] = [await browser.newContext(), await browser.newContext()];
    const before = await connectionIds('github-oauth');
    /** Connect → GitHub (sign in / authorize when asked) → the redirect back to Weft, stopped before it arrives. */
    const startFlow = async (page: Page): Promise<string> => {
      const callback = holdRedirect(page, '/login/oauth/authorize');
      await page.goto(await connectLink('github-oauth'));
      await page.getByRole('link', { name: 'Connect GitHub OAuth' }).click();
      const login = page.getByLabel('Username or email address');
      const authorize = page.getByRole('button', { name: `Authorize ${DEFAULT_OAUTH_APP.name}` });
      await authorize.or(login).first().waitFor();
      if (await login.isVisible()) {
        await login.fill(DEFAULT_USER.login);
        await page.getByLabel('Password').fill(DEFAULT_USER.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
      }
      await authorize.click();
      const back = await callback;
      await page.waitForURL((url) => url.pathname === '/login/oauth/authorize');
      expect(back).toMatch(new RegExp(`^${stack.apiUrl}/oauth/callback\\?code=`));
      return back;
    };

    const first = await startFlow(await a.newPage());
    const elsewhere = await b.newPage();
    await elsewhere.goto(first);
    expect(await result(elsewhere)).toMatchObject({ result: 'error', code: 'browser_mismatch' });
    expect(await elsewhere.getByRole('alert').textContent()).toContain('started in another browser');
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.providerConfigKey === 'github-oauth' && w.body.error?.type === 'browser_mismatch');
    // Refused for good: the browser that started it cannot finish it now either.
    const original = await a.newPage();
    await original.goto(first);
    expect(await result(original)).toMatchObject({ result: 'error', code: 'invalid_state' });
    expect(await connectionIds('github-oauth')).toEqual(before);

    // Two flows in one browser (two tabs), finished in the other order: both connect.
    const [tab1, tab2] = [await a.newPage(), await a.newPage()];
    const [back1, back2] = [await startFlow(tab1), await startFlow(tab2)];
    await tab2.goto(back2);
    await tab1.goto(back1);
    const [done1, done2] = [await result(tab1), await result(tab2)];
    expect([done1.result, done2.result]).toEqual(['success', 'success']);
    expect((await connectionIds('github-oauth')).length).toBe(before.length + 2);
    await a.close();
    await b.close();
  });

  test('Luma: a refused API key stores nothing; a valid one is verified, stored, synced, and announced', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(await connectLink('luma'));
    await page.getByLabel('API key').fill('not-a-luma-key');
    await page.getByRole('button', { name: /Connect/ }).click();
    expect(await result(page)).toMatchObject({ result: 'error', code: 'invalid_credentials' });
    expect((await stack.api('GET', '/connections?integrationId=luma')).body.connections).toHaveLength(0);
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.providerConfigKey === 'luma' && w.body.success === false);

    await page.goto(await connectLink('luma'));
    // A form tampered with to name someone's connection still creates a new one.
    await page.locator('form').evaluate((form) => form.insertAdjacentHTML('beforeend', '<input type="hidden" name="connection_id" value="victim">'));
    await page.getByLabel('API key').fill(LUMA_DEFAULT_API_KEY);
    await page.getByRole('button', { name: /Connect/ }).click();
    const done = await result(page);
    expect(done.result).toBe('success');
    expect(done.message).toBe('Your Luma account is connected.'); // the provider's display name, not the integration key "luma"
    expect(done.connectionId).toMatch(/^[0-9a-f-]{36}$/);
    const run: any = await stack.waitForSync(done.connectionId as string, 'list-events', { providerConfigKey: 'luma' });
    expect(run.result.CalendarEvent.added).toBeGreaterThan(0);
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === done.connectionId && w.body.success === true);
    // The key is a secret: never in logs, never in the webhook.
    expect(stack.logs.join('\n')).not.toContain(LUMA_DEFAULT_API_KEY);
    expect(hooks.received.map((h) => h.raw).join('\n')).not.toContain(LUMA_DEFAULT_API_KEY);
  });
});
