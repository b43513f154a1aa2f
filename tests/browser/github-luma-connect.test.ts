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
    stack = await startWeftStack({ github: { seed: 5 }, egressAllow: [hooks.url] });
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: hooks.url } })).status).toBe(200);
    const github = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'github',
        provider: 'github',
        display_name: 'GitHub',
        credentials: { type: 'APP', app_id: String(stack.github.app.id), app_link: stack.github.app.publicLink, private_key: stack.github.appPrivateKeyPem },
        provider_overrides: { base_url: stack.github.url },
      },
    });
    expect(github.status).toBe(201);
    // The App's Setup URL is Weft's installation callback.
    stack.github.setAppSetupUrl(`${stack.apiUrl}/app-auth/connect`);
    await createLumaIntegration(stack);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await hooks?.close();
    await stack?.shutdown();
  });

  async function connectLink(integration: string): Promise<string> {
    const res = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: [integration] } });
    expect(res.status).toBe(201);
    return res.body.data.connect_link;
  }


  test('GitHub: the user installs the App; the connection syncs repositories and the app got the auth webhook', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(await connectLink('github'));
    await page.getByRole('link', { name: 'Connect GitHub' }).click();
    await page.getByLabel('Username or email address').fill(DEFAULT_USER.login);
    await page.getByLabel('Password').fill(DEFAULT_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Install' }).click();
    const done = await result(page);
    expect(done.result).toBe('success');
    const connectionId = done.connectionId as string;

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

  test('GitHub: a callback whose state was not issued by Weft creates nothing', async () => {
    const page = await (await browser.newContext()).newPage();
    const before = (await stack.api('GET', '/connections?integrationId=github')).body.connections.length;
    await page.goto(`${stack.apiUrl}/app-auth/connect?installation_id=1001&setup_action=install&state=forged`);
    expect(await result(page)).toMatchObject({ result: 'error', code: 'invalid_state' });
    expect((await stack.api('GET', '/connections?integrationId=github')).body.connections.length).toBe(before);
  });

  test('GitHub OAuth App registrations are checked: name length, homepage, App ID and private key', async () => {
    const oauth = (extra: Record<string, unknown>) => ({ type: 'OAUTH2', client_id: 'x', client_secret: 'y', ...extra });
    const create = (credentials: Record<string, unknown>) => stack.api('POST', '/integrations', { body: { unique_key: `gh-${Math.random().toString(36).slice(2, 8)}`, provider: 'github', credentials } });
    const tooLong = await create(oauth({ app_name: 'x'.repeat(35), homepage_url: 'https://example.com' }));
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'invalid_app_registration', message: expect.stringMatching(/at most 34 characters/) });
    expect((await create(oauth({ app_name: 'Fine name' }))).body.error).toMatchObject({ code: 'invalid_app_registration', message: expect.stringMatching(/homepage_url is required/) });
    const app = { type: 'APP', app_id: String(stack.github.app.id), app_link: stack.github.app.publicLink };
    expect((await create({ ...app, private_key: 'not a key' })).body.error.code).toBe('invalid_private_key');
    expect((await create({ ...app, app_id: 'abc', private_key: stack.github.appPrivateKeyPem })).body.error.code).toBe('invalid_body');
    expect((await stack.api('GET', '/integrations')).body.data.filter((i: any) => i.unique_key.startsWith('gh-'))).toHaveLength(0);
  });

  test('GitHub OAuth App mode: authorize in the browser, the user token syncs repositories; a token error sent with HTTP 200 ends cleanly', async () => {
    const body = (secret: string) => ({
      credentials: { type: 'OAUTH2', client_id: DEFAULT_OAUTH_APP.clientId, client_secret: secret, app_name: DEFAULT_OAUTH_APP.name, homepage_url: DEFAULT_OAUTH_APP.homepageUrl },
    });
    const created = await stack.api('POST', '/integrations', {
      body: { unique_key: 'github-oauth', provider: 'github', display_name: 'GitHub OAuth', ...body('wrong-secret'), provider_overrides: { base_url: stack.github.url, auth_base_url: stack.github.url } },
    });
    expect(created.status).toBe(201);
    const page = await (await browser.newContext()).newPage();
    const authorize = async () => {
      await page.goto(await connectLink('github-oauth'));
      await page.getByRole('link', { name: 'Connect GitHub OAuth' }).click();
      if (await page.getByLabel('Username or email address').isVisible().catch(() => false)) {
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
    const conn = await stack.api('GET', `/connections/${done.connectionId}?provider_config_key=github-oauth`);
    expect(conn.body.credentials).toMatchObject({ type: 'OAUTH2', access_token: expect.stringMatching(/^gho_/) });
    const run: any = await stack.waitForSync(done.connectionId as string, 'repositories', { providerConfigKey: 'github-oauth' });
    expect(run.result.Repository.added).toBe(stack.github.users().find((u) => u.login === DEFAULT_USER.login)?.repositories.length);
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === done.connectionId && w.body.success === true && w.body.authMode === 'OAUTH2');
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
    await page.getByLabel('API key').fill(LUMA_DEFAULT_API_KEY);
    await page.getByRole('button', { name: /Connect/ }).click();
    const done = await result(page);
    expect(done.result).toBe('success');
    const run: any = await stack.waitForSync(done.connectionId as string, 'list-events', { providerConfigKey: 'luma' });
    expect(run.result.CalendarEvent.added).toBeGreaterThan(0);
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === done.connectionId && w.body.success === true);
    // The key is a secret: never in logs, never in the webhook.
    expect(stack.logs.join('\n')).not.toContain(LUMA_DEFAULT_API_KEY);
    expect(hooks.received.map((h) => h.raw).join('\n')).not.toContain(LUMA_DEFAULT_API_KEY);
  });
});
