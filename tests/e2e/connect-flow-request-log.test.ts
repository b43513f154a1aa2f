import {
  createMicrosoftIdentitySimulator,
  MS_IDENTITY_DEFAULT_ADMIN_PASSWORD,
  MS_IDENTITY_DEFAULT_CLIENT_ID,
  MS_IDENTITY_DEFAULT_CLIENT_SECRET,
  type MicrosoftIdentitySimulator,
} from '../../sandbox/microsoft-identity';
import { Browser, type Page } from '../support/form-browser';
import { runSync, startWeftStack, type WeftStack, waitForLogs } from '../support/weft-stack';

const ADMIN = 'admin@contoso.onmicrosoft.com';
const SCOPES = ['offline_access', 'Files.Read.All', 'User.Read', 'Sites.Read.All'];

/**
 * The calls a connect flow makes on the server side (the token endpoint, the team-site
 * lookup) are in `GET /logs` like a sync's: OneDrive's OAuth flow against the simulated
 * Microsoft sign-in (walked by hand, no Chromium) and the Graph simulator.
 */
describe('connect-flow calls in the request log', () => {
  let stack: WeftStack;
  let identity: MicrosoftIdentitySimulator;

  beforeAll(async () => {
    identity = createMicrosoftIdentitySimulator({});
    await identity.start();
    stack = await startWeftStack({ graph: { seed: 4, drives: [{ fileCount: 5 }] }, egressAllow: { providers: [identity.url as string] } });
    identity.addRedirectUri(MS_IDENTITY_DEFAULT_CLIENT_ID, `${stack.apiUrl}/oauth/callback`);
    identity.onAccessToken((e) => void (e.resource === 'graph' && stack.graph.addAccessToken(e.token)));
    identity.onAccessTokenRevoked((e) => stack.graph.revokeAccessToken(e.token));
    const root = (await (await fetch(`${stack.graph.url}/v1.0/sites/root`, { headers: { authorization: 'Bearer sandbox-graph-token' } })).json()) as any;
    identity.setSharePointHost(root.siteCollection.hostname);
    const created = await stack.client.POST('/integrations', {
      body: {
        unique_key: 'one-drive',
        provider: 'one-drive',
        credentials: { type: 'OAUTH2', client_id: MS_IDENTITY_DEFAULT_CLIENT_ID, client_secret: MS_IDENTITY_DEFAULT_CLIENT_SECRET, tenant: 'organizations' },
        // (both simulators are started: their URLs are set)
        provider_overrides: { base_url: stack.graph.url!, auth_base_url: identity.url! },
      },
    });
    expect(created.response.status).toBe(201);
  });
  afterAll(async () => {
    await stack?.shutdown();
    await identity?.stop();
  });

  /** Submits the page's one form with its hidden fields plus `fields`. */
  function submit(browser: Browser, page: Page, fields: Record<string, string>): Promise<Page> {
    const form = /<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(page.html);
    if (!form) throw new Error(`no form on ${page.url}:\n${page.html}`);
    const hidden = Object.fromEntries([...form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((h) => [h[1], h[2]]));
    return browser.request(new URL(form[1].replace(/&amp;/g, '&'), page.url).href, { ...hidden, ...fields });
  }

  /** Connect link → Microsoft sign-in → consent for the organization; returns Weft's answer to the callback. */
  async function connect(): Promise<{ page: Page; callback: URL }> {
    const session = await stack.client.POST('/connect/sessions', {
      body: { allowed_integrations: ['one-drive'], integrations_config_defaults: { 'one-drive': { user_scopes: SCOPES } } },
    });
    expect(session.response.status).toBe(201);
    const browser = new Browser();
    let page = await browser.follow(
      await browser.request(`${stack.apiUrl}/oauth/connect/one-drive?connect_session_token=${session.data!.data.token}`),
      identity.url as string,
    );
    for (let step = 0; step < 5 && !page.location?.startsWith(stack.apiUrl); step++) {
      if (page.html.includes('data-page="sign-in"')) page = await submit(browser, page, { loginfmt: ADMIN, passwd: MS_IDENTITY_DEFAULT_ADMIN_PASSWORD });
      else if (page.html.includes('data-page="consent"')) page = await submit(browser, page, { action: 'accept', consent_on_behalf: 'true' });
      else throw new Error(`unexpected page ${page.status} ${page.url}:\n${page.html}`);
      page = await browser.follow(page, identity.url as string);
    }
    const callback = new URL(page.location!);
    expect(callback.pathname).toBe('/oauth/callback');
    return { page: await browser.request(callback.href), callback };
  }

  const logsOf = (query: string, n: number) => waitForLogs(stack, query, n);

  let connected = '';

  const tokenCalls = () => identity.requestLog().filter((e) => e.path.endsWith('/oauth2/v2.0/token'));
  const siteLookups = () => stack.graph.requestLog().filter((e) => e.path === '/v1.0/sites/root');

  test('the code exchange, the team-site lookup and the team-site token grant are entries of the new connection', async () => {
    identity.resetStats();
    const lookupsBefore = siteLookups().length;
    const { page, callback } = await connect();
    expect(page.status).toBe(200);
    const connectionId = /data-connection-id="([^"]+)"/.exec(page.html)![1];

    // What the simulators received: two token requests (the code, then the team-site grant) and one lookup.
    expect(tokenCalls().map((e) => e.status)).toEqual([200, 200]);
    expect(siteLookups().length - lookupsBefore).toBe(1);

    const tokens = await logsOf(`operation=auth%3Atoken&connection_id=${connectionId}`, 2);
    expect(tokens).toHaveLength(2);
    for (const e of tokens) {
      expect(e).toMatchObject({ integration: 'one-drive', connection_id: connectionId, method: 'POST', status: 200, attempt: 1, error: null, run_id: null });
      expect(e.url).toBe(`${identity.url}/organizations/oauth2/v2.0/token`);
      expect(e.duration_ms).toEqual(expect.any(Number));
    }
    const lookups = await logsOf(`operation=auth%3Aresource-host&connection_id=${connectionId}`, 1);
    expect(lookups).toEqual([expect.objectContaining({ method: 'GET', url: `${stack.graph.url}/v1.0/sites/root`, status: 200, connection_id: connectionId })]);
    // The verification with the new token follows them (then the first sync run's calls).
    const all = await logsOf(`connection_id=${connectionId}&limit=1000`, 4);
    const authCalls = all.filter((e) => e.operation.startsWith('auth'));
    expect(authCalls.map((e) => e.operation).reverse()).toEqual(['auth:token', 'auth:resource-host', 'auth:token', 'auth']);
    connected = connectionId;

    const conn = await stack.client.GET('/connections/{connectionId}', {
      params: { path: { connectionId }, query: { provider_config_key: 'one-drive', refresh_token: 'true' } },
    });
    const { credentials, connection_config } = conn.data!;
    if (credentials.type !== 'OAUTH2') throw new Error(`an OAuth connection's credentials, got ${credentials.type}`);
    const secrets = [
      MS_IDENTITY_DEFAULT_CLIENT_SECRET,
      callback.searchParams.get('code')!,
      credentials.access_token,
      credentials.refresh_token,
      connection_config.teamsiteAccessToken,
    ];
    expect(secrets.every((s) => typeof s === 'string' && s.length > 8)).toBe(true);
    const text = JSON.stringify([all, await stack.core.stores.db.collection('request_logs').find({}).toArray()]);
    for (const s of secrets) expect(text).not.toContain(s);
    expect(text).not.toMatch(/authorization|bearer/i);
  });

  test('a refresh a sync run needed is an entry of that run', async () => {
    expect(connected).not.toBe('');
    await stack.waitForSync(connected, 'user-files', { providerConfigKey: 'one-drive' });
    identity.resetStats();
    expect(identity.expireAccessTokens()).toBeGreaterThan(0);
    await runSync(stack, 'one-drive', connected, 'user-files');

    // The main token and the team-site token are refreshed together.
    expect(tokenCalls().map((e) => e.status)).toEqual([200, 200]);
    const refreshes = await logsOf(`operation=auth%3Atoken&connection_id=${connected}&limit=100`, 4);
    const inRuns = refreshes.filter((e) => e.run_id !== null);
    expect(inRuns).toHaveLength(2);
    const runCalls = (await logsOf(`operation=sync%3Auser-files&connection_id=${connected}&limit=1000`, 1)).filter((e) => e.run_id === inRuns[0].run_id);
    expect(inRuns[1].run_id).toBe(inRuns[0].run_id);
    // The call the provider refused with the old token, then the same call after the refresh.
    expect(runCalls.map((e) => e.status)).toContain(401);
    expect(runCalls[0].status).toBe(200);
    expect(JSON.stringify(refreshes)).not.toContain(MS_IDENTITY_DEFAULT_CLIENT_SECRET);
  });

  test('a refresh asked of the API (force_refresh) is logged for the connection', async () => {
    identity.resetStats();
    const before = new Date().toISOString();
    const res = await stack.client.GET('/connections/{connectionId}', {
      params: { path: { connectionId: connected }, query: { provider_config_key: 'one-drive', force_refresh: 'true', refresh_token: 'true' } },
    });
    expect(res.response.status).toBe(200);
    expect(tokenCalls().map((e) => e.status)).toEqual([200, 200]);
    const entries = await logsOf(`connection_id=${connected}&from=${before}`, 2);
    expect(entries.map((e) => [e.operation, e.method, e.status, e.run_id])).toEqual([
      ['auth:token', 'POST', 200, null],
      ['auth:token', 'POST', 200, null],
    ]);
    const text = JSON.stringify(entries);
    const { credentials } = res.data!;
    if (credentials.type !== 'OAUTH2') throw new Error(`an OAuth connection's credentials, got ${credentials.type}`);
    for (const s of [credentials.access_token, credentials.refresh_token, MS_IDENTITY_DEFAULT_CLIENT_SECRET]) expect(text).not.toContain(s);
  });

  test('a token endpoint that fails leaves its entry: status, error, and no connection', async () => {
    identity.resetStats();
    identity.failNext(1, 503);
    const before = new Date().toISOString();
    const { page } = await connect();
    expect(page.status).toBeGreaterThanOrEqual(400);
    expect(tokenCalls().map((e) => e.status)).toEqual([503]);

    const failed = await logsOf(`operation=auth%3Atoken&status=5xx&from=${before}`, 1);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ integration: 'one-drive', method: 'POST', status: 503, error: expect.any(String) });
    expect(JSON.stringify(failed)).not.toContain(MS_IDENTITY_DEFAULT_CLIENT_SECRET);
  });
});
