import {
  createMicrosoftIdentitySimulator,
  MS_IDENTITY_DEFAULT_ADMIN_PASSWORD,
  MS_IDENTITY_DEFAULT_CLIENT_ID,
  MS_IDENTITY_DEFAULT_CLIENT_SECRET,
  type MicrosoftIdentitySimulator,
} from '../../sandbox/microsoft-identity';
import { Browser, type Page } from '../support/form-browser';
import { startWeftStack, type WeftStack, waitForLogs } from '../support/weft-stack';

const ADMIN = 'admin@contoso.onmicrosoft.com';
const SCOPES = ['offline_access', 'Files.Read.All', 'User.Read'];

/**
 * The proxy with an OAuth connection made by the real connect flow (simulated Microsoft
 * sign-in, Graph simulator): the bearer token is refreshed when it is due, and once when
 * Graph refuses it, as a sync's would be.
 */
describe('proxy with OAuth credentials', () => {
  let stack: WeftStack;
  let identity: MicrosoftIdentitySimulator;
  let connectionId = '';

  beforeAll(async () => {
    identity = createMicrosoftIdentitySimulator({});
    await identity.start();
    stack = await startWeftStack({
      graph: { seed: 4, drives: [{ fileCount: 5 }] },
      egressAllow: { providers: [identity.url as string] },
      worker: false,
      temporalCallTimeoutMs: 10_000,
    });
    identity.addRedirectUri(MS_IDENTITY_DEFAULT_CLIENT_ID, `${stack.apiUrl}/oauth/callback`);
    identity.onAccessToken((e) => void (e.resource === 'graph' && stack.graph.addAccessToken(e.token)));
    identity.onAccessTokenRevoked((e) => stack.graph.revokeAccessToken(e.token));
    const created = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'one-drive',
        provider: 'one-drive',
        credentials: { type: 'OAUTH2', client_id: MS_IDENTITY_DEFAULT_CLIENT_ID, client_secret: MS_IDENTITY_DEFAULT_CLIENT_SECRET, tenant: 'organizations' },
        provider_overrides: { base_url: stack.graph.url, auth_base_url: identity.url },
      },
    });
    expect(created.status).toBe(201);
    connectionId = await connect();
  });
  afterAll(async () => {
    await stack?.shutdown();
    await identity?.stop();
  });

  function submit(browser: Browser, page: Page, fields: Record<string, string>): Promise<Page> {
    const form = /<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(page.html);
    if (!form) throw new Error(`no form on ${page.url}:\n${page.html}`);
    const hidden = Object.fromEntries([...form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((h) => [h[1], h[2]]));
    return browser.request(new URL(form[1].replace(/&amp;/g, '&'), page.url).href, { ...hidden, ...fields });
  }

  /** Connect link → Microsoft sign-in → consent; the new connection's id. */
  async function connect(): Promise<string> {
    const session = await stack.api('POST', '/connect/sessions', {
      body: { allowed_integrations: ['one-drive'], integrations_config_defaults: { 'one-drive': { user_scopes: SCOPES } } },
    });
    expect(session.status).toBe(201);
    const browser = new Browser();
    let page = await browser.follow(
      await browser.request(`${stack.apiUrl}/oauth/connect/one-drive?connect_session_token=${session.body.data.token}`),
      identity.url as string,
    );
    for (let step = 0; step < 5 && !page.location?.startsWith(stack.apiUrl); step++) {
      if (page.html.includes('data-page="sign-in"')) page = await submit(browser, page, { loginfmt: ADMIN, passwd: MS_IDENTITY_DEFAULT_ADMIN_PASSWORD });
      else if (page.html.includes('data-page="consent"')) page = await submit(browser, page, { action: 'accept', consent_on_behalf: 'true' });
      else throw new Error(`unexpected page ${page.status} ${page.url}:\n${page.html}`);
      page = await browser.follow(page, identity.url as string);
    }
    const done = await browser.request(page.location!);
    expect(done.status).toBe(200);
    return /data-connection-id="([^"]+)"/.exec(done.html)![1];
  }

  const me = () =>
    fetch(`${stack.apiUrl}/proxy/v1.0/me`, {
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'connection-id': connectionId, 'provider-config-key': 'one-drive' },
    });
  const proxyLog = async (n: number) => (await waitForLogs(stack, `connection_id=${connectionId}&operation=proxy&limit=100`, n)).reverse();
  const refreshes = async (n: number) => waitForLogs(stack, `connection_id=${connectionId}&operation=auth%3Atoken&limit=100`, n);

  test('a token Graph refuses (401) is refreshed once and the call repeated; the app sees the 200', async () => {
    expect((await me()).status).toBe(200);
    const refreshesBefore = (await refreshes(1)).length;
    expect(identity.expireAccessTokens()).toBeGreaterThan(0);

    const res = await me();
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).id).toBeTruthy();
    expect((await proxyLog(3)).map((e) => [e.status, e.attempt])).toEqual([
      [200, 1],
      [401, 1],
      [200, 2],
    ]);
    expect((await refreshes(refreshesBefore + 1)).length).toBe(refreshesBefore + 1);
  });

  test('a token about to expire is refreshed before the call (no 401 first)', async () => {
    // Tokens issued from now on live 5 minutes: inside the 15-minute refresh margin.
    identity.setAccessTokenLifetime(300);
    expect(identity.expireAccessTokens()).toBeGreaterThan(0);
    expect((await me()).status).toBe(200); // 401, refresh, 200: the new token is the short-lived one
    const before = (await refreshes(1)).length;
    const logBefore = (await proxyLog(1)).length;

    expect((await me()).status).toBe(200);
    const log = await proxyLog(logBefore + 1);
    expect(log.slice(logBefore).map((e) => [e.status, e.attempt])).toEqual([[200, 1]]);
    expect((await refreshes(before + 1)).length).toBe(before + 1);
  });
});
