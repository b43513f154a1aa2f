import { oauthEndpoints, refreshGrant } from '../../auth/oauth/code-flow';
import { queueAuthWebhook } from '../../webhooks/auth-webhook';
import { stackOutboxDeps } from '../support/scripted-receiver';
import { waitFor } from '../support/wait';
import { startWeftStack, type WeftStack } from '../support/weft-stack';
import { startRecordingServer, type RecordingServer } from './recording-server';

const API_KEY = 'luma-key-for-the-internal-api-0123456789';

/**
 * The allow-lists by purpose through the real API: `hooks` is an internal webhook receiver
 * (allowed for webhooks only), `internalApi` an internal provider API (allowed for
 * providers only, by its exact host:port). Neither may be reached for the other purpose:
 * not as a provider base_url, auth_base_url or proxy target, not as a webhook URL.
 */
describe('egress allow-lists by purpose, through the API', () => {
  let stack: WeftStack;
  let hooks: RecordingServer;
  let internalApi: RecordingServer;

  beforeAll(async () => {
    hooks = await startRecordingServer();
    internalApi = await startRecordingServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user: { api_id: 'usr-internal' }, path: req.url }));
    });
    stack = await startWeftStack({ worker: false, egressAllow: { providers: [internalApi.url], webhooks: [hooks.url] } });
  });

  afterAll(async () => {
    await stack?.shutdown();
    for (const s of [hooks, internalApi]) await s?.close();
  });

  const createLuma = async (uniqueKey: string, baseUrl: string) => {
    const res = await stack.api('POST', '/integrations', { body: { unique_key: uniqueKey, provider: 'luma', provider_overrides: { base_url: baseUrl } } });
    expect(res.status).toBe(201);
  };
  const connectLuma = (uniqueKey: string, connectionId: string) =>
    stack.api('POST', '/connections', {
      body: { provider_config_key: uniqueKey, connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
  const proxyGet = (uniqueKey: string, connectionId: string, path: string) =>
    stack.api('GET', `/proxy${path}`, { headers: { 'connection-id': connectionId, 'provider-config-key': uniqueKey } });
  const keyRequests = (server: RecordingServer) => server.requests.filter((r) => JSON.stringify(r.headers).includes(API_KEY)).length;

  /** Sends an `auth` webhook the product's way (outbox, then its delivery workflow on the stack's worker). */
  async function sendAuthWebhook(): Promise<string> {
    const queued = await queueAuthWebhook(stackOutboxDeps(stack), {
      environment: 'dev',
      connection: { connection_id: 'c', provider_config_key: 'luma', provider: 'luma', auth_mode: 'API_KEY' },
      operation: 'creation',
      success: true,
    });
    return queued.id!;
  }

  test('a webhook-only address as provider base_url or auth_base_url: 400 egress_refused naming WEFT_EGRESS_ALLOW_PROVIDERS, nothing stored', async () => {
    for (const body of [
      { unique_key: 'to-hooks', provider: 'luma', provider_overrides: { base_url: `${hooks.url}/api` } },
      { unique_key: 'auth-to-hooks', provider: 'one-drive', provider_overrides: { auth_base_url: hooks.url } },
    ]) {
      const res = await stack.api('POST', '/integrations', { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('egress_refused');
      expect(res.body.error.message).toMatch(/^provider_overrides\.(base_url|auth_base_url): egress to 127\.0\.0\.1 port \d+ refused by the "loopback" rule/);
      expect(res.body.error.message).toContain(`add ${hooks.hostPort} (or a CIDR) to WEFT_EGRESS_ALLOW_PROVIDERS`);
      expect((await stack.api('GET', `/integrations/${body.unique_key}`)).status).toBe(404);
    }
    expect(hooks.connections).toBe(0);
  });

  test('a provider base_url that resolves to the webhook-only address is refused when called (credential check, token endpoint, proxy); a webhook is delivered there', async () => {
    const before = hooks.connections;
    await createLuma('luma-named-hooks', `https://localhost:${hooks.port}`);
    const verify = await connectLuma('luma-named-hooks', 'conn-named-hooks');
    expect(verify.status).toBe(424);
    expect(verify.body.error.code).toBe('egress_refused');
    expect(verify.body.error.message).toContain('WEFT_EGRESS_ALLOW_PROVIDERS');

    // An auth_base_url there: the token endpoint (which would receive the client secret) is refused too.
    const oneDrive = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'one-drive-named-hooks',
        provider: 'one-drive',
        credentials: { type: 'OAUTH2', client_id: 'client', client_secret: 'client-secret-value' },
        provider_overrides: { auth_base_url: `https://localhost:${hooks.port}` },
      },
    });
    expect(oneDrive.status).toBe(201);
    const integration = (await stack.core.stores.integrations.get('dev', 'one-drive-named-hooks'))!;
    const oauth = stack.core.registry.get('one-drive')!.provider.oauth!;
    const endpoints = oauthEndpoints(oauth, integration, { type: 'OAUTH2', client_id: 'client', client_secret: 'client-secret-value' }, stack.egress.providers);
    await expect(refreshGrant(endpoints, 'a-refresh-token')).rejects.toMatchObject({
      code: 'egress_refused',
      message: expect.stringContaining('WEFT_EGRESS_ALLOW_PROVIDERS'),
    });

    // A connection made while the base URL was the internal API, then the base URL moved to the receiver's address.
    await createLuma('luma-moved', internalApi.url);
    expect((await connectLuma('luma-moved', 'conn-moved')).status).toBe(201);
    expect((await proxyGet('luma-moved', 'conn-moved', '/public/v1/events')).status).toBe(200);
    const patched = await stack.api('PATCH', '/integrations/luma-moved', { body: { provider_overrides: { base_url: `https://localhost:${hooks.port}` } } });
    expect(patched.status).toBe(200);
    // The proxy reads integrations through a cache of a few seconds: wait for it to see the move.
    let proxied: { status: number; body: any } = { status: 0, body: null };
    await waitFor(
      async () => {
        proxied = await proxyGet('luma-moved', 'conn-moved', '/secrets');
        return proxied.body?.error?.code === 'egress_refused';
      },
      30_000,
      'the proxy to see the moved base URL',
    );
    expect(proxied.status).toBe(400);
    expect(proxied.body.error.message).toMatch(/^proxy target: egress to localhost \(127\.0\.0\.1\) port \d+ refused/);
    expect(proxied.body.error.message).toContain('WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(hooks.connections).toBe(before);

    // The same address is the environment's webhook receiver: registered and delivered to.
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: `${hooks.url}/weft` } })).status).toBe(200);
    await stack.startWorker();
    try {
      await sendAuthWebhook();
      await waitFor(async () => hooks.requests.some((r) => r.method === 'POST' && r.url === '/weft'), 60_000, 'the webhook at the receiver');
    } finally {
      await stack.stopWorker();
      await stack.api('PATCH', '/environment', { body: { webhook_url: null } });
    }
  });

  test('a provider-only address as a webhook URL: 400 naming WEFT_EGRESS_ALLOW_WEBHOOKS at registration, refused at delivery by name', async () => {
    const environment = await stack.api('PATCH', '/environment', { body: { webhook_url: `${internalApi.url}/hook` } });
    expect(environment.status).toBe(400);
    expect(environment.body.error.code).toBe('egress_refused');
    expect(environment.body.error.message).toMatch(/^webhook_url: egress to 127\.0\.0\.1/);
    expect(environment.body.error.message).toContain(`add ${internalApi.hostPort} (or a CIDR) to WEFT_EGRESS_ALLOW_WEBHOOKS`);

    await createLuma('luma-api', internalApi.url);
    expect((await connectLuma('luma-api', 'conn-api')).status).toBe(201);
    const override = await stack.api('PATCH', '/connections/conn-api?provider_config_key=luma-api', {
      body: { webhook_url_override: `${internalApi.url}/hook` },
    });
    expect(override.status).toBe(400);
    expect(override.body.error.message).toContain('WEFT_EGRESS_ALLOW_WEBHOOKS');

    // By name, the address is only known at delivery: refused there, the attempt recorded with the variable to change.
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: `http://localhost:${internalApi.port}/hook` } })).status).toBe(200);
    await stack.startWorker();
    try {
      const id = await sendAuthWebhook();
      await waitFor(async () => (await stack.core.stores.webhookOutbox.get(id))?.rounds === 1, 60_000, 'the first attempt');
      const [attempt] = await stack.core.stores.webhookDeliveries.listForEvent('dev', id);
      expect(attempt).toMatchObject({ attempt: 1, status: null });
      expect(attempt.error).toContain('WEFT_EGRESS_ALLOW_WEBHOOKS');
      expect(internalApi.requests.some((r) => r.url === '/hook')).toBe(false);
    } finally {
      await stack.stopWorker();
      await stack.api('PATCH', '/environment', { body: { webhook_url: null } });
    }
  });

  test('credentials over plain http only to the exact host:port named: the same server by another name gets nothing', async () => {
    // localhost is 127.0.0.1, which the internalApi entry allows to connect to, but the entry names 127.0.0.1:<port>.
    await createLuma('luma-plain', `http://localhost:${internalApi.port}`);
    const keyed = keyRequests(internalApi);
    const verify = await connectLuma('luma-plain', 'conn-plain');
    expect(verify.status).toBe(424);
    expect(verify.body.error.code).toBe('credentials_over_http_refused');
    expect(verify.body.error.message).toContain(`name exactly localhost:${internalApi.port} in WEFT_EGRESS_ALLOW_PROVIDERS`);
    expect(JSON.stringify(verify.body)).not.toContain(API_KEY);

    // The proxy: a connection made on the named host:port, then the base URL moved to the unnamed spelling.
    await createLuma('luma-plain-moved', internalApi.url);
    expect((await connectLuma('luma-plain-moved', 'conn-plain-moved')).status).toBe(201);
    const afterConnect = keyRequests(internalApi);
    expect(afterConnect).toBe(keyed + 1);
    const patched = await stack.api('PATCH', '/integrations/luma-plain-moved', {
      body: { provider_overrides: { base_url: `http://localhost:${internalApi.port}` } },
    });
    expect(patched.status).toBe(200);
    let proxied: { status: number; body: any } = { status: 0, body: null };
    await waitFor(
      async () => {
        proxied = await proxyGet('luma-plain-moved', 'conn-plain-moved', '/public/v1/events');
        return proxied.body?.error?.code === 'credentials_over_http_refused';
      },
      30_000,
      'the proxy to see the moved base URL',
    );
    expect(proxied.status).toBe(424);
    // Only the calls the cache let through (to the named host:port) carried the key.
    expect(internalApi.requests.filter((r) => r.headers.host === `localhost:${internalApi.port}`)).toEqual([]);
  });
});

describe('the deprecated WEFT_EGRESS_ALLOW', () => {
  test('a process started with it logs a warning naming its entries and the two variables to move them to', async () => {
    const stack = await startWeftStack({ worker: false, env: { WEFT_EGRESS_ALLOW: '10.9.9.0/24' } });
    try {
      const warning = stack.logs
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .find((l) => l.msg.startsWith('WEFT_EGRESS_ALLOW is deprecated'));
      expect(warning?.level).toBe(40);
      expect(warning?.msg).toContain('10.9.9.0/24');
      expect(warning?.msg).toContain('WEFT_EGRESS_ALLOW_WEBHOOKS');
      expect(warning?.msg).toContain('WEFT_EGRESS_ALLOW_PROVIDERS');
      // Still applied to both purposes meanwhile.
      expect(() => stack.egress.providers.checkUrl('http://10.9.9.5/', 'base_url')).not.toThrow();
      expect(() => stack.egress.webhooks.checkUrl('http://10.9.9.5/', 'webhook_url')).not.toThrow();
    } finally {
      await stack.shutdown();
    }
  });
});
