import type { Browser, Page } from 'playwright-core';
import { DEFAULT_USER } from '../../sandbox/github';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { launchBrowser } from '../support/browser';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/** GitHub (App installation) and Luma (API key) through the Connect page, in Chromium. */
describe('Connect: GitHub App install and Luma API key in a browser', () => {
  let stack: WeftStack;
  let browser: Browser;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    stack = await startWeftStack({ github: { seed: 5 } });
    hooks = await startWebhookReceiver();
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

  async function result(page: Page) {
    const main = page.locator('main[data-page="connect-result"]');
    await main.waitFor();
    return { result: await main.getAttribute('data-result'), code: await main.getAttribute('data-error-code'), connectionId: await main.getAttribute('data-connection-id') };
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
    expect(conn.body.credentials).toMatchObject({ type: 'APP', app_id: String(stack.github.app.id) });
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
