import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery';
import { CredentialCipher } from '../../auth/credential-cipher';
import { createEgress } from '../../egress/egress';
import { createStores, ensureIndexes, type Stores } from '../../store/db';
import { newWebhookId } from '../../webhooks/deliver';
import { webhookDeliveryWorkflowId, type WebhookDeliveryResult } from '../../webhooks/delivery-contracts';
import { temporalWebhookDelivery } from '../../webhooks/delivery-starter';
import { queueWebhook, replayWebhook, type OutboxDeps } from '../../webhooks/outbox';
import { webhookDispatchPass } from '../../webhooks/dispatcher';
import { rotateWebhookSigningKey } from '../../webhooks/signing-key';
import { useTestDatabase } from '../support/test-database';
import { createTestWorker, createTimeSkippingEnv } from './time-skipping-env';

/**
 * The real dispatcher (first attempts) and webhookDelivery workflow (the retries) on
 * Temporal's time-skipping server, with their real activities on the run's MongoDB-wire
 * server and a real local receiver: a day of retries passes in seconds, and what the
 * receiver got and the store recorded is checked.
 */

const HOUR_MS = 60 * 60_000;
const PREFIX = 'weft-whtest';

interface Hit {
  /** The test server's clock when the request came in: the workflow's time. */
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The app's endpoint: `answer` decides per request (a status, or `drop` to cut the connection: a network error). */
function startReceiver(env: () => TestWorkflowEnvironment) {
  const hits: Hit[] = [];
  let answer: (at: number) => number | 'drop' = () => 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void env()
        .currentTimeMs()
        .then((at) => {
          const verdict = answer(at);
          if (verdict === 'drop') {
            req.socket.destroy();
            return;
          }
          hits.push({ at, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(verdict, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: verdict < 300, access_token: 'leaked-token-value' }));
        });
    });
  });
  return {
    hits,
    url: '',
    setAnswer(next: typeof answer) {
      answer = next;
    },
    async start() {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('webhookDelivery on the time-skipping test server', () => {
  const testDb = useTestDatabase('weft_webhook_delivery');
  let env: TestWorkflowEnvironment;
  let stores: Stores;
  /** What the activities get; `deps` adds the starter for each test's worker. */
  let base: Omit<OutboxDeps, 'startDelivery'>;
  let deps: OutboxDeps;
  /** One dispatcher pass with `deps`: the first attempts of due events, workflows for the failed. */
  let dispatch: () => Promise<number>;
  let signingKey: string;
  let worker: Worker;
  const receiver = startReceiver(() => env);
  // The environment's secondary URL, set by the one test that uses it.
  const secondary = startReceiver(() => env);

  beforeAll(async () => {
    env = await createTimeSkippingEnv();
    await receiver.start();
    await secondary.start();
    stores = createStores(testDb.db());
    await ensureIndexes(stores);
    const cipher = new CredentialCipher(CredentialCipher.generateKey());
    await stores.environments.ensure('dev');
    await stores.environments.updateSettings('dev', { webhook_url: receiver.url });
    signingKey = (await rotateWebhookSigningKey(stores.environments, cipher, 'dev')).key;
    const egress = createEgress({
      purpose: 'webhooks',
      allow: [{ variable: 'WEFT_EGRESS_ALLOW_WEBHOOKS', entries: [receiver.url, secondary.url].map((url) => `127.0.0.1:${new URL(url).port}`) }],
      connectTimeoutMs: 2_000,
      headersTimeoutMs: 5_000,
      bodyTimeoutMs: 5_000,
    });
    base = { stores, cipher, logger: pino({ level: 'silent' }), egress };
  });
  afterAll(async () => {
    await env?.teardown();
    await receiver.stop();
    await secondary.stop();
  });
  /** A worker runs once; each test gets its own, on a queue of its own, with the real activities (and a test that runs two, a second). */
  async function freshWorker(): Promise<void> {
    worker = await createTestWorker(env, createWebhookDeliveryActivities(base));
    deps = { ...base, startDelivery: temporalWebhookDelivery(env.client, { temporalIdPrefix: PREFIX, taskQueue: worker.options.taskQueue }) };
    dispatch = webhookDispatchPass(deps);
  }
  beforeEach(async () => {
    receiver.hits.length = 0;
    secondary.hits.length = 0;
    await freshWorker();
  });
  // A worker holds the test server's connection until it has run and shut down: one a test
  // did not need is run for no time, so the environment's teardown can close the connection.
  afterEach(async () => {
    if (worker.getState() === 'INITIALIZED') await worker.runUntil(Promise.resolve());
  });

  function verified(hit: Hit): unknown {
    return new Webhook(signingKey).verify(hit.body, {
      'webhook-id': String(hit.headers['webhook-id']),
      'webhook-timestamp': String(hit.headers['webhook-timestamp']),
      'webhook-signature': String(hit.headers['webhook-signature']),
    });
  }

  /**
   * Queues an auth event as the API does, lets a dispatcher pass make its first attempt, and
   * (the first attempt failed) runs the worker until the event's workflow is done.
   */
  async function queueAndDeliver(payload: Record<string, unknown>): Promise<{ id: string; result: WebhookDeliveryResult }> {
    return worker.runUntil(async () => {
      const queued = await queueWebhook(deps, { environment: 'dev', type: 'auth', payload, gate: 'send_auth_webhooks' });
      const id = queued.id!;
      expect(await dispatch()).toBeGreaterThanOrEqual(1);
      expect(await stores.webhookOutbox.get(id)).toMatchObject({ status: 'pending', rounds: 1 });
      const result = await env.client.workflow.getHandle<() => Promise<WebhookDeliveryResult>>(webhookDeliveryWorkflowId(PREFIX, id)).result();
      return { id, result };
    });
  }

  test('a receiver down for 25 hours gets the event exactly once when it returns, every attempt recorded', async () => {
    const downUntil = (await env.currentTimeMs()) + 25 * HOUR_MS;
    receiver.setAnswer((at) => (at < downUntil ? 'drop' : 200));
    const queuedAt = await env.currentTimeMs();

    const { id, result } = await queueAndDeliver({ from: 'weft', type: 'auth', connectionId: 'user-1', operation: 'creation', success: true });

    expect(result).toEqual({ outcome: 'delivered', attempts: 8 });
    expect(receiver.hits).toHaveLength(1);
    const [hit] = receiver.hits;
    expect(hit!.headers['webhook-id']).toBe(id);
    expect(verified(hit!)).toMatchObject({ connectionId: 'user-1', operation: 'creation' });
    // The last step of the schedule: at least 27 h 35 min after queueing.
    expect(hit!.at - queuedAt).toBeGreaterThanOrEqual(27 * HOUR_MS + 35 * 60_000);

    const attempts = await stores.webhookDeliveries.listForEvent('dev', id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const a of attempts.slice(0, 7)) {
      expect(a).toMatchObject({ event_id: id, target: 'primary', status: null, url: receiver.url });
      expect(a.error).toEqual(expect.any(String));
    }
    expect(attempts[7]).toMatchObject({ status: 200, error: null });
    expect(attempts[7]!.duration_ms).toEqual(expect.any(Number));
    // What the receiver answered, with the token-like field it echoed redacted.
    expect(attempts[7]!.response_excerpt).toContain('"ok":true');
    expect(JSON.stringify(attempts)).not.toContain('leaked-token-value');

    const event = await stores.webhookOutbox.get(id);
    expect(event).toMatchObject({ status: 'delivered', rounds: 7 });

    // Asking again (the sweeper, a second API process) starts nothing new: one workflow per event.
    await expect(deps.startDelivery(id)).resolves.toBe('existing');
    expect(receiver.hits).toHaveLength(1);
  });

  test('an event whose attempts run out is marked failed, under one webhook-id throughout', async () => {
    receiver.setAnswer(() => 500);
    const queuedAt = await env.currentTimeMs();

    const { id, result } = await queueAndDeliver({ from: 'weft', type: 'auth', connectionId: 'user-2', operation: 'refresh', success: false });

    expect(result).toEqual({ outcome: 'failed', attempts: 8 });
    expect(receiver.hits).toHaveLength(8);
    for (const hit of receiver.hits) {
      expect(hit.headers['webhook-id']).toBe(id);
      expect(verified(hit)).toMatchObject({ connectionId: 'user-2' });
    }
    // Retries spread over more than a day.
    expect(receiver.hits[7]!.at - receiver.hits[0]!.at).toBeGreaterThanOrEqual(24 * HOUR_MS);
    expect(receiver.hits[0]!.at - queuedAt).toBeLessThan(60_000);

    const attempts = await stores.webhookDeliveries.listForEvent('dev', id);
    expect(attempts).toHaveLength(8);
    expect(attempts.every((a) => a.status === 500 && a.error === 'HTTP 500')).toBe(true);

    const event = await stores.webhookOutbox.get(id);
    expect(event).toMatchObject({ status: 'failed', rounds: 8 });
    expect(event!.last_error).toMatch(/^undelivered after 8 attempts: primary: HTTP 500/);
    expect(event!.settled_at).toBeInstanceOf(Date);
  });

  test('an event whose attempts run out is marked failed and a replay delivers it with the same id', async () => {
    receiver.setAnswer(() => 500);
    const payload = { from: 'weft', type: 'auth', connectionId: 'user-5', operation: 'creation', success: true };
    const { id, result } = await queueAndDeliver(payload);
    expect(result).toEqual({ outcome: 'failed', attempts: 8 });
    expect(await stores.webhookOutbox.get(id)).toMatchObject({ status: 'failed' });
    const failedHits = receiver.hits.splice(0);
    expect(failedHits).toHaveLength(8);

    receiver.setAnswer(() => 200);
    expect(await replayWebhook(deps, 'dev', id)).toEqual({ outcome: 'replayed', id, replay: 1 });
    // Back in the queue: the next pass's first attempt delivers it (no workflow needed).
    expect(await dispatch()).toBeGreaterThanOrEqual(1);

    // Same webhook-id and body, and a signature made for this send that the app's library accepts.
    expect(receiver.hits).toHaveLength(1);
    const [hit] = receiver.hits;
    expect(hit!.headers['webhook-id']).toBe(id);
    expect(hit!.body).toBe(failedHits[0]!.body);
    expect(verified(hit!)).toEqual(payload);
    expect(Number(hit!.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Number(failedHits[7]!.headers['webhook-timestamp']));

    const event = await stores.webhookOutbox.get(id);
    expect(event).toMatchObject({ status: 'delivered', replay: 1, rounds: 0 });
    const attempts = await stores.webhookDeliveries.listForEvent('dev', id);
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => [n, 500]), [1, 200]]);
    // The replay's attempt is the one made after it was asked for.
    expect(attempts[8]!.created_at.getTime()).toBeGreaterThanOrEqual(event!.replays![0]!.at.getTime());
    expect(attempts[7]!.created_at.getTime()).toBeLessThanOrEqual(event!.replays![0]!.at.getTime());

    // Another environment's event is unknown here.
    expect(await replayWebhook(deps, 'prod', id)).toEqual({ outcome: 'unknown' });
  });

  test("a replay while Temporal is unreachable: its first attempt is made anyway; after it failed, a later pass starts that replay's workflow", async () => {
    receiver.setAnswer(() => 500);
    const { id } = await queueAndDeliver({ from: 'weft', type: 'auth', connectionId: 'user-6', operation: 'creation', success: true });
    expect(await stores.webhookOutbox.get(id)).toMatchObject({ status: 'failed' });
    receiver.hits.length = 0;

    // Temporal unreachable: the replay's first attempt (500) is made; its workflow cannot be started.
    const down: OutboxDeps = { ...deps, startDelivery: () => Promise.reject(new Error('connect ECONNREFUSED')) };
    expect(await replayWebhook(down, 'dev', id)).toEqual({ outcome: 'replayed', id, replay: 1 });
    expect(await webhookDispatchPass(down)()).toBeGreaterThanOrEqual(1);
    expect(await stores.webhookOutbox.get(id)).toMatchObject({ status: 'pending', replay: 1, rounds: 1 });
    // A pending event is not replayed again.
    expect(await replayWebhook(deps, 'dev', id)).toEqual({ outcome: 'pending' });
    // Past the short hold a failed start leaves (the dispatcher would come back 15 s later).
    await stores.webhookOutbox.holdUntil(id, new Date(Date.now() - 1_000));

    receiver.setAnswer(() => 200);
    await freshWorker();
    const result = await worker.runUntil(async () => {
      expect(await dispatch()).toBeGreaterThanOrEqual(1);
      return env.client.workflow.getHandle<() => Promise<WebhookDeliveryResult>>(webhookDeliveryWorkflowId(PREFIX, id, 1)).result();
    });
    // The replay's workflow took over at its second attempt, after the schedule's first wait.
    expect(result).toEqual({ outcome: 'delivered', attempts: 2 });
    expect(receiver.hits.map((h) => h.headers['webhook-id'])).toEqual([id, id]);
    expect(await stores.webhookOutbox.get(id)).toMatchObject({ status: 'delivered', replay: 1 });
    const attempts = await stores.webhookDeliveries.listForEvent('dev', id);
    expect(attempts.slice(-2).map((a) => [a.attempt, a.status])).toEqual([
      [1, 500],
      [2, 200],
    ]);
  });

  test('with a secondary URL down for an hour, the primary gets the event once and the secondary when it is back', async () => {
    try {
      await stores.environments.updateSettings('dev', { secondary_webhook_url: secondary.url });
      const downUntil = (await env.currentTimeMs()) + HOUR_MS;
      receiver.setAnswer(() => 200);
      secondary.setAnswer((at) => (at < downUntil ? 503 : 200));

      const { id, result } = await queueAndDeliver({ from: 'weft', type: 'auth', connectionId: 'user-4', operation: 'creation', success: true });

      // At once, 5 s, 5 min, 30 min: down; 2 h 35 min in: back.
      expect(result).toEqual({ outcome: 'delivered', attempts: 5 });
      expect(receiver.hits.map((h) => h.headers['webhook-id'])).toEqual([id]);
      expect(secondary.hits.map((h) => h.headers['webhook-id'])).toEqual([id, id, id, id, id]);
      expect(secondary.hits.every((h) => verified(h) !== undefined)).toBe(true);
      const attempts = await stores.webhookDeliveries.listForEvent('dev', id);
      expect(attempts.filter((a) => a.target === 'primary').map((a) => [a.attempt, a.status])).toEqual([[1, 200]]);
      expect(attempts.filter((a) => a.target === 'secondary').map((a) => a.status)).toEqual([503, 503, 503, 503, 200]);
      expect(await stores.webhookOutbox.get(id)).toMatchObject({ status: 'delivered', rounds: 4 });
    } finally {
      await stores.environments.updateSettings('dev', { secondary_webhook_url: null });
    }
  });

  test('an event stored while no worker ran is delivered by the next pass, once, without a workflow', async () => {
    receiver.setAnswer(() => 200);
    const id = newWebhookId();
    const past = new Date(Date.now() - 5 * 60_000);
    await stores.webhookOutbox.add({
      _id: id,
      environment: 'dev',
      type: 'auth',
      payload: { from: 'weft', type: 'auth', connectionId: 'user-3', operation: 'creation', success: true },
      gate: 'send_auth_webhooks',
      created_at: past,
      next_attempt_at: past,
      lease_until: new Date(0),
    });
    // Two dispatchers (two worker processes) at once: exactly one takes it.
    const passes = await Promise.all([dispatch(), webhookDispatchPass(deps)()]);
    expect(passes.some((n) => n >= 1)).toBe(true);
    expect(await dispatch()).toBe(0);
    expect(receiver.hits.filter((h) => h.headers['webhook-id'] === id)).toHaveLength(1);
    expect(await stores.webhookOutbox.get(id)).toMatchObject({ status: 'delivered', rounds: 0 });
    await expect(env.client.workflow.getHandle(webhookDeliveryWorkflowId(PREFIX, id)).describe()).rejects.toThrow();
  });
});
