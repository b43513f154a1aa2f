import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { launchBrowser } from '../support/browser';
import { waitUntil } from '../support/wait';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

const PASSWORD = 'read-only-operator-passphrase';
const TEMPORAL_UI = 'http://temporal-ui.example.test';
/** WEFT_SCREENSHOTS=1 writes each page's screenshot into docs/images/ (docs/console.md shows them). */
const SCREENSHOTS = process.env.WEFT_SCREENSHOTS === '1' ? path.resolve(__dirname, '../../docs/images') : null;

/**
 * The operator console in Chromium, against a running Weft: sign-in with a secret key and as a
 * read-only operator, every page, every change (each checked through the API too), CSRF and
 * read-only refusals, sign-out, and no CSP refusal anywhere.
 */
describe('the operator console, in Chromium', () => {
  let stack: WeftStack;
  let browser: Browser;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const refusals: string[] = [];

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    stack = await startWeftStack({
      env: { WEFT_CONSOLE_PASSWORD: PASSWORD, WEFT_TEMPORAL_UI_URL: TEMPORAL_UI },
      egressAllow: { webhooks: [hooks.url] },
    });
    await createLumaIntegration(stack);
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: hooks.url, send_sync_completion_always: true } })).status).toBe(200);
    for (const [id, team] of [
      ['console-user', 'a'],
      ['other-user', 'b'],
    ]) {
      const made = await stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY }, tags: { team } },
      });
      expect(made.status).toBe(201);
      await stack.waitForSync(id, 'list-events', { providerConfigKey: 'luma' });
    }
    await hooks.waitFor((w) => w.body?.type === 'sync' && w.body.connectionId === 'console-user', 30_000);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.shutdown();
    await hooks?.close();
  });

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on('console', (m: ConsoleMessage) => {
      if (/Refused to|Content Security Policy/i.test(m.text())) refusals.push(m.text());
    });
    return { context, page };
  }

  async function signInWithKey(page: Page, key: string): Promise<void> {
    await page.goto(`${stack.apiUrl}/console`);
    await page.waitForSelector('main[data-page="console-sign-in"]');
    await page.fill('form[data-form="key"] input[name="secret_key"]', key);
    await page.click('form[data-form="key"] button');
  }

  async function shot(page: Page, name: string): Promise<void> {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, `console-${name}.png`), fullPage: false });
  }

  const pageName = (page: Page) => page.locator('main').getAttribute('data-page');
  const errorCode = (page: Page) => page.locator('[data-error-code]').getAttribute('data-error-code');

  test('sign-in: a wrong key is refused; the right one opens a session cookie no script can read; out of session, pages lead to sign-in', async () => {
    const { context, page } = await newPage();
    try {
      await signInWithKey(page, 'weft_sk_dev_wrong-key-of-enough-length');
      expect(await errorCode(page)).toBe('invalid_credentials');
      expect(await context.cookies()).not.toContainEqual(expect.objectContaining({ name: 'weft_console' }));

      await signInWithKey(page, stack.keys.dev);
      expect(await pageName(page)).toBe('console-integrations');
      const cookie = (await context.cookies()).find((c) => c.name === 'weft_console');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
      // The key is in no page and no URL.
      expect(await page.content()).not.toContain(stack.keys.dev);
      expect(page.url()).not.toContain(stack.keys.dev);
      await shot(page, 'integrations');

      await page.click('header form[action="/console/sign-out"] button');
      expect(await pageName(page)).toBe('console-sign-in');
      expect(await page.locator('[data-notice]').getAttribute('data-notice')).toBe('signed-out');
      await page.goto(`${stack.apiUrl}/console/connections`);
      expect(await pageName(page)).toBe('console-sign-in');
    } finally {
      await context.close();
    }
  });

  test('integrations: the status figures and the last 24 hours of runs and calls', async () => {
    const { context, page } = await newPage();
    try {
      // A run that fails (Luma refuses its first page), for the chart's failed runs and calls.
      stack.luma.failNext(1, 400);
      expect(
        (await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'other-user', syncs: ['list-events'] } })).status,
      ).toBe(200);
      await waitUntil(async () => {
        const now = await stack.api('GET', '/sync/status?provider_config_key=luma&connection_id=other-user&syncs=list-events');
        return now.body.syncs[0].status === 'ERROR';
      }, 30_000);
      await signInWithKey(page, stack.keys.dev);
      const row = page.locator('tr[data-integration="luma"]');
      expect(await row.locator('[data-figure="connections"]').textContent()).toBe('2');
      await row.locator('a').first().click();
      expect(await pageName(page)).toBe('console-integration');
      const hours = page.locator('[data-chart="24h"] g[data-hour]');
      expect(await hours.count()).toBe(24);
      // The runs of the first syncs and their calls are in the chart (this hour's bar).
      const lastHour = hours.last();
      expect(Number(await lastHour.getAttribute('data-runs'))).toBeGreaterThanOrEqual(3);
      expect(Number(await lastHour.getAttribute('data-failed'))).toBe(1);
      expect(Number(await lastHour.getAttribute('data-calls'))).toBeGreaterThan(0);
      expect(Number(await lastHour.getAttribute('data-call-errors'))).toBe(1);
      // The failing sync is among the latest errors, linked to its connection.
      expect(await page.locator('tr[data-error] a').first().textContent()).toBe('other-user');
      await shot(page, 'integration');
    } finally {
      await context.close();
    }
  });

  test('connections: searched by id and by tag; a connection’s syncs run, pause, resume and reset; each run links to the Temporal UI', async () => {
    const { context, page } = await newPage();
    try {
      await signInWithKey(page, stack.keys.dev);
      await page.goto(`${stack.apiUrl}/console/connections?search=console`);
      expect(await page.locator('tr[data-connection]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-connection')))).toEqual(['console-user']);
      await page.goto(`${stack.apiUrl}/console/connections?tag=team%3Db`);
      expect(await page.locator('tr[data-connection]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-connection')))).toEqual(['other-user']);
      await page.goto(`${stack.apiUrl}/console/connections`);
      await shot(page, 'connections');

      await page.click('tr[data-connection="console-user"] a');
      expect(await pageName(page)).toBe('console-connection');
      expect(await page.locator('[data-tags]').textContent()).toContain('"team": "a"');
      const temporalLink = await page.locator('a[data-temporal-link]').first().getAttribute('href');
      expect(temporalLink).toMatch(new RegExp(`^${TEMPORAL_UI}/namespaces/[^/]+/workflows/[^/]+/[^/]+/history$`));
      await shot(page, 'connection');

      await page.click('button[data-action="pause:list-events"]');
      expect(await page.locator('[data-notice]').getAttribute('data-notice')).toBe('sync-paused');
      expect(await page.locator('tr[data-sync="list-events"]').getAttribute('data-status')).toBe('PAUSED');
      const paused = await stack.api('GET', '/sync/status?provider_config_key=luma&connection_id=console-user&syncs=list-events');
      expect(paused.body.syncs[0].status).toBe('PAUSED');

      await page.click('button[data-action="resume:list-events"]');
      expect(await page.locator('[data-notice]').getAttribute('data-notice')).toBe('sync-resumed');
      expect(await page.locator('tr[data-sync="list-events"]').getAttribute('data-status')).not.toBe('PAUSED');

      const runsBefore = hooks.received.filter((w) => w.body?.type === 'sync' && w.body.connectionId === 'console-user').length;
      await page.click('button[data-action="trigger:list-events"]');
      expect(await page.locator('[data-notice]').getAttribute('data-notice')).toBe('sync-triggered');
      await hooks.waitFor((w) => w.body?.type === 'sync' && w.body.connectionId === 'console-user' && hooks.received.indexOf(w) >= runsBefore, 30_000);

      // A reset waits for the run to have ended (as POST /sync/trigger does: 409 sync_running).
      await waitUntil(async () => {
        const now = await stack.api('GET', '/sync/status?provider_config_key=luma&connection_id=console-user&syncs=list-events');
        return now.body.syncs[0].status !== 'RUNNING';
      }, 30_000);
      await page.reload();
      await page.click('button[data-action="reset:list-events"]');
      expect(await page.locator('[data-error-code]').allTextContents()).toEqual([]);
      expect(await page.locator('main').getAttribute('data-page')).toBe('console-connection');
      expect(await page.locator('[data-notice]').getAttribute('data-notice')).toBe('sync-reset');
    } finally {
      await context.close();
    }
  });

  test('records: a model’s records page by page, as JSON, filtered by their last change', async () => {
    const { context, page } = await newPage();
    try {
      await signInWithKey(page, stack.keys.dev);
      await page.goto(`${stack.apiUrl}/console/connections/luma/other-user/records?model=CalendarEvent`);
      expect(await pageName(page)).toBe('console-records');
      const firstIds = await page.locator('tr[data-record]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-record')));
      expect(firstIds).toHaveLength(25);
      const api = await stack.api('GET', '/records?model=CalendarEvent&limit=25', {
        headers: { 'connection-id': 'other-user', 'provider-config-key': 'luma' },
      });
      expect(firstIds).toEqual(api.body.records.map((r: { id: string }) => r.id));
      await shot(page, 'records');
      await page.click('a[data-pager="next"]');
      const secondIds = await page.locator('tr[data-record]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-record')));
      expect(secondIds.length).toBeGreaterThan(0);
      expect(secondIds.filter((id) => firstIds.includes(id))).toEqual([]);

      await page.goto(`${stack.apiUrl}/console/connections/luma/other-user/records?model=CalendarEvent&last_action=deleted`);
      expect(await page.locator('tr[data-record]').count()).toBe(0);
      // The unified view where the integration has one.
      await page.goto(`${stack.apiUrl}/console/connections/luma/other-user/records?model=UnifiedEvent`);
      expect(await page.locator('tr[data-record]').count()).toBe(25);
    } finally {
      await context.close();
    }
  });

  test('request log: filtered, with a detail view of one request (redacted: no key anywhere)', async () => {
    const { context, page } = await newPage();
    try {
      await signInWithKey(page, stack.keys.dev);
      await page.goto(`${stack.apiUrl}/console/logs?connection_id=other-user`);
      const rows = page.locator('tr[data-log]');
      expect(await rows.count()).toBeGreaterThan(0);
      expect(await page.locator('tbody').textContent()).not.toContain('console-user');
      await shot(page, 'logs');
      await rows.first().locator('a').first().click();
      expect(await pageName(page)).toBe('console-log-entry');
      expect(await page.locator('[data-request]').textContent()).toMatch(/^(GET|POST) http/);
      expect(await page.content()).not.toContain(LUMA_DEFAULT_API_KEY);
      await shot(page, 'log-entry');
    } finally {
      await context.close();
    }
  });

  test('webhook events: listed, one with its attempts, replayed; the failed ones of a range replayed', async () => {
    const { context, page } = await newPage();
    try {
      await signInWithKey(page, stack.keys.dev);
      await page.goto(`${stack.apiUrl}/console/webhooks?type=sync`);
      const delivered = page.locator('tr[data-event][data-status="delivered"]');
      expect(await delivered.count()).toBeGreaterThan(0);
      await shot(page, 'webhooks');
      await delivered.first().locator('a').click();
      expect(await pageName(page)).toBe('console-webhook-event');
      const eventId = (await page.locator('div[data-event]').getAttribute('data-event')) as string;
      expect(await page.locator('tr[data-attempt]').count()).toBeGreaterThan(0);
      await shot(page, 'webhook-event');
      const receivedBefore = hooks.received.length;
      await page.click('button[data-action="replay"]');
      expect(await page.locator('[data-notice]').getAttribute('data-notice')).toBe('event-replayed');
      const event = await stack.api('GET', `/webhooks/events/${encodeURIComponent(eventId)}`);
      expect(event.body.replays).toBe(1);
      await hooks.waitFor((w) => hooks.received.indexOf(w) >= receivedBefore && w.body?.type === 'sync', 30_000);

      await page.goto(`${stack.apiUrl}/console/webhooks`);
      await page.click('button[data-action="replay-failed"]');
      expect(await pageName(page)).toBe('console-replayed');
      expect(Number(await page.locator('[data-replayed]').getAttribute('data-replayed'))).toBe(0);
    } finally {
      await context.close();
    }
  });

  test('Connect links and reconnect links; a connection deleted after confirmation', async () => {
    const { context, page } = await newPage();
    try {
      await signInWithKey(page, stack.keys.dev);
      await page.goto(`${stack.apiUrl}/console/connections`);
      await page.selectOption('form[action="/console/connect-links"] select[name="integration"]', 'luma');
      await page.fill('form[action="/console/connect-links"] input[name="end_user_id"]', 'user-42');
      await page.click('button[data-action="create-connect-link"]');
      const link = await page.locator('input[data-connect-link]').inputValue();
      expect(link).toMatch(/\/connect\?session_token=weft_connect_/);
      // The link opens the Connect page for that user.
      const connect = await context.newPage();
      await connect.goto(link);
      expect(await connect.locator('[data-end-user]').textContent()).toContain('user-42');
      await connect.close();
      // Made as POST /connect/sessions makes it: the end user will be the connection's end_user_id tag.
      const stored = await stack.core.stores.connectSessions.find(new URL(link).searchParams.get('session_token') as string);
      expect(stored).toMatchObject({ allowed_integrations: ['luma'], tags: { end_user_id: 'user-42' } });

      await page.goto(`${stack.apiUrl}/console/connections/luma/other-user`);
      await page.click('button[data-action="reconnect"]');
      expect(await page.locator('input[data-connect-link]').inputValue()).toMatch(/session_token=/);

      await page.goto(`${stack.apiUrl}/console/connections/luma/console-user`);
      await page.click('a[data-action="delete"]');
      expect(await pageName(page)).toBe('console-confirm-delete');
      await shot(page, 'confirm-delete');
      // Still there until confirmed.
      expect((await stack.api('GET', '/connections/console-user?provider_config_key=luma')).status).toBe(200);
      await page.click('button[data-action="confirm-delete"]');
      expect(await page.locator('[data-notice]').getAttribute('data-notice')).toBe('connection-deleted');
      expect((await stack.api('GET', '/connections/console-user?provider_config_key=luma')).status).toBe(404);
    } finally {
      await context.close();
    }
  });

  test('a change without the session’s CSRF token is refused and changes nothing', async () => {
    const { context, page } = await newPage();
    try {
      await signInWithKey(page, stack.keys.dev);
      const action = `${stack.apiUrl}/console/connections/luma/other-user/syncs`;
      const forms: Array<Record<string, string>> = [
        { sync: 'list-events', op: 'pause' },
        { sync: 'list-events', op: 'pause', _csrf: 'not-the-token' },
      ];
      for (const form of forms) {
        const res = await page.request.post(action, { form, maxRedirects: 0 });
        expect(res.status()).toBe(403);
        expect(await res.text()).toContain('data-error-code="invalid_csrf_token"');
      }
      const status = await stack.api('GET', '/sync/status?provider_config_key=luma&connection_id=other-user&syncs=list-events');
      expect(status.body.syncs[0].status).not.toBe('PAUSED');
    } finally {
      await context.close();
    }
  });

  test('a read-only operator sees every page, is offered no change, and is refused one sent anyway', async () => {
    const { context, page } = await newPage();
    try {
      await page.goto(`${stack.apiUrl}/console/sign-in`);
      await page.fill('form[data-form="password"] input[name="environment"]', 'dev');
      await page.fill('form[data-form="password"] input[name="password"]', 'not the password at all');
      await page.click('form[data-form="password"] button');
      expect(await errorCode(page)).toBe('invalid_credentials');

      await page.goto(`${stack.apiUrl}/console/sign-in`);
      await page.fill('form[data-form="password"] input[name="environment"]', 'dev');
      await page.fill('form[data-form="password"] input[name="password"]', PASSWORD);
      await page.click('form[data-form="password"] button');
      expect(await page.locator('[data-role]').getAttribute('data-role')).toBe('read-only');
      for (const at of ['/console/integrations', '/console/connections', '/console/connections/luma/other-user', '/console/logs', '/console/webhooks']) {
        await page.goto(`${stack.apiUrl}${at}`);
        expect(await page.locator('main').getAttribute('data-page')).toMatch(/^console-/);
        expect(await page.locator('main [data-action]').count()).toBe(0);
      }
      // With the session's own CSRF token (from the sign-out form), a change is still refused.
      const csrf = await page.locator('header input[name="_csrf"]').inputValue();
      const res = await page.request.post(`${stack.apiUrl}/console/connections/luma/other-user/syncs`, {
        form: { sync: 'list-events', op: 'pause', _csrf: csrf },
        maxRedirects: 0,
      });
      expect(res.status()).toBe(403);
      expect(await res.text()).toContain('data-error-code="console_read_only"');
      const status = await stack.api('GET', '/sync/status?provider_config_key=luma&connection_id=other-user&syncs=list-events');
      expect(status.body.syncs[0].status).not.toBe('PAUSED');
    } finally {
      await context.close();
    }
  });

  test('no page broke its Content-Security-Policy', () => {
    expect(refusals).toEqual([]);
  });
});
