import { randomBytes } from 'node:crypto';
import { MongoClient, ObjectId, type CommandStartedEvent, type Document } from 'mongodb';
import { WebhookOutboxStore, type DueEvent, type NewWebhookEvent, type WebhookOutboxDoc } from '../../store/webhook-outbox';
import { WebhookDeliveryStore, type WebhookDeliveryDoc } from '../../store/webhook-deliveries';
import { sweepExpired, type ExpiryRule } from '../../store/ttl';
import { newWebhookId } from '../../webhooks/deliver';
import { useTestDatabase } from '../support/test-database';
import { testInfra } from '../support/weft-stack';

/**
 * Webhook events and their attempts on the real MongoDB-wire server: listing by scope and
 * time and the sweeper's due queue are `_id` ranges; the queue hands out what is due, once.
 */
describe('webhook events', () => {
  const testDb = useTestDatabase('weft_webhook_events');
  let outbox: WebhookOutboxStore;
  let deliveries: WebhookDeliveryStore;
  let rules: ExpiryRule[];
  const T0 = Date.parse('2026-11-01T00:00:00.000Z');

  const event = (n: number, over: Partial<NewWebhookEvent> = {}): NewWebhookEvent => {
    const created = new Date(T0 + n * 1000);
    return {
      _id: newWebhookId(),
      environment: 'dev',
      type: n % 3 === 0 ? 'sync' : 'auth',
      payload: { from: 'weft', type: n % 3 === 0 ? 'sync' : 'auth', connectionId: `conn|${n % 4}`, providerConfigKey: 'luma', n },
      gate: null,
      created_at: created,
      // Far off unless a test says otherwise, so these stay out of the due-queue tests' way.
      next_attempt_at: new Date(Date.UTC(2090, 0, 1)),
      lease_until: new Date(0),
      ...over,
    };
  };

  async function walk(q: Omit<Parameters<WebhookOutboxStore['list']>[0], 'cursor'>): Promise<WebhookOutboxDoc[]> {
    const out: WebhookOutboxDoc[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 500; i += 1) {
      const page = await outbox.list({ ...q, cursor });
      out.push(...page.events);
      if (page.nextCursor === null) return out;
      cursor = page.nextCursor;
    }
    throw new Error('cursor never ended');
  }
  const ns = (events: WebhookOutboxDoc[]) => events.map((e) => e.payload.n as number);
  const range = (from: number, to: number, keep: (n: number) => boolean = () => true) => Array.from({ length: to - from }, (_, i) => from + i).filter(keep);

  beforeAll(async () => {
    outbox = new WebhookOutboxStore(testDb.db());
    deliveries = new WebhookDeliveryStore(testDb.db());
    rules = [...(await outbox.ensureIndexes()), ...(await deliveries.ensureIndexes())];
  });

  describe('listing', () => {
    const ids: string[] = [];
    beforeAll(async () => {
      const events = range(0, 120).map((n) => event(n));
      events.push(event(500, { environment: 'prod' }));
      for (const e of [...events].sort(() => Math.random() - 0.5)) await outbox.add(e);
      ids.push(...events.map((e) => e._id));
      // n % 5 == 1 delivered, n % 5 == 2 failed, the rest pending.
      for (const [n, id] of ids.slice(0, 120).entries()) {
        if (n % 5 === 1) await outbox.settle(id, { status: 'delivered' });
        if (n % 5 === 2) await outbox.settle(id, { status: 'failed', error: 'HTTP 410' });
      }
    });

    test('an environment, newest first, page by page, each event once', async () => {
      const all = await walk({ environment: 'dev', limit: 17 });
      expect(ns(all)).toEqual(range(0, 120).reverse());
      const asc = await walk({ environment: 'dev', limit: 50, direction: 'asc' });
      expect(ns(asc)).toEqual(range(0, 120));
      expect(ns(await walk({ environment: 'prod', limit: 10 }))).toEqual([500]);
    });

    test('filters by type, connection id, status and time', async () => {
      expect(ns(await walk({ environment: 'dev', type: 'sync', limit: 7 }))).toEqual(range(0, 120, (n) => n % 3 === 0).reverse());
      expect(ns(await walk({ environment: 'dev', connectionId: 'conn|2', limit: 7 }))).toEqual(range(0, 120, (n) => n % 4 === 2).reverse());
      expect(ns(await walk({ environment: 'dev', connectionId: 'conn|2', type: 'sync', limit: 3 }))).toEqual(
        range(0, 120, (n) => n % 4 === 2 && n % 3 === 0).reverse(),
      );
      expect(ns(await walk({ environment: 'dev', status: 'failed', limit: 5 }))).toEqual(range(0, 120, (n) => n % 5 === 2).reverse());
      expect(ns(await walk({ environment: 'dev', status: 'delivered', limit: 5 }))).toEqual(range(0, 120, (n) => n % 5 === 1).reverse());
      expect(ns(await walk({ environment: 'dev', status: 'pending', type: 'auth', limit: 5 }))).toEqual(
        range(0, 120, (n) => n % 5 !== 1 && n % 5 !== 2 && n % 3 !== 0).reverse(),
      );
      const failedInWindow = await walk({
        environment: 'dev',
        status: 'failed',
        from: new Date(T0 + 30_000),
        to: new Date(T0 + 62_000),
        limit: 2,
        direction: 'asc',
      });
      expect(ns(failedInWindow)).toEqual([32, 37, 42, 47, 52, 57, 62]);
      await expect(outbox.list({ environment: 'dev', limit: 5, cursor: 'bm9wZQ' })).rejects.toMatchObject({ code: 'invalid_cursor' });
    });

    test('a replayed failed event is pending again and leaves the failed list', async () => {
      const id = ids[2];
      const at = new Date(T0 + 10 * 86_400_000);
      const requeued = await outbox.requeue('dev', id, at);
      expect(requeued).toMatchObject({ outcome: 'requeued', event: { _id: id, status: 'pending', rounds: 0, replay: 1, replays: [{ n: 1, at }] } });
      expect(await outbox.requeue('dev', id)).toEqual({ outcome: 'pending' }); // already pending
      expect(await outbox.requeue('prod', ids[7])).toEqual({ outcome: 'unknown' }); // not this environment's
      expect(ns(await walk({ environment: 'dev', status: 'failed', to: new Date(T0 + 10_000), limit: 5 }))).toEqual([7]);

      // Failed again, it is listed as failed again; its next replay is number 2.
      await outbox.settle(id, { status: 'failed', error: 'HTTP 410' });
      expect(ns(await walk({ environment: 'dev', status: 'failed', to: new Date(T0 + 10_000), limit: 5 }))).toEqual([7, 2]);
      expect(await outbox.requeue('dev', id, at)).toMatchObject({ outcome: 'requeued', event: { replay: 2 } });
    });

    test('two replays of one event at once: one takes it, the others find it pending', async () => {
      const id = ids[12];
      const results = await Promise.all([outbox.requeue('dev', id), outbox.requeue('dev', id), outbox.requeue('dev', id)]);
      expect(results.filter((r) => r.outcome === 'requeued')).toEqual([{ outcome: 'requeued', event: expect.objectContaining({ _id: id, replay: 1 }) }]);
      expect(results.filter((r) => r.outcome === 'pending')).toHaveLength(2);
      expect(await outbox.get(id)).toMatchObject({ status: 'pending', replay: 1, replays: [{ n: 1 }] });
    });

    test('a replay whose process died before updating its event is taken over after a minute, under the same number', async () => {
      const keys = testDb.db().collection<{ _id: string; at: Date }>('webhook_event_keys');
      const [young, old] = [ids[52]!, ids[57]!];
      const now = new Date();
      // As a process leaves them when it dies between taking replay 1 and updating the event.
      await keys.insertMany([
        { _id: `#replay|${encodeURIComponent(young)}|1`, at: new Date(now.getTime() - 5_000) },
        { _id: `#replay|${encodeURIComponent(old)}|1`, at: new Date(now.getTime() - 120_000) },
      ]);
      expect(await outbox.requeue('dev', young, now)).toEqual({ outcome: 'pending' }); // may still be in progress
      expect(await outbox.requeue('dev', old, now)).toMatchObject({ outcome: 'requeued', event: { _id: old, replay: 1 } });
      expect(await outbox.get(young)).toMatchObject({ status: 'failed' });
    });

    test('a batch is requeued in a few requests: settled ones of the environment only, each as its next replay', async () => {
      // n = 17, 22, 27: failed; 21: delivered; 23: pending; prod's event; one unknown; 17 twice.
      const batch = [ids[17], ids[21], ids[22], ids[23], ids[27], ids[17], ids[120], 'msg_unknown'];
      const before = await outbox.requeue('dev', ids[27]);
      expect(before.outcome).toBe('requeued');
      await outbox.settle(ids[27], { status: 'failed', error: 'HTTP 500' }); // replayed once, failed again
      const at = new Date(T0 + 20 * 86_400_000);
      const requeued = await outbox.requeueMany('dev', batch, at);
      expect(requeued.map((e) => [e.payload.n, e.replay, e.status])).toEqual([
        [17, 1, 'pending'],
        [21, 1, 'pending'],
        [22, 1, 'pending'],
        [27, 2, 'pending'],
      ]);
      expect(await outbox.get(ids[27])).toMatchObject({ replays: [{ n: 1 }, { n: 2, at }], rounds: 0, settled_at: null });
      expect(await outbox.get(ids[120])).toMatchObject({ environment: 'prod', status: 'pending' });
      // Out of the failed list; due at `at`; a second call finds nothing settled.
      const failed = ns(await walk({ environment: 'dev', status: 'failed', from: new Date(T0 + 15_000), to: new Date(T0 + 30_000), limit: 50 }));
      expect(failed.filter((n) => [17, 22, 27].includes(n))).toEqual([]);
      expect((await outbox.due(at, 1_000)).map((d) => d.id)).toEqual(expect.arrayContaining([ids[17], ids[21], ids[22], ids[27]]));
      expect(await outbox.requeueMany('dev', batch, at)).toEqual([]);

      // Two bulk replays and a single one racing over the same events: each event is taken by one of them.
      const racing = [32, 37, 42, 47].map((n) => ids[n]!);
      const [a, b, c] = await Promise.all([
        outbox.requeueMany('dev', racing),
        outbox.requeueMany('dev', [...racing].reverse()),
        outbox.requeue('dev', racing[0]!),
      ]);
      const winners = [...a, ...b, ...(c.outcome === 'requeued' ? [c.event] : [])].map((e) => e._id);
      expect([...winners].sort()).toEqual([...racing].sort());
      for (const id of racing) expect(await outbox.get(id)).toMatchObject({ status: 'pending', replay: 1, replays: [{ n: 1 }] });
    });
  });

  describe('the due queue', () => {
    const LEASE = 120_000;
    const env = 'queue';
    const at = (s: number) => new Date(T0 + 100 * 86_400_000 + s * 1000);

    test('hands out what is due and not held, oldest first; a claim holds it until the lease ends', async () => {
      const a = event(1, { environment: env, next_attempt_at: at(10), created_at: at(0) });
      const b = event(2, { environment: env, next_attempt_at: at(5), created_at: at(0) });
      const held = event(3, { environment: env, next_attempt_at: at(0), created_at: at(0), lease_until: at(0 + LEASE / 1000) });
      for (const e of [a, b, held]) await outbox.add(e);
      const mine = (due: DueEvent[]) => due.map((d) => d.id).filter((id) => [a._id, b._id, held._id].includes(id));

      expect(mine(await outbox.due(at(4), 50))).toEqual([]);
      expect(mine(await outbox.due(at(10), 50))).toEqual([b._id, a._id]);

      // Three sweepers race for the same event: one gets it.
      const [dueB] = (await outbox.due(at(10), 50)).filter((d) => d.id === b._id);
      const claims = await Promise.all([outbox.claim(dueB, at(10), LEASE), outbox.claim(dueB, at(10), LEASE), outbox.claim(b._id, at(10), LEASE)]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(mine(await outbox.due(at(11), 50))).toEqual([a._id]);
      // Its process died: when the lease runs out, it is due again (and the first-round hold too).
      expect(mine(await outbox.due(at(10 + LEASE / 1000), 50))).toEqual([a._id, held._id, b._id]);

      // A failed round moves it to its retry time; a settled one leaves the queue.
      await outbox.retryAt(b._id, at(500), 'HTTP 503');
      await outbox.settle(a._id, { status: 'delivered' });
      expect(mine(await outbox.due(at(499), 50))).toEqual([held._id]);
      expect(mine(await outbox.due(at(500), 50))).toEqual([held._id, b._id]);
      expect(await outbox.get(b._id)).toMatchObject({ rounds: 1, last_error: 'HTTP 503', status: 'pending' });
      expect(await outbox.claim(a._id, at(600), LEASE)).toBeNull();
    });

    test('of many sweepers racing over many events, exactly one takes each', async () => {
      const events = range(0, 30).map((n) => event(n, { environment: 'race', next_attempt_at: at(2000), created_at: at(2000) }));
      for (const e of events) await outbox.add(e);
      const raceIds = new Set(events.map((e) => e._id));
      const sweep = async () => {
        const due = (await outbox.due(at(2001), 500)).filter((d) => raceIds.has(d.id));
        return (await Promise.all(due.map((d) => outbox.claim(d, at(2001), LEASE)))).filter((d): d is WebhookOutboxDoc => d !== null).map((d) => d._id);
      };
      const taken = (await Promise.all([sweep(), sweep(), sweep(), sweep()])).flat();
      expect(taken.sort()).toEqual([...raceIds].sort());
    });

    test('keys left by an interrupted move or a vanished event are cleared, not handed out', async () => {
      const e = event(4, { environment: env, next_attempt_at: at(1000), created_at: at(1000) });
      await outbox.add(e);
      const keys = testDb.db().collection<{ _id: string }>('webhook_event_keys');
      // A claim that wrote its new key and then lost the race, and a due key whose event never got written.
      await keys.insertMany([{ _id: `#due|${at(1001).toISOString()}|${e._id}` }, { _id: `#due|${at(1000).toISOString()}|msg_never_written` }]);
      const ids = async (now: Date) => (await outbox.due(now, 50)).map((d) => d.id);
      expect((await ids(at(1001))).filter((id) => id === e._id)).toHaveLength(1);
      expect((await ids(at(1001))).filter((id) => id === e._id)).toHaveLength(1);
      await outbox.due(at(1200), 50);
      expect(await keys.countDocuments({ _id: { $in: [`#due|${at(1001).toISOString()}|${e._id}`, `#due|${at(1000).toISOString()}|msg_never_written`] } })).toBe(
        0,
      );
      expect(await ids(at(1200))).toContain(e._id);
    });
  });

  test('attempts of one event are one range, in order, for its environment only', async () => {
    const id = newWebhookId();
    const other = newWebhookId();
    const attempt = (n: number, over: Partial<WebhookDeliveryDoc> = {}): WebhookDeliveryDoc => ({
      event_id: id,
      type: 'auth',
      environment: 'dev',
      target: n % 2 ? 'secondary' : 'primary',
      url: 'https://app.example.test/hooks',
      attempt: Math.floor(n / 2) + 1,
      status: 503,
      error: 'HTTP 503',
      duration_ms: 5,
      created_at: new Date(T0 + Math.floor(n / 2) * 1000),
      ...over,
    });
    for (const n of [3, 0, 2, 1]) await deliveries.record(attempt(n));
    await deliveries.record(attempt(0, { event_id: other }));
    await deliveries.record(attempt(5, { environment: 'prod' }));
    const listed = await deliveries.listForEvent('dev', id);
    expect(listed.map((a) => [a.attempt, a.target])).toEqual([
      [1, 'primary'],
      [1, 'secondary'],
      [2, 'primary'],
      [2, 'secondary'],
    ]);
    expect(listed[0]).not.toHaveProperty('_id');
  });

  test('reads are _id ranges on the keys, and _id lookups on the events', async () => {
    const client = new MongoClient(testInfra().mongodbUri, { retryWrites: false, monitorCommands: true });
    const seen: Array<{ name: string; coll: string; filter: Record<string, any>; sort?: unknown; limit?: number }> = [];
    client.on('commandStarted', (ev: CommandStartedEvent) => {
      const c = ev.command;
      if (ev.commandName === 'find') seen.push({ name: 'find', coll: c.find, filter: c.filter, sort: c.sort, limit: c.limit });
      if (ev.commandName === 'findAndModify') seen.push({ name: 'findAndModify', coll: c.findAndModify, filter: c.query });
      if (ev.commandName === 'delete') for (const d of c.deletes) seen.push({ name: 'delete', coll: c.delete, filter: d.q });
      if (ev.commandName === 'update') for (const u of c.updates) seen.push({ name: 'update', coll: c.update, filter: u.q });
    });
    try {
      await client.connect();
      const db = client.db(testDb.db().databaseName);
      const watched = new WebhookOutboxStore(db);
      const e = event(7, { environment: 'watched', next_attempt_at: new Date(T0 + 7_000) });
      await watched.add(e);
      await watched.list({ environment: 'dev', status: 'failed', type: 'auth', limit: 3 });
      await watched.list({ environment: 'dev', connectionId: 'conn|1', from: new Date(T0), to: new Date(T0 + 60_000), limit: 3 });
      await watched.due(new Date(T0 + 10_000), 10);
      await watched.claim(e._id, new Date(T0 + 10_000), 60_000);
      await watched.retryAt(e._id, new Date(T0 + 20_000), 'HTTP 500');
      await watched.settle(e._id, { status: 'failed', error: 'HTTP 500' });
      await watched.sweepExpired(new Date(T0 - 1));
      await new WebhookDeliveryStore(db).listForEvent('dev', e._id);
      expect(seen.filter((s) => s.name === 'find').length).toBeGreaterThanOrEqual(6);
      for (const s of seen) {
        expect(Object.keys(s.filter)).toEqual(expect.arrayContaining(['_id']));
        const id = s.filter._id;
        if (s.name === 'find' && s.coll !== 'webhook_outbox') {
          // A range with both bounds, on _id alone, sorted on _id, limited.
          expect(Object.keys(s.filter)).toEqual(['_id']);
          expect(Object.keys(id).sort()).toHaveLength(2);
          expect(Object.keys(id).some((k) => /^\$gte?$/.test(k)) && Object.keys(id).some((k) => /^\$lte?$/.test(k))).toBe(true);
          const sort = s.sort instanceof Map ? Object.fromEntries(s.sort) : (s.sort as object);
          expect(Object.keys(sort)).toEqual(['_id']);
          expect(s.limit).toBeGreaterThan(0);
        } else {
          // Events, and every write: by _id (equality or $in), whatever else the filter checks.
          expect(typeof id === 'string' || (typeof id === 'object' && Array.isArray(id.$in))).toBe(true);
        }
      }
    } finally {
      await client.close();
    }
  });

  test('retention deletes expired events with their keys, and expired attempts', async () => {
    if (rules.every((r) => r.native)) return; // MongoDB's TTL monitor deletes on its own schedule
    const db = testDb.db();
    const old = event(900, { environment: 'retention', created_at: new Date(T0 - 40 * 86_400_000) });
    const recent = event(901, { environment: 'retention' });
    await outbox.add(old);
    await outbox.add(recent);
    await outbox.settle(old._id, { status: 'failed', error: 'gone' });
    await deliveries.record({
      event_id: old._id,
      type: 'auth',
      environment: 'retention',
      target: 'primary',
      url: 'u',
      attempt: 1,
      status: 410,
      error: 'HTTP 410',
      duration_ms: 1,
      created_at: old.created_at,
    });
    const removed = await sweepExpired(rules, T0 - 5 * 86_400_000);
    expect(removed).toBeGreaterThanOrEqual(2);
    expect(await outbox.get(old._id)).toBeNull();
    expect(await outbox.get(recent._id)).not.toBeNull();
    expect(await deliveries.listForEvent('retention', old._id)).toEqual([]);
    expect(await db.collection('webhook_event_keys').countDocuments({ _id: { $regex: old._id } } as never)).toBe(0);
    expect(await db.collection('webhook_deliveries').countDocuments({ event_id: old._id })).toBe(0);
    expect(ns(await walk({ environment: 'retention', limit: 10 }))).toEqual([901]);
  });

  test('events and attempts written by earlier versions are taken in once, and delivered', async () => {
    const name = `weft_webhook_events_old_${randomBytes(4).toString('hex')}`;
    const db = testDb.client().db(name);
    try {
      const id = newWebhookId();
      const past = new Date(Date.now() - 60_000);
      // What an earlier version left: a pending event without status, and an ObjectId-keyed attempt.
      await db.collection<Document & { _id: string }>('webhook_outbox').insertOne({
        _id: id,
        environment: 'dev',
        type: 'auth',
        payload: { connectionId: 'c1' },
        gate: null,
        created_at: past,
        rounds: 1,
        next_attempt_at: past,
        lease_until: new Date(0),
        last_error: 'HTTP 503',
      });
      await db.collection('webhook_deliveries').insertOne({
        _id: new ObjectId(),
        event_id: id,
        type: 'auth',
        environment: 'dev',
        target: 'primary',
        url: 'u',
        attempt: 1,
        status: 503,
        error: 'HTTP 503',
        duration_ms: 3,
        created_at: past,
      });
      const a = new WebhookOutboxStore(db);
      const b = new WebhookOutboxStore(db);
      await Promise.all([a.ensureIndexes(), b.ensureIndexes(), new WebhookDeliveryStore(db).ensureIndexes()]);
      expect((await a.due(new Date(), 10)).map((d) => d.id)).toEqual([id]);
      expect((await a.list({ environment: 'dev', connectionId: 'c1', limit: 10 })).events.map((e) => e._id)).toEqual([id]);
      expect(await new WebhookDeliveryStore(db).listForEvent('dev', id)).toMatchObject([{ attempt: 1, status: 503 }]);
      expect(await a.claim(id, new Date(), 60_000)).toMatchObject({ _id: id, status: 'pending', rounds: 1 });
    } finally {
      await db.dropDatabase().catch(() => undefined);
    }
  });
});
