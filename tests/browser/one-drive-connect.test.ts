import type { Browser, Page } from 'playwright-core';
import {
  createMicrosoftIdentitySimulator,
  MS_IDENTITY_DEFAULT_ADMIN_PASSWORD,
  MS_IDENTITY_DEFAULT_CLIENT_ID,
  MS_IDENTITY_DEFAULT_CLIENT_SECRET,
  MS_IDENTITY_DEFAULT_USER_PASSWORD,
  type MicrosoftIdentitySimulator,
} from '../../sandbox/microsoft-identity';
import { freshOAuthCredentials } from '../../auth/oauth/token-refresh';
import { tokenRefreshDeps } from '../../webhooks/auth-events';
import { sealedAt } from '../../auth/credential-cipher';
import { hashSessionToken } from '../../store/connect-sessions';
import { connectResult as result, launchBrowser } from '../support/browser';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { waitFor } from '../support/wait';
import { coreWebhookDelivery } from '../../app/webhook-delivery';
import { readAllRecords, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';

const ADMIN = 'admin@contoso.onmicrosoft.com';
const USER = 'user@contoso.onmicrosoft.com';

/** OneDrive through the Connect page, the simulated Microsoft sign-in and consent pages, in Chromium. */
describe('Connect: OneDrive (Microsoft OAuth 2.0 + PKCE) in a browser', () => {
  let stack: WeftStack;
  let identity: MicrosoftIdentitySimulator;
  let browser: Browser;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    // Small pages, so a sync makes many requests and a token can expire in the middle of one.
    identity = createMicrosoftIdentitySimulator({});
    await identity.start();
    hooks = await startWebhookReceiver();
    // Weft may call the sign-in simulator and the webhook receiver (exact host:port each), nothing else on loopback.
    stack = await startWeftStack({
      graph: { seed: 4, drives: [{ fileCount: 40 }], defaultPageSize: 5, maxPageSize: 5 },
      egressAllow: { providers: [identity.url as string], webhooks: [hooks.url] },
    });
    identity.addRedirectUri(MS_IDENTITY_DEFAULT_CLIENT_ID, `${stack.apiUrl}/oauth/callback`);
    // The Graph simulator accepts exactly the tokens the identity simulator issues.
    identity.onAccessToken((e) => void (e.resource === 'graph' && stack.graph.addAccessToken(e.token)));
    identity.onAccessTokenRevoked((e) => stack.graph.revokeAccessToken(e.token));
    const root = (await (await fetch(`${stack.graph.url}/v1.0/sites/root`, { headers: { authorization: 'Bearer sandbox-graph-token' } })).json()) as any;
    identity.setSharePointHost(root.siteCollection.hostname);

    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: hooks.url } })).status).toBe(200);
    const created = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'one-drive',
        provider: 'one-drive',
        display_name: 'OneDrive',
        credentials: { type: 'OAUTH2', client_id: MS_IDENTITY_DEFAULT_CLIENT_ID, client_secret: MS_IDENTITY_DEFAULT_CLIENT_SECRET, tenant: 'organizations' },
        provider_overrides: { base_url: stack.graph.url, auth_base_url: identity.url },
      },
    });
    expect(created.status).toBe(201);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await hooks?.close();
    await identity?.stop();
    await stack?.shutdown();
  });

  async function connectLink(defaults: Record<string, unknown> = {}): Promise<string> {
    const res = await stack.api('POST', '/connect/sessions', {
      body: { allowed_integrations: ['one-drive'], integrations_config_defaults: { 'one-drive': defaults } },
    });
    expect(res.status).toBe(201);
    return res.body.data.connect_link;
  }

  /** Connect page → "Connect OneDrive" → Microsoft sign-in; leaves the page wherever Microsoft goes next. */
  async function signIn(page: Page, link: string, username: string, password: string): Promise<void> {
    await page.goto(link);
    await page.getByRole('link', { name: 'Connect OneDrive' }).click();
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function connectionCount(): Promise<number> {
    return (await stack.api('GET', '/connections?integrationId=one-drive')).body.connections.length;
  }

  test('a user signs in and consents: the connection exists, syncs, and the app got the auth webhook', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Scopes without offline_access: Weft adds it, or Microsoft would issue no refresh token.
    await signIn(page, await connectLink({ user_scopes: ['Files.Read.All', 'User.Read'] }), USER, MS_IDENTITY_DEFAULT_USER_PASSWORD);
    await page.getByRole('button', { name: 'Accept' }).click();
    const done = await result(page);
    expect(done.result).toBe('success');
    const connectionId = done.connectionId as string;

    const conn = await stack.api('GET', `/connections/${connectionId}?provider_config_key=one-drive&refresh_token=true`);
    expect(conn.status).toBe(200);
    expect(conn.body.credentials).toMatchObject({ type: 'OAUTH2' });
    expect(conn.body.credentials.refresh_token).toBeTruthy(); // offline_access was requested
    expect(conn.body.connection_config.tenant).toBe('organizations');
    expect(conn.body.connection_config.teamsiteAccessToken).toBeUndefined(); // Sites.Read.All not requested
    // A call that needs the team-site token tells the app to re-authorize (the connection has none).
    const missing = await stack.api('GET', '/v1/team-site-token', { headers: { 'connection-id': connectionId, 'provider-config-key': 'one-drive' } });
    expect(missing.status).toBe(409);
    expect(missing.body.error).toMatchObject({ code: 'teamsite_token_missing', message: expect.stringMatching(/Re-authorize/) });
    // PKCE and state were sent; the token request carried the verifier.
    const authorize = identity.requestLog().find((e) => e.path.endsWith('/oauth2/v2.0/authorize'));
    expect(authorize?.query).toMatchObject({ code_challenge_method: 'S256', state: expect.any(String) });
    expect(String(authorize?.query.scope).split(' ')).toEqual(expect.arrayContaining(['offline_access', 'Files.Read.All', 'User.Read']));

    const hook = await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === connectionId);
    expect(hook.body).toMatchObject({ from: 'weft', operation: 'creation', success: true, providerConfigKey: 'one-drive', authMode: 'OAUTH2' });

    // It works: the files sync with the token Microsoft issued.
    // (The run that starts with the connection may have saved them before this one: count the records, not this run's changes.)
    const run = await runSync(stack, 'one-drive', connectionId, 'user-files');
    expect(run.result.File).toBeDefined();
    expect((await readAllRecords(stack, connectionId, 'File', {}, 'one-drive')).length).toBeGreaterThan(0);

    // Replaying the callback (same code, same state) is refused and creates nothing.
    const callback = identity.requestLog().length; // (for debugging only)
    expect(callback).toBeGreaterThan(0);
    await context.close();
  });

  test('an admin grants Sites.Read.All for the organization: the team-site token is stored with the connection', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(
      page,
      await connectLink({ user_scopes: ['offline_access', 'Files.Read.All', 'User.Read', 'Sites.Read.All'], authorization_params: { prompt: 'consent' } }),
      ADMIN,
      MS_IDENTITY_DEFAULT_ADMIN_PASSWORD,
    );
    await page.getByLabel('Consent on behalf of your organization').check();
    await page.getByRole('button', { name: 'Accept' }).click();
    const done = await result(page);
    expect(done.result).toBe('success');
    const conn = await stack.api('GET', `/connections/${done.connectionId}?provider_config_key=one-drive`);
    expect(typeof conn.body.connection_config.teamsiteAccessToken).toBe('string');
    expect(identity.accessTokenInfo(conn.body.connection_config.teamsiteAccessToken)).toMatchObject({ resource: 'sharepoint' });
    // prompt=consent reached Microsoft.
    expect(identity.requestLog().some((e) => e.path.endsWith('/authorize') && e.query.prompt === 'consent')).toBe(true);
    // The picker's token is also an operation of the integration.
    const token = await stack.api('GET', '/v1/team-site-token', {
      headers: { 'connection-id': done.connectionId as string, 'provider-config-key': 'one-drive' },
    });
    expect(token.status).toBe(200);
    expect(token.body.access_token).toBe(conn.body.connection_config.teamsiteAccessToken);
    // The team-site token is refreshed together with the main one.
    const refreshed = await stack.api('GET', `/connections/${done.connectionId}?provider_config_key=one-drive&force_refresh=true`);
    expect(refreshed.body.credentials.access_token).not.toBe(conn.body.credentials.access_token);
    expect(refreshed.body.connection_config.teamsiteAccessToken).not.toBe(conn.body.connection_config.teamsiteAccessToken);
    expect(identity.accessTokenInfo(refreshed.body.connection_config.teamsiteAccessToken)).toMatchObject({ resource: 'sharepoint' });
    await context.close();
  });

  test('the user cancels consent: a clear page, an auth webhook with success false, no connection', async () => {
    const before = await connectionCount();
    const context = await browser.newContext();
    const page = await context.newPage();
    // prompt=consent: this user consented before, and would otherwise not see the page.
    await signIn(page, await connectLink({ authorization_params: { prompt: 'consent' } }), USER, MS_IDENTITY_DEFAULT_USER_PASSWORD);
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await result(page)).toMatchObject({ result: 'error', code: 'access_denied' });
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.success === false && w.body.error?.type === 'access_denied');
    expect(await connectionCount()).toBe(before);
    await context.close();
  });

  test('a non-admin asks for an admin-only permission: admin consent is required, nothing is stored', async () => {
    const before = await connectionCount();
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, await connectLink({ user_scopes: ['offline_access', 'Files.Read.All', 'User.Read.All'] }), USER, MS_IDENTITY_DEFAULT_USER_PASSWORD);
    await page.getByRole('button', { name: 'Return to the application without granting consent' }).click();
    const done = await result(page);
    expect(done).toMatchObject({ result: 'error', code: 'admin_consent_required' });
    await expect(page.locator('main').textContent()).resolves.toMatch(/administrator/i);
    const hook = await hooks.waitFor((w) => w.body.type === 'auth' && w.body.error?.type === 'admin_consent_required');
    expect(hook.body.success).toBe(false);
    expect(await connectionCount()).toBe(before);
    await context.close();
  });

  test('.default mixed with explicit scopes is refused before any redirect', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const requestsBefore = identity.requestLog().length;
    await page.goto(await connectLink({ user_scopes: ['https://graph.microsoft.com/.default', 'Files.Read.All'] }));
    await page.getByRole('link', { name: 'Connect OneDrive' }).click();
    expect(await result(page)).toMatchObject({ result: 'error', code: 'invalid_scopes_default_mixed' });
    expect(identity.requestLog().length).toBe(requestsBefore);
    await context.close();
  });

  test('a tampered state, a replayed callback and an expired session each end on a clear page with no connection', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // A completed flow, whose callback URL is then replayed.
    let callbackUrl = '';
    page.on('request', (r) => void (r.url().includes('/oauth/callback?') && (callbackUrl = r.url())));
    await signIn(page, await connectLink(), USER, MS_IDENTITY_DEFAULT_USER_PASSWORD);
    const consent = page.getByRole('button', { name: 'Accept' });
    if (await consent.isVisible().catch(() => false)) await consent.click();
    expect((await result(page)).result).toBe('success');
    const count = await connectionCount();

    await page.goto(callbackUrl);
    expect(await result(page)).toMatchObject({ result: 'error', code: 'invalid_state' });

    const tampered = new URL(callbackUrl);
    tampered.searchParams.set('state', `${tampered.searchParams.get('state')}x`);
    await page.goto(tampered.href);
    expect(await result(page)).toMatchObject({ result: 'error', code: 'invalid_state' });
    expect(await connectionCount()).toBe(count);

    const link = await connectLink();
    // The session runs out (as time would have it): its document's expiry moves into the past.
    const sessionId = hashSessionToken(new URL(link).searchParams.get('session_token') as string);
    await stack.core.stores.db.collection('connect_sessions').updateOne({ _id: sessionId as never }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const res = await page.goto(link);
    expect(res?.status()).toBe(401);
    expect(await result(page)).toMatchObject({ result: 'error', code: 'connect_session_expired' });
    await context.close();
  });

  /** A fresh connection made through the browser; returns its connection id. */
  async function connectThroughBrowser(): Promise<string> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, await connectLink(), USER, MS_IDENTITY_DEFAULT_USER_PASSWORD);
    const consent = page.getByRole('button', { name: 'Accept' });
    if (await consent.isVisible().catch(() => false)) await consent.click();
    const done = await result(page);
    await context.close();
    expect(done).toMatchObject({ result: 'success', code: null });
    // Let the auto-started first run finish: it would otherwise refresh alongside the test.
    await stack.waitForSync(done.connectionId as string, 'user-files', { providerConfigKey: 'one-drive' });
    return done.connectionId as string;
  }

  /** Waits until no sync of any OneDrive connection is running (their refreshes would mix into the counts). */
  async function settle(): Promise<void> {
    for (const c of (await stack.api('GET', '/connections?integrationId=one-drive')).body.connections) {
      await stack.waitForSync(c.connection_id, 'user-files', { providerConfigKey: 'one-drive' }).catch(() => undefined);
    }
  }

  async function storedAccessToken(connectionId: string): Promise<string> {
    const conn = await stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: 'one-drive', connectionId });
    return stack.core.cipher.open<any>(conn!.credentials_encrypted, sealedAt.connectionCredentials(conn!)).access_token;
  }

  test('a token that expires in the middle of a sync is refreshed and the sync finishes', async () => {
    const connectionId = await connectThroughBrowser();
    await settle();
    const before = await storedAccessToken(connectionId);
    const refreshes = identity.stats().tokenRequests.refresh_token;

    stack.graph.setLatency(100);
    const trigger = await stack.api('POST', '/sync/trigger', {
      body: { provider_config_key: 'one-drive', connection_id: connectionId, syncs: ['user-files'], opts: { reset: true, emptyCache: true } },
    });
    expect(trigger.status).toBe(200);
    // Once the run is a few pages in, every access token dies (Graph answers 401 from then on).
    const startedAt = stack.graph.stats().requests;
    const deadline = Date.now() + 20_000;
    while (stack.graph.stats().requests < startedAt + 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(identity.expireAccessTokens()).toBeGreaterThan(0);
    const run: any = await stack.waitForSync(connectionId, 'user-files', { providerConfigKey: 'one-drive' });
    stack.graph.setLatency(0);

    expect(run.result.File.added).toBe(stack.graph.items().filter((i: any) => !i.root).length);
    expect(stack.graph.stats().byStatus[401]).toBeGreaterThan(0);
    expect(identity.stats().tokenRequests.refresh_token).toBe(refreshes + 1);
    expect(await storedAccessToken(connectionId)).not.toBe(before);
  });

  test('two workers racing to refresh one connection make exactly one refresh call', async () => {
    const connectionId = await connectThroughBrowser();
    await settle();
    const conn = await stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: 'one-drive', connectionId });
    const stale = await storedAccessToken(connectionId);
    const refreshes = identity.stats().tokenRequests.refresh_token;
    // Two independent refreshers (as two worker processes would be): only the database is shared.
    const worker = () =>
      tokenRefreshDeps({
        stores: stack.core.stores,
        cipher: stack.core.cipher,
        registry: stack.core.registry,
        logger: { info() {}, warn() {}, error() {}, debug() {} } as any,
        egress: stack.egress,
        startWebhookDelivery: coreWebhookDelivery(stack.core),
        pollMs: 20,
      });
    const [a, b] = await Promise.all([
      freshOAuthCredentials(worker(), conn!._id, { force: true, staleAccessToken: stale }),
      freshOAuthCredentials(worker(), conn!._id, { force: true, staleAccessToken: stale }),
    ]);
    expect(identity.stats().tokenRequests.refresh_token).toBe(refreshes + 1);
    expect(a.access_token).toBe(b.access_token);
    expect(a.access_token).not.toBe(stale);
  });

  test('GET /connections/:id refreshes within 15 minutes of expiry; a refused refresh marks the connection and tells the app', async () => {
    const connectionId = await connectThroughBrowser();
    const path = `/connections/${connectionId}?provider_config_key=one-drive`;
    // Each answer's token tells whether it was refreshed (the counters are shared with other connections).
    const first = (await stack.api('GET', path)).body.credentials;
    const unchanged = (await stack.api('GET', path)).body.credentials;
    expect(unchanged.access_token).toBe(first.access_token); // an hour left: not refreshed

    identity.setAccessTokenLifetime(600); // new tokens live 10 minutes: inside the 15-minute margin
    const forced = (await stack.api('GET', `${path}&force_refresh=true`)).body.credentials;
    expect(forced.access_token).not.toBe(first.access_token);
    expect(Date.parse(forced.expires_at) - Date.now()).toBeLessThan(15 * 60_000);
    const again = (await stack.api('GET', path)).body.credentials;
    expect(again.access_token).not.toBe(forced.access_token); // expiring within 15 minutes: refreshed first
    expect(identity.isAccessTokenValid(again.access_token)).toBe(true);
    identity.setAccessTokenLifetime(3600);

    identity.revokeRefreshTokens(USER);
    const refused = await stack.api('GET', `${path}&force_refresh=true`);
    expect(refused.status).toBe(424);
    const listed = (await stack.api('GET', `/connections?connectionId=${connectionId}`)).body.connections[0];
    expect(listed.errors).toEqual([expect.objectContaining({ type: 'auth' })]);
    const hook = await hooks.waitFor((w) => w.body.type === 'auth' && w.body.operation === 'refresh' && w.body.connectionId === connectionId);
    expect(hook.body).toMatchObject({ success: false, error: { type: 'refresh_failed' } });
    // Sent through the outbox, the durable path, not from the request that refreshed: stored, delivered, the attempt recorded.
    const eventId = String(hook.headers['webhook-id']);
    await waitFor(async () => (await stack.core.stores.webhookOutbox.get(eventId))?.status === 'delivered', 10_000, 'the refresh event delivered');
    expect(await stack.core.stores.webhookOutbox.get(eventId)).toMatchObject({ type: 'auth', payload: hook.body });
    expect((await stack.core.stores.webhookDeliveries.listForEvent('dev', eventId)).map((a) => a.status)).toEqual([expect.any(Number)]);
  });

  test('no token, code or verifier appears in the logs', async () => {
    const all = stack.logs.join('\n');
    const conns = (await stack.api('GET', '/connections?integrationId=one-drive')).body.connections;
    expect(conns.length).toBeGreaterThan(3);
    for (const c of conns) {
      const doc = await stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: 'one-drive', connectionId: c.connection_id });
      const credentials = stack.core.cipher.open<any>(doc!.credentials_encrypted, sealedAt.connectionCredentials(doc!));
      expect(all).not.toContain(credentials.access_token);
      if (credentials.refresh_token) expect(all).not.toContain(credentials.refresh_token);
      // Stored sealed: the raw document does not contain the token either.
      expect(JSON.stringify(doc)).not.toContain(credentials.access_token);
    }
    expect(all).not.toContain(MS_IDENTITY_DEFAULT_CLIENT_SECRET);
  });
});
