import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { startWeftStack, type WeftStack } from '../support/weft-stack';
import { sealedAt } from '../../auth/credential-cipher';
import { sendAuthWebhook } from '../../webhooks/auth-webhook';
import type { WebhookDeps } from '../../webhooks/deliver';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local app endpoint: records every POST and answers with the queued statuses (200 when empty). */
function startReceiver() {
  const received: Received[] = [];
  const statuses: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = statuses.shift() ?? 200;
      res.end('ok');
    });
  });
  return {
    received,
    statuses,
    url: '',
    async start() {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function headersOf(r: Received): Record<string, string> {
  return {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  };
}

function verifies(key: string, r: Received): boolean {
  try {
    new Webhook(key).verify(r.body, headersOf(r));
    return true;
  } catch {
    return false;
  }
}

const connection = { connection_id: 'user-1', provider_config_key: 'luma', provider: 'luma', auth_mode: 'API_KEY' as const };

describe('environment settings and signed webhooks', () => {
  let stack: WeftStack;
  const receiver = startReceiver();
  // Stopped by the "unreachable URL" test; started first so the egress allow-list can name its port.
  const closed = startReceiver();
  let deps: WebhookDeps;
  const keys: string[] = [];

  beforeAll(async () => {
    await receiver.start();
    await closed.start();
    stack = await startWeftStack({ worker: false, egressAllow: [receiver.url, closed.url] });
    // Same sink as the stack's own logger, so the secrets check below covers delivery logs too.
    const logger = pino({ level: 'debug' }, { write: (line: string) => void stack.logs.push(line) });
    deps = { stores: stack.core.stores, cipher: stack.core.cipher, logger, egress: stack.egress, retryDelaysMs: [50, 100, 200] };
  });
  afterAll(async () => {
    await stack?.shutdown();
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.statuses.length = 0;
  });

  test('GET /environment shows the defaults and needs a secret key', async () => {
    expect((await stack.api('GET', '/environment', { key: null })).status).toBe(401);
    const res = await stack.api('GET', '/environment');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
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
    const res = await stack.api('GET', '/environment', { key: stack.keys.prod });
    expect(res.body.data).toMatchObject({
      name: 'prod',
      send_auth_webhooks: true,
      send_sync_completion_always: false,
      send_sync_error_webhooks: true,
      webhook_signing_key_hint: null,
    });
  });

  test('PATCH /environment rejects bad input and changes nothing', async () => {
    const before = (await stack.api('GET', '/environment')).body.data;
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
    expect((await stack.api('GET', '/environment')).body.data).toEqual(before);
  });

  test('PATCH /environment saves URLs and toggles; GET shows them', async () => {
    const res = await stack.api('PATCH', '/environment', {
      body: { webhook_url: `${receiver.url}/primary`, send_sync_completion_always: true, alert_webhook_url: 'https://hooks.example.com/alerts' },
    });
    expect(res.status).toBe(200);
    const got = (await stack.api('GET', '/environment')).body.data;
    expect(got).toMatchObject({
      webhook_url: `${receiver.url}/primary`,
      secondary_webhook_url: null,
      alert_webhook_url: 'https://hooks.example.com/alerts',
      send_auth_webhooks: true,
      send_sync_completion_always: true,
      send_sync_error_webhooks: true,
    });
    expect(got).toEqual(res.body.data);
    // Other environments are untouched.
    expect((await stack.api('GET', '/environment', { key: stack.keys.prod })).body.data.webhook_url).toBeNull();
  });

  test('the rotate call returns the key once; GET shows only a hint', async () => {
    const res = await stack.api('POST', '/environment/webhook-signing-key/rotate');
    expect(res.status).toBe(200);
    const key: string = res.body.data.webhook_signing_key;
    expect(key).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(key.slice('whsec_'.length), 'base64')).toHaveLength(24);
    keys.push(key);

    const got = await stack.api('GET', '/environment');
    expect(got.body.data.webhook_signing_key_hint).toBe(`whsec_…${key.slice(-4)}`);
    expect(JSON.stringify(got.body)).not.toContain(key.slice('whsec_'.length, 20));
    const stored = await stack.core.stores.db.collection('environments').findOne({ _id: 'dev' as never });
    expect(JSON.stringify(stored)).not.toContain(key.slice('whsec_'.length));
  });

  test('an auth webhook arrives with the documented fields and a valid signature', async () => {
    const summary = await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'creation', success: true });
    expect(summary).toMatchObject({ delivered: true, attempts: 1, status: 200 });
    expect(receiver.received).toHaveLength(1);
    const [r] = receiver.received;
    expect(r.path).toBe('/primary');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['webhook-id']).toBe(summary.id);
    expect(summary.id).toMatch(/^msg_/);
    expect(JSON.parse(r.body)).toEqual({
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
    expect(new Webhook(keys[0]).verify(r.body, headersOf(r))).toEqual(JSON.parse(r.body));
    expect(verifies(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, r)).toBe(false);
  });

  test('a failed refresh carries the error', async () => {
    const error = { type: 'refresh_token_external_error', description: 'The provider rejected the refresh token.' };
    await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'refresh', success: false, error });
    expect(JSON.parse(receiver.received[0].body)).toMatchObject({ operation: 'refresh', success: false, error });
  });

  test('after a rotation, both the old and the new key verify during the grace period, then only the new', async () => {
    const res = await stack.api('POST', '/environment/webhook-signing-key/rotate');
    const newKey: string = res.body.data.webhook_signing_key;
    expect(newKey).not.toBe(keys[0]);
    expect(Date.parse(res.body.data.previous_key_valid_until) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    keys.push(newKey);

    await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'override', success: true });
    const [r] = receiver.received;
    expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifies(newKey, r)).toBe(true);
    expect(verifies(keys[0], r)).toBe(true);

    // Past the grace period the old key no longer signs.
    await stack.core.stores.db
      .collection('environments')
      .updateOne({ _id: 'dev' as never }, { $set: { webhook_signing_key_rotated_at: new Date(Date.now() - 25 * 3_600_000) } });
    await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'override', success: true });
    const later = receiver.received[1];
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(newKey, later)).toBe(true);
    expect(verifies(keys[0], later)).toBe(false);
  });

  test('5xx answers are retried with the same webhook-id and every attempt is recorded', async () => {
    receiver.statuses.push(500, 500);
    const summary = await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'creation', success: true });
    expect(summary).toMatchObject({ delivered: true, attempts: 3, status: 200 });
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([summary.id]));
    for (const r of receiver.received) expect(verifies(keys[1], r)).toBe(true);

    const attempts = await stack.core.stores.webhookDeliveries.listForEvent('dev', summary.id);
    expect(attempts.map((a) => [a.attempt, a.status, a.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 500, 'HTTP 500'],
      [3, 200, null],
    ]);
    expect(attempts.every((a) => a.type === 'auth' && a.environment === 'dev' && a.url === `${receiver.url}/primary` && a.target === 'primary')).toBe(true);
  });

  test('a 4xx answer is not retried; a receiver that keeps failing gets 1 + 3 attempts', async () => {
    receiver.statuses.push(400);
    expect(await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'creation', success: true })).toMatchObject({
      delivered: false,
      attempts: 1,
      status: 400,
    });
    receiver.received.length = 0;
    receiver.statuses.push(503, 503, 503, 503);
    expect(await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'creation', success: true })).toMatchObject({
      delivered: false,
      attempts: 4,
      status: 503,
    });
    expect(receiver.received).toHaveLength(4);
  });

  test('an unreachable URL does not throw; the failure is recorded', async () => {
    await closed.stop(); // its port now refuses connections
    await stack.api('PATCH', '/environment', { body: { secondary_webhook_url: `${closed.url}/gone` } });
    const summary = await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'creation', success: true });
    expect(summary.delivered).toBe(false);
    expect(summary.targets.map((t) => [t.target, t.delivered, t.attempts])).toEqual([
      ['primary', true, 1],
      ['secondary', false, 4],
    ]);
    const attempts = await stack.core.stores.webhookDeliveries.listForEvent('dev', summary.id);
    expect(attempts.filter((a) => a.target === 'secondary').every((a) => a.status === null && typeof a.error === 'string')).toBe(true);
  });

  test('the secondary URL gets the same event', async () => {
    await stack.api('PATCH', '/environment', { body: { secondary_webhook_url: `${receiver.url}/secondary` } });
    const summary = await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'creation', success: true });
    expect(summary).toMatchObject({ delivered: true, attempts: 2 });
    expect(receiver.received.map((r) => r.path).sort()).toEqual(['/primary', '/secondary']);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([summary.id]));
    await stack.api('PATCH', '/environment', { body: { secondary_webhook_url: null } });
  });

  test('send_auth_webhooks=false sends nothing; no URL sends nothing', async () => {
    expect((await stack.api('PATCH', '/environment', { body: { send_auth_webhooks: false } })).body.data.send_auth_webhooks).toBe(false);
    const summary = await sendAuthWebhook(deps, { environment: 'dev', connection, operation: 'creation', success: true });
    expect(summary).toMatchObject({ delivered: false, attempts: 0, skipped: 'disabled' });
    const none = await sendAuthWebhook(deps, { environment: 'prod', connection, operation: 'creation', success: true });
    expect(none).toMatchObject({ delivered: false, attempts: 0, skipped: 'no_webhook_url' });
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(0);
    expect(await stack.core.stores.webhookDeliveries.listForEvent('dev', summary.id)).toEqual([]);
  });

  test('the first webhook creates the signing key itself, once, stored encrypted', async () => {
    const prod = { key: stack.keys.prod };
    await stack.api('PATCH', '/environment', { ...prod, body: { webhook_url: `${receiver.url}/prod` } });
    const input = { environment: 'prod', connection, operation: 'creation' as const, success: true };
    const [a, b] = await Promise.all([sendAuthWebhook(deps, input), sendAuthWebhook(deps, input)]);
    expect([a.delivered, b.delivered]).toEqual([true, true]);

    const stored = await stack.core.stores.db.collection('environments').findOne({ _id: 'prod' as never });
    expect(stored?.webhook_signing_key_encrypted).toMatch(/^v2\./);
    const lazyKey = stack.core.cipher.open<string>(stored?.webhook_signing_key_encrypted, sealedAt.webhookSigningKey('prod'));
    keys.push(lazyKey);
    // Racing first deliveries agree on one key.
    expect(receiver.received.every((r) => verifies(lazyKey, r))).toBe(true);
    expect((await stack.api('GET', '/environment', prod)).body.data.webhook_signing_key_hint).toBe(`whsec_…${lazyKey.slice(-4)}`);

    // The app learns a key by rotating; the lazily made one keeps verifying for the grace period.
    const rotated = await stack.api('POST', '/environment/webhook-signing-key/rotate', prod);
    expect(rotated.body.data.previous_key_valid_until).not.toBeNull();
    keys.push(rotated.body.data.webhook_signing_key);
    receiver.received.length = 0;
    await sendAuthWebhook(deps, input);
    expect(verifies(rotated.body.data.webhook_signing_key, receiver.received[0])).toBe(true);
    expect(verifies(lazyKey, receiver.received[0])).toBe(true);
  });

  test('the signing keys never reach the logs', () => {
    expect(keys).toHaveLength(4);
    const logs = stack.logs.join('\n');
    expect(logs).toContain('webhook delivered');
    for (const key of keys) expect(logs).not.toContain(key.slice('whsec_'.length));
  });
});
