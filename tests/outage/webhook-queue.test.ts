import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DEFAULT_USER } from '../../sandbox/github';
import { newWebhookId } from '../../webhooks/deliver';
import { webhookDeliveryWorkflowId } from '../../webhooks/delivery-contracts';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { Browser } from '../support/form-browser';
import { waitUntil } from '../support/wait';

/**
 * Connecting never waits on the app's webhook endpoint: the `auth` event is stored in the
 * outbox, delivered by the stack's worker (its dispatcher's first attempt), retried by its
 * workflow when the app is down, and taken by a dispatcher when the process that had it died first.
 */

/** How long the slow app takes to answer a webhook. */
const SLOW_APP_MS = 6_000;
/** "Well under a second" for a request that stores a connection. */
const ANSWER_MS = 1_000;

interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** The app's webhook endpoint, in one of three moods: slow but fine, silent (never answers), or answering a status. */
async function startApp() {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  let mood: { kind: 'slow' } | { kind: 'silent' } | { kind: 'status'; status: number } = { kind: 'slow' };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const m = mood;
      if (m.kind === 'silent') {
        held.push(res);
        return;
      }
      const answer = () => {
        received.push({ at: Date.now(), headers: req.headers, raw, body: JSON.parse(raw) });
        res.writeHead(m.kind === 'status' ? m.status : 200).end();
      };
      if (m.kind === 'slow') setTimeout(answer, SLOW_APP_MS);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    /** Requests that came in while silent (counted, never answered). */
    held,
    setMood(next: typeof mood) {
      mood = next;
    },
    async waitFor(pred: (r: Received) => boolean, timeoutMs = 20_000): Promise<Received> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = received.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error(`no matching webhook within ${timeoutMs} ms (got ${received.map((r) => r.raw).join(' | ')})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// A new Luma connection also syncs, and its `sync` events come to the same app: each check
// below picks the connection's `auth` event.
describe('auth webhooks are queued, never waited on', () => {
  let stack: WeftStack;
  let app: Awaited<ReturnType<typeof startApp>>;
  let signingKey: string;

  beforeAll(async () => {
    app = await startApp();
    // The in-process worker runs the webhook dispatcher and the events' delivery workflows.
    stack = await startWeftStack({ egressAllow: { webhooks: [app.url] }, github: { seed: 5, pullsPerRepo: 1 }, temporalCallTimeoutMs: 1_500 });
    stack.github.configureAppUserAuthorization({ callbackUrls: [`${stack.apiUrl}/app-auth/connect`], requestOAuthOnInstall: true });
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: app.url } })).status).toBe(200);
    signingKey = (await stack.api('POST', '/environment/webhook-signing-key/rotate')).body.data.webhook_signing_key;
    await createLumaIntegration(stack);
    const github = stack.github;
    const res = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'github',
        provider: 'github',
        credentials: {
          type: 'APP',
          app_id: String(github.app.id),
          app_link: github.app.publicLink,
          private_key: github.appPrivateKeyPem,
          client_id: github.app.clientId,
          client_secret: github.app.clientSecret,
        },
        provider_overrides: { base_url: github.url, auth_base_url: github.url },
      },
    });
    expect(res.status).toBe(201);
    // One event through the whole path first, so the timed requests below do not share the
    // machine with the worker's start (its first workflow task loads the workflow bundle).
    app.setMood({ kind: 'status', status: 200 });
    const warmUp = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'warm-up', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(warmUp.status).toBe(201);
    await app.waitFor((r) => r.body.type === 'auth' && r.body.connectionId === 'warm-up', 60_000);
  });
  afterAll(async () => {
    await app?.close();
    await stack?.shutdown();
  });
  beforeEach(() => app.setMood({ kind: 'slow' }));

  async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
    const started = Date.now();
    const value = await fn();
    return { value, ms: Date.now() - started };
  }

  function verified(r: Received): unknown {
    return new Webhook(signingKey).verify(r.raw, {
      'webhook-id': String(r.headers['webhook-id']),
      'webhook-timestamp': String(r.headers['webhook-timestamp']),
      'webhook-signature': String(r.headers['webhook-signature']),
    });
  }

  async function connectSession(): Promise<string> {
    const res = await stack.api('POST', '/connect/sessions', { body: {} });
    expect(res.status).toBe(201);
    return res.body.data.token;
  }

  test('POST /connections answers at once; the auth webhook (creation) arrives later, signed', async () => {
    const { value: res, ms } = await timed(() =>
      stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: 'imported', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      }),
    );
    const answeredAt = Date.now();
    expect(res.status).toBe(201);
    expect(ms).toBeLessThan(ANSWER_MS);
    const hook = await app.waitFor((r) => r.body.type === 'auth' && r.body.connectionId === 'imported');
    expect(hook.at).toBeGreaterThan(answeredAt);
    expect(hook.body).toEqual({
      from: 'weft',
      type: 'auth',
      connectionId: 'imported',
      providerConfigKey: 'luma',
      provider: 'luma',
      authMode: 'API_KEY',
      environment: 'dev',
      operation: 'creation',
      success: true,
    });
    expect(verified(hook)).toEqual(hook.body);
    expect(String(hook.headers['webhook-id'])).toMatch(/^msg_/);
  });

  test('the API-key connect answers at once, for a refused key too; both webhooks arrive later', async () => {
    const token = await connectSession();
    const ok = await timed(() =>
      fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: 'sandbox-luma-api-key' }),
      }),
    );
    expect(ok.value.status).toBe(201);
    expect(ok.ms).toBeLessThan(ANSWER_MS);
    const { connection_id: connectionId } = ((await ok.value.json()) as { data: { connection_id: string } }).data;

    const refused = await timed(() =>
      fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: 'not-a-luma-key' }),
      }),
    );
    expect(refused.value.status).toBeGreaterThanOrEqual(400);
    expect(refused.ms).toBeLessThan(ANSWER_MS);

    const created = await app.waitFor((r) => r.body.type === 'auth' && r.body.connectionId === connectionId && r.body.success === true);
    expect(created.body).toMatchObject({ type: 'auth', operation: 'creation', providerConfigKey: 'luma' });
    const failed = await app.waitFor((r) => r.body.success === false && r.body.providerConfigKey === 'luma');
    expect(failed.body).toMatchObject({ type: 'auth', operation: 'creation', error: { type: expect.any(String) } });
    expect(verified(failed)).toEqual(failed.body);
  });

  test('the GitHub App install callback answers at once; the webhook arrives later', async () => {
    const browser = new Browser();
    const githubUrl = stack.github.url!;
    const start = await browser.request(`${stack.apiUrl}/oauth/connect/github?connect_session_token=${await connectSession()}`);
    expect(start.status).toBe(302);
    let page = await browser.follow(start, githubUrl);
    if (page.url.includes('/login?'))
      page = await browser.follow(await browser.submit(page, /^\/session$/, { login: DEFAULT_USER.login, password: DEFAULT_USER.password }), githubUrl);
    const installed = await browser.submit(page, /\/installations$/, { repository_selection: 'all', action: 'install' });
    expect(installed.location).toMatch(new RegExp(`^${stack.apiUrl}/app-auth/connect\\?`));

    const { value: done, ms } = await timed(() => browser.request(installed.location!));
    expect(done.status).toBe(200);
    expect(ms).toBeLessThan(ANSWER_MS);
    const connectionId = /data-connection-id="([^"]+)"/.exec(done.html)?.[1];
    expect(connectionId).toBeTruthy();
    const hook = await app.waitFor((r) => r.body.type === 'auth' && r.body.connectionId === connectionId);
    expect(hook.body).toMatchObject({ type: 'auth', providerConfigKey: 'github', authMode: 'APP', operation: 'creation', success: true });
    expect(verified(hook)).toEqual(hook.body);
  });

  test('an app that never answers holds nobody: the answer comes at once, the event waits in the outbox', async () => {
    app.setMood({ kind: 'silent' });
    const { value: res, ms } = await timed(() =>
      stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: 'while-silent', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      }),
    );
    expect(res.status).toBe(201);
    expect(ms).toBeLessThan(ANSWER_MS);
    // The first attempt (the worker's dispatcher's) is stuck on the silent app; the event is held by its claim.
    await waitUntil(async () => app.held.length > 0);
    const [queued] = await stack.core.stores.db.collection('webhook_outbox').find({ type: 'auth', 'payload.connectionId': 'while-silent' }).toArray();
    expect(queued).toMatchObject({ type: 'auth', environment: 'dev', rounds: 0 });
    expect(queued.lease_until.getTime()).toBeGreaterThan(Date.now());
    // The app comes to: the cut attempt fails, the next one (5 s later) gets through, with the same id.
    app.setMood({ kind: 'status', status: 200 });
    for (const held of app.held.splice(0)) held.destroy();
    const hook = await app.waitFor((r) => r.body.type === 'auth' && r.body.connectionId === 'while-silent');
    expect(hook.headers['webhook-id']).toBe(queued._id);
    await waitUntil(async () => (await stack.core.stores.webhookOutbox.get(String(queued._id)))?.status === 'delivered');
  });

  test('an app that is down gets the event from a later attempt, under the same webhook-id; one success recorded', async () => {
    app.setMood({ kind: 'status', status: 503 });
    const res = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'while-down', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(res.status).toBe(201);
    // The first attempt fails (one try, no quick retries) and the event goes to its workflow; the next attempt is about 5 s out.
    await waitUntil(
      async () =>
        (await stack.core.stores.db
          .collection('webhook_outbox')
          .countDocuments({ type: 'auth', 'payload.connectionId': 'while-down', rounds: 1, lease_until: { $gt: new Date(Date.now() + 60 * 60_000) } })) === 1,
    );
    const [queued] = await stack.core.stores.db.collection('webhook_outbox').find({ type: 'auth', 'payload.connectionId': 'while-down' }).toArray();
    const tries = app.received.filter((r) => r.body.type === 'auth' && r.body.connectionId === 'while-down');
    expect(tries).toHaveLength(1);
    expect(tries[0].headers['webhook-id']).toBe(queued._id);
    expect(queued.last_error).toContain('HTTP 503');
    expect(queued.status).toBe('pending');
    // Held by its workflow, not due for a dispatcher.
    expect(queued.lease_until.getTime()).toBeGreaterThan(Date.now() + 60 * 60_000);

    app.setMood({ kind: 'status', status: 200 });
    await waitUntil(async () => (await stack.core.stores.webhookOutbox.get(String(queued._id)))?.status === 'delivered');
    const delivered = app.received.filter((r) => r.body.type === 'auth' && r.body.connectionId === 'while-down');
    expect(delivered).toHaveLength(2);
    expect(delivered[1].headers['webhook-id']).toBe(queued._id);
    expect(verified(delivered[1])).toEqual(delivered[1].body);
    const attempts = await stack.core.stores.webhookDeliveries.listForEvent('dev', String(queued._id));
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 503],
      [2, 200],
    ]);
  });

  test('an event left behind (stored by a process that died, or claimed by a dispatcher that died) is delivered by a dispatcher, once', async () => {
    app.setMood({ kind: 'status', status: 200 });
    // What a dispatcher that died during the first attempt leaves: the event, its claim run out.
    const id = newWebhookId();
    const payload = {
      from: 'weft',
      type: 'auth',
      connectionId: 'orphan',
      providerConfigKey: 'luma',
      provider: 'luma',
      authMode: 'API_KEY',
      environment: 'dev',
      operation: 'creation',
      success: true,
    };
    const past = new Date(Date.now() - 5 * 60_000);
    await stack.core.stores.webhookOutbox.add({
      _id: id,
      environment: 'dev',
      type: 'auth',
      payload,
      gate: 'send_auth_webhooks',
      created_at: past,
      next_attempt_at: past,
      lease_until: past,
    });
    const hook = await app.waitFor((r) => r.body.type === 'auth' && r.body.connectionId === 'orphan', 30_000);
    expect(hook.headers['webhook-id']).toBe(id);
    expect(hook.body).toEqual(payload);
    await waitUntil(async () => (await stack.core.stores.webhookOutbox.get(id))?.status === 'delivered');
    // Delivered by its first attempt: no workflow was needed.
    await expect(stack.core.temporal.workflow.getHandle(webhookDeliveryWorkflowId(stack.temporalIdPrefix, id)).describe()).rejects.toThrow();
    // Later passes (every 250 ms) find nothing: delivered once.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(app.received.filter((r) => r.body.type === 'auth' && r.body.connectionId === 'orphan')).toHaveLength(1);
  });

  test('an event the app refuses (4xx) is retried like any other non-2xx, and delivered once taken', async () => {
    app.setMood({ kind: 'status', status: 410 });
    const res = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'refused', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(res.status).toBe(201);
    await app.waitFor((r) => r.body.type === 'auth' && r.body.connectionId === 'refused');
    await waitUntil(
      async () =>
        (await stack.core.stores.db
          .collection('webhook_outbox')
          .countDocuments({ type: 'auth', 'payload.connectionId': 'refused', rounds: 1, status: 'pending' })) === 1,
    );
    app.setMood({ kind: 'status', status: 200 });
    await waitUntil(
      async () =>
        (await stack.core.stores.db.collection('webhook_outbox').countDocuments({ type: 'auth', 'payload.connectionId': 'refused', status: 'delivered' })) ===
        1,
    );
    const tries = app.received.filter((r) => r.body.type === 'auth' && r.body.connectionId === 'refused');
    expect(tries).toHaveLength(2);
    expect(tries[0].headers['webhook-id']).toBe(tries[1].headers['webhook-id']);
  });
});
