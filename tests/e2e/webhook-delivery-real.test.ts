import { Webhook } from 'standardwebhooks';
import { queueAuthWebhook } from '../../webhooks/auth-webhook';
import type { OutboxDeps } from '../../webhooks/outbox';
import { startScriptedReceiver, stackOutboxDeps, signatureHeaders, verifies, type ScriptedReceiver } from '../support/scripted-receiver';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitFor } from '../support/wait';
import type { paths } from '../../cli/api-client/weft-api';

/**
 * Webhook delivery on real servers (Temporal dev server, FerretDB, the stack's worker): events
 * made by the API, stored in the outbox, delivered by their webhookDelivery workflows to a
 * receiver on 127.0.0.1 that checks signatures with the Standard Webhooks library.
 */

const LUMA_KEY = 'sandbox-luma-api-key';
/** Something a receiver might echo back in its answer; must never be recorded. */
const RECEIVER_TOKEN = 'tok_live_receiver_8c1f2e';

describe('webhook delivery on real servers', () => {
  let stack: WeftStack;
  let app: ScriptedReceiver;
  let override: ScriptedReceiver;
  let outbox: OutboxDeps;
  let secret: string;

  beforeAll(async () => {
    app = await startScriptedReceiver();
    override = await startScriptedReceiver();
    stack = await startWeftStack({ egressAllow: { webhooks: [app.url, override.url] }, temporalCallTimeoutMs: 10_000 });
    outbox = stackOutboxDeps(stack);
    expect((await patchEnvironment({ webhook_url: `${app.url}/hooks` })).response.status).toBe(200);
    const rotated = await stack.client.POST('/environment/webhook-signing-key/rotate');
    expect(rotated.response.status).toBe(200);
    secret = rotated.data!.data.webhook_signing_key;
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    await stack?.shutdown();
    await app?.close();
    await override?.close();
  });
  beforeEach(() => {
    app.clearAnswers();
    app.setAnswerBody(null);
  });

  /** Creates a Luma connection through the API (which sends its `auth` creation event); that event's id. */
  async function connect(connectionId: string): Promise<string | null> {
    const res = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: LUMA_KEY } },
    });
    expect(res.response.status).toBe(201);
    const event = await stack.core.stores.db.collection('webhook_outbox').findOne({ type: 'auth', 'payload.connectionId': connectionId });
    return event ? String(event._id) : null;
  }
  async function settled(id: string, status: 'delivered' | 'failed' = 'delivered'): Promise<void> {
    await waitFor(async () => (await stack.core.stores.webhookOutbox.get(id))?.status === status, 30_000, `event ${id} ${status}`);
  }
  /** The `auth` event of a connection (a new Luma connection also syncs, and its `sync` events come to the same URL). */
  const isAuthOf = (connectionId: string) => (r: { body: any }) => r.body.type === 'auth' && r.body.connectionId === connectionId;
  const attemptsOf = (id: string) => stack.core.stores.webhookDeliveries.listForEvent('dev', id);
  const patchEnvironment = (body: paths['/environment']['patch']['requestBody']['content']['application/json']) => stack.client.PATCH('/environment', { body });

  test('the signature verifies with the standardwebhooks library and the secret of the rotate call', async () => {
    const id = (await connect('signed'))!;
    const r = await app.waitFor((w) => w.headers['webhook-id'] === id);
    // What an app's handler does: the raw body and the three headers.
    expect(new Webhook(secret).verify(r.raw, signatureHeaders(r))).toEqual(r.body);
    expect(r.body).toMatchObject({ from: 'weft', type: 'auth', connectionId: 'signed', operation: 'creation', success: true });
    // A changed body, another id or a stale timestamp are refused.
    expect(verifies(secret, { ...r, raw: r.raw.replace('"success":true', '"success":false') })).toBe(false);
    expect(verifies(secret, { ...r, headers: { ...r.headers, 'webhook-id': 'msg_other' } })).toBe(false);
    expect(verifies(secret, { ...r, headers: { ...r.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3_600) } })).toBe(false);
  });

  test('a receiver answering 500 then 200: one success recorded, the same webhook-id, each try signed afresh, its answers redacted', async () => {
    app.answerNext(isAuthOf('five-hundred'), 500);
    // A receiver answering with what it should not: a token of its own, the signature, the secret.
    app.setAnswerBody((r) => {
      const signature = String(r.headers['webhook-signature']);
      return JSON.stringify({
        ok: true,
        token: RECEIVER_TOKEN,
        echo: signature,
        bare: signature.split(' ')[0].slice('v1,'.length),
        key: secret,
        nango: r.headers['x-nango-hmac-sha256'],
      });
    });
    const id = (await connect('five-hundred'))!;
    await settled(id);

    const tries = app.withId(id);
    expect(tries.map((t) => t.status)).toEqual([500, 200]);
    for (const t of tries) expect(verifies(secret, t)).toBe(true);
    // The schedule's second step is 5 s (plus jitter), and its timestamp (so its signature) is new.
    expect(tries[1].at - tries[0].at).toBeGreaterThanOrEqual(4_500);
    expect(Number(tries[1].headers['webhook-timestamp'])).toBeGreaterThan(Number(tries[0].headers['webhook-timestamp']));

    const attempts = await attemptsOf(id);
    expect(attempts.map((a) => [a.attempt, a.status, a.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 200, null],
    ]);
    expect(attempts.filter((a) => a.status !== null && a.status >= 200 && a.status < 300)).toHaveLength(1);
    expect(attempts.every((a) => a.type === 'auth' && a.environment === 'dev' && a.target === 'primary' && a.url === `${app.url}/hooks`)).toBe(true);
    expect(await stack.core.stores.webhookOutbox.get(id)).toMatchObject({ status: 'delivered', rounds: 1 });
    // What the receiver answered is recorded for operators, without what it echoed.
    for (const [i, a] of attempts.entries()) {
      expect(a.response_excerpt).toContain('"ok":true');
      for (const leaked of [
        RECEIVER_TOKEN,
        secret.slice('whsec_'.length),
        ...String(tries[i].headers['webhook-signature']).split(' '),
        String(tries[i].headers['x-nango-hmac-sha256']),
      ])
        expect(a.response_excerpt).not.toContain(leaked);
    }
  });

  test("a connection's webhook_url_override wins over the environment URLs", async () => {
    await patchEnvironment({ secondary_webhook_url: `${app.url}/secondary` });
    try {
      const created = (await connect('overridden'))!;
      await settled(created);
      const patched = await stack.client.PATCH('/connections/{connectionId}', {
        params: { path: { connectionId: 'overridden' }, query: { provider_config_key: 'luma' } },
        body: { webhook_url_override: `${override.url}/mine` },
      });
      expect(patched.response.status).toBe(200);

      // The connection's next event (a refused refresh, as auth/ reports it) goes to its override only.
      const connection = await stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'overridden' });
      const queued = await queueAuthWebhook(outbox, {
        environment: 'dev',
        connection: connection!,
        operation: 'refresh',
        success: false,
        error: { type: 'refresh_token_external_error', description: 'The provider rejected the refresh token.' },
      });
      const id = queued.id!;
      await settled(id);
      const [r, ...more] = override.withId(id);
      expect(more).toHaveLength(0);
      expect(r.path).toBe('/mine');
      expect(verifies(secret, r)).toBe(true);
      expect(r.body).toMatchObject({ connectionId: 'overridden', operation: 'refresh', success: false });
      expect(app.withId(id)).toHaveLength(0);
      expect((await attemptsOf(id)).map((a) => [a.target, a.url, a.status])).toEqual([['override', `${override.url}/mine`, 200]]);
      // The creation before the override went to both environment URLs.
      expect(
        app
          .withId(created)
          .map((w) => w.path)
          .sort(),
      ).toEqual(['/hooks', '/secondary']);
    } finally {
      await patchEnvironment({ secondary_webhook_url: null });
    }
  });

  test('send_auth_webhooks is honoured: off, nothing is queued or sent; turned off while an event waits, its retry is not sent', async () => {
    expect((await patchEnvironment({ send_auth_webhooks: false })).response.status).toBe(200);
    expect(await connect('while-off')).toBeNull();
    expect(await stack.core.stores.db.collection('webhook_outbox').countDocuments({ type: 'auth', 'payload.connectionId': 'while-off' })).toBe(0);

    // On again: an event whose first try fails waits for its next attempt; turned off meanwhile, it stops there.
    expect((await patchEnvironment({ send_auth_webhooks: true })).response.status).toBe(200);
    app.answerNext(isAuthOf('turned-off-later'), 503);
    const id = (await connect('turned-off-later'))!;
    await waitFor(async () => (await stack.core.stores.webhookOutbox.get(id))?.rounds === 1, 20_000, 'the first attempt');
    expect((await patchEnvironment({ send_auth_webhooks: false })).response.status).toBe(200);
    try {
      await settled(id, 'failed');
      expect((await stack.core.stores.webhookOutbox.get(id))?.last_error).toBe('not sent: disabled');
      expect(app.withId(id).map((w) => w.status)).toEqual([503]);
      // (Its sync's own `sync` events are another kind, not gated by send_auth_webhooks.)
      expect(app.received.filter(isAuthOf('while-off'))).toHaveLength(0);
    } finally {
      await patchEnvironment({ send_auth_webhooks: true });
    }
  });

  test('no secret in any event, attempt record, listed event or log line', async () => {
    const secrets = [secret.slice('whsec_'.length), stack.keys.dev, stack.keys.prod, LUMA_KEY, RECEIVER_TOKEN];
    const stored = JSON.stringify({
      events: await stack.core.stores.db.collection('webhook_outbox').find({}).toArray(),
      attempts: await stack.core.stores.db.collection('webhook_deliveries').find({}).toArray(),
      listed: (await stack.client.GET('/webhooks/events')).data,
    });
    const sent = app.received.map((r) => r.raw).join('\n') + override.received.map((r) => r.raw).join('\n');
    const logs = stack.logs.join('\n');
    expect(logs).toContain('webhook delivered');
    // Signatures are per try (Nango's HMAC per body); none of them reach a log line or a record either.
    const signatures = [...app.received, ...override.received].flatMap((r) => [
      ...String(r.headers['webhook-signature']).split(' '),
      String(r.headers['x-nango-hmac-sha256']),
    ]);
    for (const s of [...secrets, ...signatures]) {
      expect(stored).not.toContain(s);
      expect(sent).not.toContain(s);
      expect(logs).not.toContain(s);
    }
  });
});
