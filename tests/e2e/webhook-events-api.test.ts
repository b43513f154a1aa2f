import { startScriptedReceiver, verifies, type ReceivedRequest, type ScriptedReceiver } from '../support/scripted-receiver';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitFor } from '../support/wait';
import type { paths } from '../../cli/api-client/weft-api';

type EventsQuery = NonNullable<paths['/webhooks/events']['get']['parameters']['query']>;
type BulkReplayBody = paths['/webhooks/events/replay']['post']['requestBody']['content']['application/json'];

/**
 * The delivery API on real Temporal + FerretDB: events made by the product (a connection
 * created: an `auth` webhook) and delivered by their workflows on the stack's worker, to a
 * local receiver that checks signatures with the `standardwebhooks` library. Failed events
 * come from the product too: queued while the worker is stopped, then auth webhooks turned
 * off, so their first attempt finds them not to be sent and marks them failed.
 */

const LUMA_KEY = 'sandbox-luma-api-key';

describe('the webhook events API', () => {
  let stack: WeftStack;
  /** dev's endpoint: answers 200. */
  let receiver: ScriptedReceiver;
  /** prod's endpoint: answers 500, so prod's event stays pending (retried at 5 s, 5 min, …). */
  let down: ScriptedReceiver;
  let signingKey: string;
  /** The webhook-id of each connection's `auth` event. */
  const idOf: Record<string, string> = {};
  /** Before every event; between the early and the late failed events. */
  let start: string;
  let mid: string;

  const delivered = ['d-1', 'd-2', 'd-3'];
  const earlyFailed = ['f-1', 'f-2', 'f-3'];
  const lateFailed = ['f-4', 'f-5'];

  // The typed client (another environment's with its key); malformed queries and bodies go through the untyped helper.
  const client = (key = stack.keys.dev) => stack.clientWithKey(key);
  const events = (query: EventsQuery, key?: string) => client(key).GET('/webhooks/events', { params: { query } });
  const eventsUntyped = (query: string) => stack.api('GET', `/webhooks/events?${query}`);
  const eventOf = (id: string, key?: string) => client(key).GET('/webhooks/events/{id}', { params: { path: { id } } });
  const replay = (id: string, key?: string) => client(key).POST('/webhooks/events/{id}/replay', { params: { path: { id } } });
  const bulkReplay = (body: BulkReplayBody) => client().POST('/webhooks/events/replay', { body });
  const bulkReplayUntyped = (body: unknown) => stack.api('POST', '/webhooks/events/replay', { body });

  /** Every page of a query, following `next_cursor`; the page sizes too. */
  async function walk(query: EventsQuery, key?: string) {
    type Event = NonNullable<Awaited<ReturnType<typeof events>>['data']>['events'][number];
    const all: Event[] = [];
    const pages: number[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 200; n++) {
      const res: Awaited<ReturnType<typeof events>> = await events({ ...query, cursor }, key);
      expect(res.response.status).toBe(200);
      all.push(...res.data!.events);
      pages.push(res.data!.events.length);
      if (res.data!.next_cursor === null) return { events: all, pages };
      cursor = res.data!.next_cursor;
    }
    throw new Error('paging did not end');
  }
  const connectionsOf = (list: Array<{ connection_id: string | null }>) => list.map((e) => e.connection_id);
  const statusOf = async (id: string, key?: string) => (await eventOf(id, key)).data?.status;

  async function connect(connectionId: string, key = stack.keys.dev): Promise<void> {
    const res = await client(key).POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: LUMA_KEY } },
    });
    expect(res.response.status).toBe(201);
    const listed = await events({ type: 'auth', connection_id: connectionId }, key);
    expect(listed.data?.events).toHaveLength(1);
    idOf[connectionId] = listed.data!.events[0].id;
  }
  /** Waits until every event has `status` (a failed first attempt whose workflow start timed out is handed over again 15 s later). */
  async function settled(ids: string[], status: 'delivered' | 'failed', key?: string): Promise<void> {
    let seen: Array<string | undefined> = [];
    const done = async () => {
      seen = await Promise.all(ids.map((id) => statusOf(id, key)));
      return seen.every((s) => s === status);
    };
    await waitFor(done, 60_000, `${ids.join(', ')} ${status}`).catch((err: Error) => {
      const starts = stack.logs.filter((l) => l.includes('could not start the webhook delivery workflow')).length;
      throw new Error(`${err.message}; statuses ${seen.join(', ')}; workflow starts that failed: ${starts}`);
    });
  }
  const tick = () => new Promise((r) => setTimeout(r, 5));

  beforeAll(async () => {
    receiver = await startScriptedReceiver();
    down = await startScriptedReceiver();
    down.setDefaultStatus(500);
    stack = await startWeftStack({ egressAllow: { webhooks: [receiver.url, down.url] }, temporalCallTimeoutMs: 10_000 });
    await createLumaIntegration(stack);
    await createLumaIntegration(stack, { key: stack.keys.prod });
    expect((await client().PATCH('/environment', { body: { webhook_url: `${receiver.url}/dev` } })).response.status).toBe(200);
    expect((await client(stack.keys.prod).PATCH('/environment', { body: { webhook_url: `${down.url}/prod` } })).response.status).toBe(200);
    signingKey = (await client().POST('/environment/webhook-signing-key/rotate')).data!.data.webhook_signing_key;

    start = new Date().toISOString();
    await tick();
    for (const c of delivered) await connect(c);
    await settled(
      delivered.map((c) => idOf[c]!),
      'delivered',
    );

    // Queued with no worker to run their workflows; by the time one runs, auth webhooks are off.
    await stack.stopWorker();
    for (const c of earlyFailed) await connect(c);
    await tick();
    mid = new Date().toISOString();
    await tick();
    for (const c of lateFailed) await connect(c);
    expect((await client().PATCH('/environment', { body: { send_auth_webhooks: false } })).response.status).toBe(200);
    await stack.startWorker();
    await settled(
      [...earlyFailed, ...lateFailed].map((c) => idOf[c]!),
      'failed',
    );
    expect((await client().PATCH('/environment', { body: { send_auth_webhooks: true } })).response.status).toBe(200);

    await connect('p-1', stack.keys.prod);
    await down.waitFor((r) => r.headers['webhook-id'] === idOf['p-1']);
  }, 120_000);
  afterAll(async () => {
    await stack?.shutdown();
    await receiver?.close();
    await down?.close();
  });

  test('lists the environment’s events newest first, page by page, with filters', async () => {
    const all = await walk({ type: 'auth' });
    expect(connectionsOf(all.events)).toEqual([...delivered, ...earlyFailed, ...lateFailed].reverse());
    const paged = await walk({ type: 'auth', limit: 3 });
    expect(paged.events).toEqual(all.events);
    expect(paged.pages.every((n) => n <= 3)).toBe(true);

    const d1 = all.events.find((e) => e.connection_id === 'd-1');
    expect(d1).toEqual({
      id: idOf['d-1'],
      type: 'auth',
      status: 'delivered',
      connection_id: 'd-1',
      created_at: expect.any(String),
      settled_at: expect.any(String),
      attempts: 0,
      last_error: null,
      replays: 0,
      payload: expect.objectContaining({ from: 'weft', type: 'auth', connectionId: 'd-1', providerConfigKey: 'luma', operation: 'creation', success: true }),
    });
    // Exactly the body the app received.
    expect(receiver.withId(idOf['d-1']!).map((r) => r.body)).toEqual([d1?.payload]);
    expect(all.events.find((e) => e.connection_id === 'f-1')).toMatchObject({
      status: 'failed',
      last_error: 'not sent: disabled',
      settled_at: expect.any(String),
    });
    expect(JSON.stringify(all.events)).not.toContain(LUMA_KEY);

    expect(connectionsOf((await walk({ type: 'auth', status: 'failed', limit: 2 })).events)).toEqual([...earlyFailed, ...lateFailed].reverse());
    expect(connectionsOf((await walk({ type: 'auth', status: 'delivered' })).events)).toEqual([...delivered].reverse());
    expect(connectionsOf((await walk({ connection_id: 'f-2', type: 'auth' })).events)).toEqual(['f-2']);
    expect(connectionsOf((await walk({ type: 'auth', from: mid })).events)).toEqual([...lateFailed].reverse());
    expect(connectionsOf((await walk({ type: 'auth', from: start, to: mid, status: 'failed' })).events)).toEqual([...earlyFailed].reverse());
    expect((await walk({ type: 'auth', status: 'pending' })).events).toEqual([]);
    // Another environment's list holds only its own.
    expect((await walk({ type: 'auth' }, stack.keys.prod)).events.map((e) => [e.connection_id, e.status])).toEqual([['p-1', 'pending']]);
    expect((await stack.api('GET', '/webhooks/events', { key: null })).status).toBe(401);
  });

  test('an event with its delivery attempts; 404 for an unknown id or another environment’s', async () => {
    const d1 = await eventOf(idOf['d-1']!);
    expect(d1.response.status).toBe(200);
    expect(d1.data).toMatchObject({ id: idOf['d-1'], status: 'delivered', connection_id: 'd-1' });
    expect(d1.data?.delivery_attempts).toEqual([
      {
        at: expect.any(String),
        target: 'primary',
        url: `${receiver.url}/dev`,
        attempt: 1,
        replay: 0,
        status: 200,
        error: null,
        duration_ms: expect.any(Number),
        response_excerpt: null,
      },
    ]);
    // Not sent: no attempt was made.
    expect((await eventOf(idOf['f-1']!)).data?.delivery_attempts).toEqual([]);

    const p1 = (await eventOf(idOf['p-1']!, stack.keys.prod)).data!;
    expect(p1).toMatchObject({ status: 'pending', attempts: expect.any(Number) });
    expect(p1.delivery_attempts.length).toBeGreaterThanOrEqual(1);
    expect(p1.delivery_attempts[0]).toMatchObject({ target: 'primary', url: `${down.url}/prod`, attempt: 1, status: 500, error: 'HTTP 500' });

    for (const [id, key] of [
      ['msg_unknown', stack.keys.dev],
      [idOf['d-1']!, stack.keys.prod],
      [idOf['p-1']!, stack.keys.dev],
    ] as const) {
      const res = await eventOf(id, key);
      expect(res.response.status).toBe(404);
      expect(res.error?.error.code).toBe('unknown_webhook_event');
    }
  });

  test('bad input is refused with a stable code and changes nothing', async () => {
    const before = await walk({ type: 'auth' });
    // Auth events only: the connections' syncs may send events of their own meanwhile.
    const authHits = () => receiver.received.filter((r) => r.body?.type === 'auth').length;
    const hits = authHits();
    for (const query of ['status=lost', 'type=nope', 'from=yesterday', 'limit=0', 'limit=1001', `from=${mid}&to=${start}`, 'colour=red']) {
      const res = await eventsUntyped(query);
      expect([query, res.status, res.body.error.code]).toEqual([query, 400, 'invalid_query_params']);
    }
    const badCursor = await events({ cursor: 'bm9wZQ' });
    expect([badCursor.response.status, badCursor.error?.error.code]).toEqual([400, 'invalid_cursor']);

    const now = new Date().toISOString();
    for (const body of [
      {},
      { from: start },
      { from: now, to: start },
      { from: now, to: now },
      { from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' },
      { from: start, to: now, type: 'nope' },
      { from: start, to: now, limit: 0 },
      { from: start, to: now, status: 'delivered' },
      { from: 'soon', to: now },
    ]) {
      const res = await bulkReplayUntyped(body);
      expect([JSON.stringify(body), res.status, res.body.error.code]).toEqual([JSON.stringify(body), 400, 'invalid_body']);
    }
    expect((await replay('x'.repeat(200))).error?.error.code).toBe('invalid_path_params');
    expect(await walk({ type: 'auth' })).toEqual(before);
    expect(authHits()).toBe(hits);
  });

  test('a replay sends the same id and body, freshly signed; a pending event is 409, an unknown one 404', async () => {
    const id = idOf['d-1']!;
    const [original] = receiver.withId(id);
    // A later second than the original's, so the signature must be a new one.
    await waitFor(async () => Math.floor(Date.now() / 1000) > Number(original!.headers['webhook-timestamp']), 2_000, 'the next second');

    const res = await replay(id);
    expect(res.response.status).toBe(202);
    expect(res.data).toEqual({ id, status: 'pending', replay: 1 });
    const again = await receiver.waitFor((r) => r.headers['webhook-id'] === id && r !== original);
    expect(again.raw).toBe(original!.raw);
    expect(verifies(signingKey, again)).toBe(true);
    expect(again.headers['webhook-signature']).not.toBe(original!.headers['webhook-signature']);
    expect(Number(again.headers['webhook-timestamp'])).toBeGreaterThan(Number(original!.headers['webhook-timestamp']));
    await settled([id], 'delivered');
    const detail = (await eventOf(id)).data!;
    expect(detail).toMatchObject({ status: 'delivered', replays: 1 });
    expect(detail.delivery_attempts.map((a) => [a.replay, a.attempt, a.status])).toEqual([
      [0, 1, 200],
      [1, 1, 200],
    ]);

    // A failed one, replayed, is delivered.
    const f1 = idOf['f-1']!;
    expect((await replay(f1)).data).toEqual({ id: f1, status: 'pending', replay: 1 });
    expect(verifies(signingKey, await receiver.waitFor((r) => r.headers['webhook-id'] === f1))).toBe(true);
    await settled([f1], 'delivered');

    const pending = await replay(idOf['p-1']!, stack.keys.prod);
    expect([pending.response.status, pending.error?.error.code]).toEqual([409, 'webhook_event_pending']);
    for (const [eventId, key] of [
      ['msg_unknown', stack.keys.dev],
      [idOf['p-1']!, stack.keys.dev],
      [idOf['f-2']!, stack.keys.prod],
    ] as const) {
      const res = await replay(eventId, key);
      expect([res.response.status, res.error?.error.code]).toEqual([404, 'unknown_webhook_event']);
    }
    expect(await statusOf(idOf['f-2']!)).toBe('failed');
  });

  test('a bulk replay sends the failed events of a time range, oldest first, a batch per call', async () => {
    const early = earlyFailed.slice(1).map((c) => idOf[c]!); // f-1 was replayed above
    const late = lateFailed.map((c) => idOf[c]!);
    const hitsBefore = new Map(delivered.map((c) => [c, receiver.withId(idOf[c]!).length]));

    const first = await bulkReplay({ from: start, to: mid, type: 'auth' });
    expect(first.response.status).toBe(200);
    expect(first.data).toEqual({ replayed: 2, ids: early, next_cursor: null });
    await settled(early, 'delivered');
    for (const id of early) expect(receiver.withId(id).every((r: ReceivedRequest) => verifies(signingKey, r))).toBe(true);
    // Outside the range: still failed. Delivered ones in it: not sent again.
    for (const id of late) expect(await statusOf(id)).toBe('failed');
    for (const c of delivered) expect(receiver.withId(idOf[c]!).length).toBe(hitsBefore.get(c));
    // Nothing failed is left in the range.
    expect((await bulkReplay({ from: start, to: mid })).data).toEqual({ replayed: 0, ids: [], next_cursor: null });

    // One per call: the cursor carries on where the last call stopped.
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let calls = 0; calls < 5; calls++) {
      const res = await bulkReplay({ from: start, to: new Date().toISOString(), limit: 1, ...(cursor ? { cursor } : {}) });
      expect(res.response.status).toBe(200);
      const batch = res.data!;
      expect(batch.ids.length).toBeLessThanOrEqual(1);
      ids.push(...batch.ids);
      cursor = batch.next_cursor ?? undefined;
      if (!cursor) break;
    }
    expect(ids).toEqual(late);
    await settled(late, 'delivered');
    expect((await walk({ type: 'auth', status: 'failed' })).events).toEqual([]);
    // prod's pending event is not dev's to replay, nor failed.
    expect(await statusOf(idOf['p-1']!, stack.keys.prod)).toBe('pending');
  });
});
