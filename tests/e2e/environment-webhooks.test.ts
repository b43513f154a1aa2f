import { sealedAt } from '../../auth/credential-cipher';
import { queueAuthWebhook, type AuthWebhookInput } from '../../webhooks/auth-webhook';
import type { OutboxDeps } from '../../webhooks/outbox';
import { startScriptedReceiver, stackOutboxDeps, verifies, signatureHeaders, type ScriptedReceiver } from '../support/scripted-receiver';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitFor } from '../support/wait';
import { Webhook } from 'standardwebhooks';
import type { paths } from '../../cli/api-client/weft-api';

/**
 * The environment's webhook settings and what they do to delivered events: every event goes
 * through the product's durable path (queued in the outbox, delivered by its webhookDelivery
 * workflow on the stack's worker), signed per Standard Webhooks.
 */

const connection = { connection_id: 'user-1', provider_config_key: 'luma', provider: 'luma', auth_mode: 'API_KEY' as const };

describe('environment settings and signed webhooks', () => {
  let stack: WeftStack;
  let receiver: ScriptedReceiver;
  // Closed by the "unreachable URL" test; started first so the egress allow-list can name its port.
  let closed: ScriptedReceiver;
  let outbox: OutboxDeps;
  const keys: string[] = [];

  beforeAll(async () => {
    receiver = await startScriptedReceiver();
    closed = await startScriptedReceiver();
    stack = await startWeftStack({ egressAllow: { webhooks: [receiver.url, closed.url] }, temporalCallTimeoutMs: 10_000 });
    outbox = stackOutboxDeps(stack);
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    await stack?.shutdown();
    await receiver?.close();
    await closed?.close();
  });

  /** Queues an `auth` event as the product does; its webhook-id. */
  async function queue(input: Partial<AuthWebhookInput> = {}): Promise<string> {
    const result = await queueAuthWebhook(outbox, { environment: 'dev', connection, operation: 'creation', success: true, ...input });
    expect(result.skipped).toBeUndefined();
    return result.id!;
  }
  async function settled(id: string, status: 'delivered' | 'failed' = 'delivered'): Promise<void> {
    await waitFor(async () => (await stack.core.stores.webhookOutbox.get(id))?.status === status, 30_000, `event ${id} ${status}`);
  }
  const attemptsOf = (id: string, environment = 'dev') => stack.core.stores.webhookDeliveries.listForEvent(environment, id);

  /** The environment's settings through the typed client (another environment's with its key). */
  async function environment(key = stack.keys.dev) {
    const res = await stack.clientWithKey(key).GET('/environment');
    expect(res.response.status).toBe(200);
    return res.data!.data;
  }
  type EnvironmentPatch = paths['/environment']['patch']['requestBody']['content']['application/json'];
  const patchEnvironment = (body: EnvironmentPatch, key = stack.keys.dev) => stack.clientWithKey(key).PATCH('/environment', { body });
  const rotate = (key = stack.keys.dev) => stack.clientWithKey(key).POST('/environment/webhook-signing-key/rotate');

  test('GET /environment shows the defaults and needs a secret key', async () => {
    // No key at all: the untyped helper.
    expect((await stack.api('GET', '/environment', { key: null })).status).toBe(401);
    expect(await environment()).toMatchObject({
      name: 'dev',
      webhook_url: null,
      secondary_webhook_url: null,
      alert_webhook_url: null,
      send_auth_webhooks: true,
      send_sync_completion_always: false,
      send_sync_error_webhooks: true,
      webhook_signing_key_hint: null,
    });
  });

  test('documents written before the settings existed read with the defaults', async () => {
    await stack.core.stores.db.collection('environments').updateOne(
      { _id: 'prod' as never },
      {
        $unset: {
          send_auth_webhooks: '',
          send_sync_completion_always: '',
          send_sync_error_webhooks: '',
          webhook_signing_key_encrypted: '',
          webhook_signing_key_hint: '',
        },
      },
    );
    expect(await environment(stack.keys.prod)).toMatchObject({
      name: 'prod',
      send_auth_webhooks: true,
      send_sync_completion_always: false,
      send_sync_error_webhooks: true,
      webhook_signing_key_hint: null,
    });
  });

  test('PATCH /environment rejects bad input and changes nothing', async () => {
    const before = await environment();
    // Malformed on purpose: the untyped helper.
    for (const body of [
      { webhook_url: 'not a url' },
      { webhook_url: 'ftp://example.com/hook' },
      { secondary_webhook_url: 'https://ok.example.com', send_auth_webhooks: 'yes' },
      { webhook_url: 'https://ok.example.com', unknown_setting: true },
    ]) {
      const res = await stack.api('PATCH', '/environment', { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_body');
      expect(Array.isArray(res.body.error.errors)).toBe(true);
    }
    expect(await environment()).toEqual(before);
  });

  test('PATCH /environment saves URLs and toggles; GET shows them', async () => {
    const res = await patchEnvironment({
      webhook_url: `${receiver.url}/primary`,
      send_sync_completion_always: true,
      alert_webhook_url: 'https://hooks.example.com/alerts',
    });
    expect(res.response.status).toBe(200);
    const got = await environment();
    expect(got).toMatchObject({
      webhook_url: `${receiver.url}/primary`,
      secondary_webhook_url: null,
      alert_webhook_url: 'https://hooks.example.com/alerts',
      send_auth_webhooks: true,
      send_sync_completion_always: true,
      send_sync_error_webhooks: true,
    });
    expect(got).toEqual(res.data?.data);
    // Other environments are untouched.
    expect((await environment(stack.keys.prod)).webhook_url).toBeNull();
  });

  test('the rotate call returns the key once; GET shows only a hint', async () => {
    const res = await rotate();
    expect(res.response.status).toBe(200);
    const key = res.data!.data.webhook_signing_key;
    expect(key).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(key.slice('whsec_'.length), 'base64')).toHaveLength(24);
    keys.push(key);

    const got = await environment();
    expect(got.webhook_signing_key_hint).toBe(`whsec_…${key.slice(-4)}`);
    expect(JSON.stringify(got)).not.toContain(key.slice('whsec_'.length, 20));
    const stored = await stack.core.stores.db.collection('environments').findOne({ _id: 'dev' as never });
    expect(JSON.stringify(stored)).not.toContain(key.slice('whsec_'.length));
  });

  test('an auth webhook (POST /connections) arrives with the documented fields and a valid signature; its attempt is recorded', async () => {
    const res = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(res.response.status).toBe(201);
    const event = await stack.core.stores.db.collection('webhook_outbox').findOne({ type: 'auth', 'payload.connectionId': 'user-1' });
    expect(event).not.toBeNull();
    const id = String(event!._id);
    expect(id).toMatch(/^msg_/);
    await settled(id);

    const [r, ...more] = receiver.withId(id);
    expect(more).toHaveLength(0);
    expect(r.path).toBe('/primary');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body).toEqual({
      from: 'weft',
      type: 'auth',
      connectionId: 'user-1',
      providerConfigKey: 'luma',
      provider: 'luma',
      authMode: 'API_KEY',
      environment: 'dev',
      operation: 'creation',
      success: true,
    });
    expect(new Webhook(keys[0]).verify(r.raw, signatureHeaders(r))).toEqual(r.body);
    expect(verifies(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, r)).toBe(false);

    const attempts = await attemptsOf(id);
    expect(attempts.map((a) => [a.attempt, a.target, a.url, a.status, a.error])).toEqual([[1, 'primary', `${receiver.url}/primary`, 200, null]]);
    expect(attempts[0]).toMatchObject({ event_id: id, type: 'auth', environment: 'dev' });
  });

  test('a failed refresh carries the error', async () => {
    const error = { type: 'refresh_token_external_error', description: 'The provider rejected the refresh token.' };
    const id = await queue({ operation: 'refresh', success: false, error });
    const r = await receiver.waitFor((w) => w.headers['webhook-id'] === id);
    expect(r.body).toMatchObject({ operation: 'refresh', success: false, error });
    expect(verifies(keys[0], r)).toBe(true);
  });

  test('after a rotation, both the old and the new key verify during the grace period, then only the new', async () => {
    const res = await rotate();
    const newKey = res.data!.data.webhook_signing_key;
    expect(newKey).not.toBe(keys[0]);
    expect(Date.parse(res.data!.data.previous_key_valid_until!) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    keys.push(newKey);

    const during = await queue({ operation: 'override' });
    const r = await receiver.waitFor((w) => w.headers['webhook-id'] === during);
    expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(newKey, r)).toBe(true);
    expect(verifies(keys[0], r)).toBe(true);

    // Past the grace period the old key no longer signs.
    await stack.core.stores.db
      .collection('environments')
      .updateOne({ _id: 'dev' as never }, { $set: { webhook_signing_key_rotated_at: new Date(Date.now() - 25 * 3_600_000) } });
    const after = await queue({ operation: 'override' });
    const later = await receiver.waitFor((w) => w.headers['webhook-id'] === after);
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(newKey, later)).toBe(true);
    expect(verifies(keys[0], later)).toBe(false);
  });

  test('an unreachable URL is recorded as failed; the next attempt goes only to the URL still owed, with the same id', async () => {
    await closed.close(); // its port now refuses connections
    await patchEnvironment({ secondary_webhook_url: `${closed.url}/gone` });
    const id = await queue();
    // The first attempt: the primary takes it, the secondary cannot be reached.
    await waitFor(async () => (await attemptsOf(id)).length === 2, 20_000, 'the first attempt of both URLs');
    const first = await attemptsOf(id);
    expect(first.map((a) => [a.attempt, a.target, a.status]).sort()).toEqual([
      [1, 'primary', 200],
      [1, 'secondary', null],
    ]);
    expect(first.find((a) => a.target === 'secondary')?.error).toEqual(expect.any(String));
    const pending = await stack.core.stores.webhookOutbox.get(id);
    expect(pending).toMatchObject({ status: 'pending' });
    expect(pending?.last_error).toContain('secondary');

    // The secondary comes back (at another address): the scheduled retry (~5 s) reaches it alone.
    await patchEnvironment({ secondary_webhook_url: `${receiver.url}/secondary` });
    await settled(id);
    expect(receiver.withId(id).map((r) => r.path)).toEqual(['/primary', '/secondary']);
    // Oldest first: within an attempt, the refused connection may be recorded before the 200.
    const recorded = (await attemptsOf(id)).map((a) => [a.attempt, a.target, a.status]);
    expect(recorded.sort()).toEqual([
      [1, 'primary', 200],
      [1, 'secondary', null],
      [2, 'secondary', 200],
    ]);
  });

  test('the secondary URL gets the same event', async () => {
    const id = await queue();
    await settled(id);
    expect(
      receiver
        .withId(id)
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/primary', '/secondary']);
    for (const r of receiver.withId(id)) expect(verifies(keys[1], r)).toBe(true);
    await patchEnvironment({ secondary_webhook_url: null });
  });

  test('send_auth_webhooks=false queues nothing and sends nothing; no URL queues nothing', async () => {
    expect((await patchEnvironment({ send_auth_webhooks: false })).data?.data.send_auth_webhooks).toBe(false);
    const res = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'while-off', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(res.response.status).toBe(201);
    const off = await queueAuthWebhook(outbox, { environment: 'dev', connection, operation: 'creation', success: true });
    expect(off).toMatchObject({ id: null, skipped: 'disabled' });
    const none = await queueAuthWebhook(outbox, { environment: 'prod', connection, operation: 'creation', success: true });
    expect(none).toMatchObject({ id: null, skipped: 'no_webhook_url' });
    const outboxed = stack.core.stores.db.collection('webhook_outbox');
    expect(await outboxed.countDocuments({ type: 'auth', 'payload.connectionId': 'while-off' })).toBe(0);
    expect(await outboxed.countDocuments({ environment: 'prod' })).toBe(0);

    // Turned on again, the next event arrives; nothing of the time it was off came before it.
    await patchEnvironment({ send_auth_webhooks: true });
    const id = await queue({ connection: { ...connection, connection_id: 'after-off' } });
    await receiver.waitFor((r) => r.headers['webhook-id'] === id);
    expect(receiver.received.filter((r) => r.body.type === 'auth' && r.body.connectionId === 'while-off')).toHaveLength(0);
  });

  test('the first webhook creates the signing key itself, once, stored encrypted', async () => {
    await patchEnvironment({ webhook_url: `${receiver.url}/prod` }, stack.keys.prod);
    const [a, b] = await Promise.all([queue({ environment: 'prod' }), queue({ environment: 'prod' })]);
    await Promise.all([settled(a), settled(b)]);

    const stored = await stack.core.stores.db.collection('environments').findOne({ _id: 'prod' as never });
    expect(stored?.webhook_signing_key_encrypted).toMatch(/^v3\./);
    const lazyKey = stack.core.cipher.open<string>(stored?.webhook_signing_key_encrypted, sealedAt.webhookSigningKey('prod'));
    keys.push(lazyKey);
    // Racing first deliveries agree on one key.
    const both = [...receiver.withId(a), ...receiver.withId(b)];
    expect(both.map((r) => r.path)).toEqual(['/prod', '/prod']);
    expect(both.every((r) => verifies(lazyKey, r))).toBe(true);
    expect((await environment(stack.keys.prod)).webhook_signing_key_hint).toBe(`whsec_…${lazyKey.slice(-4)}`);

    // The app learns a key by rotating; the lazily made one keeps verifying for the grace period.
    const rotated = (await rotate(stack.keys.prod)).data!.data;
    expect(rotated.previous_key_valid_until).not.toBeNull();
    keys.push(rotated.webhook_signing_key);
    const id = await queue({ environment: 'prod' });
    const r = await receiver.waitFor((w) => w.headers['webhook-id'] === id);
    expect(verifies(rotated.webhook_signing_key, r)).toBe(true);
    expect(verifies(lazyKey, r)).toBe(true);
  });

  test('the signing keys never reach the logs', () => {
    expect(keys).toHaveLength(4);
    const logs = stack.logs.join('\n');
    expect(logs).toContain('webhook delivered');
    for (const key of keys) expect(logs).not.toContain(key.slice('whsec_'.length));
  });
});
