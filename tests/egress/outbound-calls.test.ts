import { generateKeyPairSync } from 'node:crypto';
import { oauthEndpoints, refreshGrant } from '../../auth/oauth/code-flow';
import { obtainExtraTokens } from '../../auth/oauth/extra-tokens';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { queueAuthWebhook } from '../../webhooks/auth-webhook';
import { stackOutboxDeps } from '../support/scripted-receiver';
import { waitFor } from '../support/wait';
import { startWeftStack, type WeftStack } from '../support/weft-stack';
import { startRecordingServer, type RecordingServer } from './recording-server';

/**
 * Weft's own outbound calls (provider API, token endpoint, team-site lookup, webhooks) under
 * the egress policy, through the real API on the test stack. Loopback servers stand in for
 * internal services: `forbidden` is not on the allow-list and must never see a connection.
 */
describe('outbound calls go through the egress policy', () => {
  let stack: WeftStack;
  let forbidden: RecordingServer;
  let redirector: RecordingServer;
  let followTarget: RecordingServer;
  let hanging: RecordingServer;

  /** Request log entries are written in the background (a call never waits on its log line): wait for them to land. */
  async function loggedFor(integration: string, timeoutMs = 5_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { entries } = await stack.core.stores.requestLogs.range({ environment: 'dev', integration, limit: 100 });
      if (entries.length > 0 || Date.now() > deadline) return entries;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  const HEADERS_TIMEOUT_MS = 500;

  beforeAll(async () => {
    forbidden = await startRecordingServer();
    followTarget = await startRecordingServer();
    redirector = await startRecordingServer((req, res) => {
      const to = req.url?.startsWith('/meta/') ? 'http://169.254.169.254/latest/meta-data' : `${followTarget.url}/stolen`;
      res.writeHead(302, { location: to }).end();
    });
    hanging = await startRecordingServer(() => undefined);
    // Even the redirect target is allowed: what keeps it from being called is that redirects are not followed.
    // It is also the webhook receiver that registration accepts.
    stack = await startWeftStack({
      worker: false,
      egressAllow: { providers: [redirector.url, followTarget.url, hanging.url], webhooks: [followTarget.url] },
      egressTimeouts: { headersTimeoutMs: HEADERS_TIMEOUT_MS },
    });
  });

  afterAll(async () => {
    await stack?.shutdown();
    for (const s of [forbidden, redirector, followTarget, hanging]) await s?.close();
  });

  const createLuma = async (uniqueKey: string, baseUrl: string) => {
    const res = await stack.api('POST', '/integrations', { body: { unique_key: uniqueKey, provider: 'luma', provider_overrides: { base_url: baseUrl } } });
    expect(res.status).toBe(201);
  };
  const connectLuma = (uniqueKey: string, connectionId: string) =>
    stack.api('POST', '/connections', {
      body: { provider_config_key: uniqueKey, connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
    });
  const storedConnection = (uniqueKey: string, connectionId: string) =>
    stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: uniqueKey, connectionId });

  test('a provider base_url whose name resolves to 127.0.0.1 is refused when called; nothing connects; the request log shows it', async () => {
    // https: over plain http the key would not be sent at all (credentials_over_http_refused), before any lookup.
    await createLuma('luma-localhost', `https://localhost:${forbidden.port}`);
    const res = await connectLuma('luma-localhost', 'user-localhost');
    expect(res.status).toBe(424);
    expect(res.body.error.code).toBe('egress_refused');
    expect(res.body.error.message).toMatch(new RegExp(`localhost \\((127\\.0\\.0\\.1|::1)\\) port ${forbidden.port} refused by the "loopback" rule`));
    expect(res.body.error.message).toContain('WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(res.body.error.egress).toMatchObject({ host: 'localhost', port: forbidden.port, rule: 'loopback' });
    expect(JSON.stringify(res.body)).not.toContain(LUMA_DEFAULT_API_KEY);
    expect(forbidden.connections).toBe(0);
    expect(await storedConnection('luma-localhost', 'user-localhost')).toBeNull();

    const logs = await loggedFor('luma-localhost');
    const entry = logs.find((l) => l.integration === 'luma-localhost');
    expect(entry).toMatchObject({ operation: 'auth', method: 'GET', status: null });
    expect(entry?.error).toMatch(/refused by the "loopback" rule/);
    // Refused once, not retried: the policy would refuse every attempt.
    expect(logs.filter((l) => l.integration === 'luma-localhost')).toHaveLength(1);
  });

  test('a provider that redirects to the cloud metadata service: the call fails naming the redirect, nothing is followed', async () => {
    await createLuma('luma-to-metadata', `${redirector.url}/meta`);
    const res = await connectLuma('luma-to-metadata', 'user-meta');
    expect(res.status).toBe(424);
    expect(res.body.error.message).toContain('answered HTTP 302, a redirect to http://169.254.169.254/latest/meta-data, which Weft does not follow');
    expect(await storedConnection('luma-to-metadata', 'user-meta')).toBeNull();
    expect(redirector.requests.at(-1)?.url).toBe('/meta/public/v1/user/get-self');
  });

  test('a redirect to another (even allowed) server is not followed either', async () => {
    await createLuma('luma-to-local', `${redirector.url}/local`);
    const res = await connectLuma('luma-to-local', 'user-local');
    expect(res.status).toBe(424);
    expect(res.body.error.message).toContain(`a redirect to ${followTarget.url}/stolen`);
    expect(followTarget.connections).toBe(0);
    expect(await storedConnection('luma-to-local', 'user-local')).toBeNull();
  });

  test('a provider that accepts but never answers: the API answers 424 within the configured timeout', async () => {
    await createLuma('luma-hangs', hanging.url);
    const started = Date.now();
    const res = await connectLuma('luma-hangs', 'user-hangs');
    const took = Date.now() - started;
    expect(res.status).toBe(424);
    expect(res.body.error.message).toContain('WEFT_EGRESS_HEADERS_TIMEOUT_MS');
    // Verification tries twice (one retry), each bounded by the headers timeout (undici checks it about once a second).
    expect(hanging.requests.length).toBe(2);
    expect(took).toBeLessThan(2 * (HEADERS_TIMEOUT_MS + 1_000) + 2_000);
    expect(await storedConnection('luma-hangs', 'user-hangs')).toBeNull();
  });

  test('registration refuses literal private, loopback, link-local and metadata addresses with 400 egress_refused, and changes nothing', async () => {
    const before = (await stack.api('GET', '/environment')).body.data;
    for (const body of [
      { webhook_url: 'http://10.0.0.5/hook' },
      { webhook_url: `http://127.0.0.1:${forbidden.port}/hook` },
      { webhook_url: 'http://0x7f.1/hook' },
      { secondary_webhook_url: 'http://[::ffff:169.254.169.254]/' },
      { alert_webhook_url: 'http://0.0.0.0:8080/' },
      { webhook_url: 'https://hooks.example.com/ok', alert_webhook_url: 'https://[fd00::1]/alerts' },
    ]) {
      const res = await stack.api('PATCH', '/environment', { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('egress_refused');
      expect(res.body.error.message).toMatch(/^(webhook_url|secondary_webhook_url|alert_webhook_url): egress to /);
    }
    expect((await stack.api('GET', '/environment')).body.data).toEqual(before);

    const integrations = [
      { unique_key: 'bad-base', provider: 'luma', provider_overrides: { base_url: 'http://169.254.169.254/latest' } },
      { unique_key: 'bad-auth', provider: 'one-drive', provider_overrides: { auth_base_url: 'http://[fe80::1]/' } },
      {
        unique_key: 'bad-link',
        provider: 'github',
        credentials: { type: 'APP', app_id: '1', app_link: 'http://192.168.0.1/apps/x', private_key: 'not checked before the URL' },
      },
    ];
    for (const body of integrations) {
      const res = await stack.api('POST', '/integrations', { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('egress_refused');
      expect((await stack.api('GET', `/integrations/${body.unique_key}`)).status).toBe(404);
    }
    await createLuma('luma-patched', hanging.url);
    const patched = await stack.api('PATCH', '/integrations/luma-patched', { body: { provider_overrides: { base_url: 'http://[::ffff:10.1.1.1]/' } } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.code).toBe('egress_refused');
    expect((await stack.api('GET', '/integrations/luma-patched')).body.data.provider_overrides.base_url).toBe(hanging.url);

    // An allowed host:port and a public name are accepted.
    expect(
      (
        await stack.api('PATCH', '/environment', {
          body: { secondary_webhook_url: `${followTarget.url}/hooks`, alert_webhook_url: 'https://hooks.example.com/alerts' },
        })
      ).status,
    ).toBe(200);
    expect((await stack.api('PATCH', '/environment', { body: { secondary_webhook_url: null, alert_webhook_url: null } })).status).toBe(200);
  });

  test('a webhook URL whose name resolves to loopback is refused at delivery, once per attempt, and recorded', async () => {
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: `http://localhost:${forbidden.port}/hook` } })).status).toBe(200);
    // The event goes the product's way: the outbox, then its webhookDelivery workflow on a worker.
    await stack.startWorker();
    try {
      const queued = await queueAuthWebhook(stackOutboxDeps(stack), {
        environment: 'dev',
        connection: { connection_id: 'c', provider_config_key: 'luma', provider: 'luma', auth_mode: 'API_KEY' },
        operation: 'creation',
        success: true,
      });
      const id = queued.id!;
      expect(id).toMatch(/^msg_/);
      // The first attempt is refused and recorded; the workflow retries on its schedule (the next one ~5 s later).
      await waitFor(async () => (await stack.core.stores.webhookOutbox.get(id))?.rounds === 1, 20_000, 'the first attempt');
      const attempts = await stack.core.stores.webhookDeliveries.listForEvent('dev', id);
      expect(attempts.map((a) => [a.attempt, a.target, a.status])).toEqual([[1, 'primary', null]]);
      expect(attempts[0].error).toMatch(/refused by the "loopback" rule/);
      expect(await stack.core.stores.webhookOutbox.get(id)).toMatchObject({ status: 'pending', last_error: expect.stringMatching(/loopback/) });
      expect(forbidden.connections).toBe(0);
    } finally {
      await stack.stopWorker();
      await stack.api('PATCH', '/environment', { body: { webhook_url: null } });
    }
  });

  test('the GitHub installation-token mint is called through egress', async () => {
    const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const created = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'github-local',
        provider: 'github',
        credentials: { type: 'APP', app_id: '4242', app_link: 'https://github.com/apps/weft-test', private_key: privateKey },
        provider_overrides: { base_url: `https://localhost:${forbidden.port}` },
      },
    });
    expect(created.status).toBe(201);
    const res = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'github-local', connection_id: 'gh-user', credentials: { type: 'APP', app_id: '4242', installation_id: '1001' } },
    });
    expect(res.status).toBe(424);
    expect(res.body.error.code).toBe('egress_refused');
    expect(forbidden.connections).toBe(0);
    const logged = await loggedFor('github-local');
    expect(logged.map((l) => [l.method, new URL(l.url).pathname, l.status])).toEqual([['POST', '/app/installations/1001/access_tokens', null]]);
  });

  /** A one-drive integration whose Graph and sign-in origins are `localhost` on the forbidden port. */
  const localOneDrive = async (uniqueKey: string) => {
    const created = await stack.api('POST', '/integrations', {
      body: {
        unique_key: uniqueKey,
        provider: 'one-drive',
        credentials: { type: 'OAUTH2', client_id: 'client', client_secret: 'secret-value' },
        provider_overrides: { base_url: `https://localhost:${forbidden.port}`, auth_base_url: `https://localhost:${forbidden.port}` },
      },
    });
    expect(created.status).toBe(201);
    const integration = (await stack.core.stores.integrations.get('dev', uniqueKey))!;
    const oauth = stack.core.registry.get('one-drive')!.provider.oauth!;
    return oauthEndpoints(oauth, integration, { type: 'OAUTH2', client_id: 'client', client_secret: 'secret-value' }, stack.egress.providers);
  };

  test('the OAuth token endpoint is called through egress', async () => {
    const ep = await localOneDrive('one-drive-token');
    await expect(refreshGrant(ep, 'a-refresh-token')).rejects.toMatchObject({
      code: 'egress_refused',
      message: expect.stringMatching(/refused by the "loopback" rule/),
    });
    expect(forbidden.connections).toBe(0);
  });

  test('the SharePoint team-site lookup (GET /v1.0/sites/root) is called through egress', async () => {
    const ep = await localOneDrive('one-drive-teamsite');
    const credentials = { type: 'OAUTH2' as const, access_token: 'an-access-token', refresh_token: 'a-refresh-token' };
    const scopes = { requested: ['Sites.Read.All'], granted: ['Sites.Read.All'] };
    await expect(obtainExtraTokens(ep, `https://localhost:${forbidden.port}`, credentials, scopes)).rejects.toMatchObject({
      code: 'egress_refused',
      message: expect.stringMatching(/refused by the "loopback" rule/),
    });
    expect(forbidden.connections).toBe(0);
    expect(forbidden.requests).toEqual([]);
  });
});
