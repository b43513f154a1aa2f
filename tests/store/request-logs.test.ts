import { randomBytes } from 'node:crypto';
import { MongoClient, ObjectId, type CommandStartedEvent } from 'mongodb';
import { RequestLogStore, type RequestLogDoc, type RequestLogEntry } from '../../store/request-logs';
import { sweepExpired, type ExpiryRule } from '../../store/ttl';
import { WeftError } from '../../common/errors';
import { useTestDatabase } from '../support/test-database';
import { testInfra } from '../support/weft-stack';

/**
 * The request log on the real MongoDB-wire server: every read is one scope's `_id` range,
 * pages follow each other without gaps or repeats, and retention still deletes.
 */
describe('RequestLogStore', () => {
  const testDb = useTestDatabase('weft_request_logs');
  let store: RequestLogStore;
  let rules: ExpiryRule[];
  const T0 = Date.parse('2026-11-01T00:00:00.000Z');
  const written: RequestLogDoc[] = [];

  const entry = (n: number, over: Partial<RequestLogDoc> = {}): RequestLogDoc => ({
    // Every third entry shares its millisecond with the one before: ties are ordered by suffix.
    at: new Date(T0 + Math.floor(n / 3) * 2 * 1000 + (n % 3 === 2 ? 0 : n % 3)),
    environment: 'dev',
    connection: `conn-${n % 4}`,
    connection_id: `user|${n % 4}`, // a `|` inside a part must not bleed into another scope
    integration: n % 2 === 0 ? 'github' : 'luma',
    operation: n % 5 === 0 ? 'action:create-issue' : 'sync:issues',
    run_id: `run-${n % 3}`,
    method: 'GET',
    url: `https://api.example.test/items?page=${n}`,
    status: n % 7 === 0 ? 500 : 200,
    duration_ms: n,
    attempt: 1,
    rate_limit_wait_ms: 0,
    error: null,
    ...over,
  });

  const newestFirst = (a: RequestLogEntry | RequestLogDoc, b: RequestLogEntry | RequestLogDoc) => b.at.getTime() - a.at.getTime();

  /** Every page of a query, following cursors; fails on a cursor loop. */
  async function walk(q: Omit<Parameters<RequestLogStore['range']>[0], 'cursor'>): Promise<{ entries: RequestLogEntry[]; pages: number }> {
    const entries: RequestLogEntry[] = [];
    let cursor: string | undefined;
    for (let pages = 1; pages < 500; pages += 1) {
      const page = await store.range({ ...q, cursor });
      entries.push(...page.entries);
      if (page.nextCursor === null) return { entries, pages };
      cursor = page.nextCursor;
    }
    throw new Error('cursor never ended');
  }

  beforeAll(async () => {
    store = new RequestLogStore(testDb.db(), 14);
    rules = await store.ensureIndexes();
    for (let n = 0; n < 240; n += 1) written.push(entry(n));
    written.push(entry(1000, { environment: 'prod', connection_id: 'user|1' }));
    written.push(entry(1001, { environment: 'dev|a', connection_id: null })); // an environment whose name looks like a scope
    // Out of time order, several at once: the order comes from the keys, not from insertion.
    const shuffled = [...written].sort(() => Math.random() - 0.5);
    for (let i = 0; i < shuffled.length; i += 20) await Promise.all(shuffled.slice(i, i + 20).map((e) => store.insert(e)));
  });

  test('an environment reads newest first, page by page, each entry once', async () => {
    const dev = written.filter((e) => e.environment === 'dev');
    const { entries, pages } = await walk({ environment: 'dev', limit: 25 });
    expect(pages).toBe(Math.ceil(dev.length / 25));
    expect(entries.map((e) => e.url).sort()).toEqual(dev.map((e) => e.url).sort());
    expect(new Set(entries.map((e) => e.id)).size).toBe(dev.length);
    for (let i = 1; i < entries.length; i += 1) expect(newestFirst(entries[i - 1], entries[i])).toBeLessThanOrEqual(0);
    // Oldest first gives the same entries in exactly the reverse order.
    const asc = await walk({ environment: 'dev', limit: 40, direction: 'asc' });
    expect(asc.entries.map((e) => e.id)).toEqual(entries.map((e) => e.id).reverse());
    // Nothing of another environment, even one whose name contains the separator.
    expect((await store.range({ environment: 'prod', limit: 10 })).entries.map((e) => e.duration_ms)).toEqual([1000]);
    expect((await store.range({ environment: 'dev|a', limit: 10 })).entries.map((e) => e.duration_ms)).toEqual([1001]);
  });

  test('connection, integration, operation and time filters', async () => {
    const conn = await walk({ environment: 'dev', connectionId: 'user|1', limit: 7 });
    expect(conn.entries.map((e) => e.duration_ms).sort((a, b) => a - b)).toEqual(
      written.filter((e) => e.environment === 'dev' && e.connection_id === 'user|1').map((e) => e.duration_ms),
    );
    // `user|1` is not a prefix scope of `user|10`-like ids: only exact connection ids match.
    expect(conn.entries.every((e) => e.connection_id === 'user|1')).toBe(true);

    const luma = await walk({ environment: 'dev', integration: 'luma', limit: 50 });
    expect(luma.entries).toHaveLength(120);
    expect(luma.entries.every((e) => e.integration === 'luma')).toBe(true);

    const both = await walk({ environment: 'dev', connectionId: 'user|2', integration: 'github', operation: 'action:create-issue', limit: 3 });
    const expected = written.filter(
      (e) => e.environment === 'dev' && e.connection_id === 'user|2' && e.integration === 'github' && e.operation === 'action:create-issue',
    );
    expect(expected.length).toBeGreaterThan(3);
    expect(both.entries.map((e) => e.duration_ms).sort((a, b) => a - b)).toEqual(expected.map((e) => e.duration_ms));

    const failed = await walk({ environment: 'dev', match: (e) => (e.status ?? 0) >= 500, limit: 10 });
    expect(failed.entries).toHaveLength(written.filter((e) => e.environment === 'dev' && e.status === 500).length);

    // Inclusive bounds, to the millisecond.
    const from = new Date(T0 + 20_000);
    const to = new Date(T0 + 60_001);
    const window = await walk({ environment: 'dev', from, to, limit: 8 });
    const inWindow = written.filter((e) => e.environment === 'dev' && e.at >= from && e.at <= to);
    expect(inWindow.some((e) => e.at.getTime() === to.getTime())).toBe(true);
    expect(window.entries.map((e) => e.duration_ms).sort((a, b) => a - b)).toEqual(inWindow.map((e) => e.duration_ms));
  });

  test('a rare filter ends a page early with a cursor instead of reading the whole scope', async () => {
    const page = await store.range({ environment: 'dev', match: (e) => e.duration_ms === 3, limit: 5, maxExamined: 100 });
    // Entry 3 is among the oldest: the first 100 newest do not hold it.
    expect(page.entries).toEqual([]);
    expect(page.nextCursor).not.toBeNull();
    const rest = await walk({ environment: 'dev', match: (e) => e.duration_ms === 3, limit: 5, maxExamined: 100 });
    expect(rest.entries.map((e) => e.duration_ms)).toEqual([3]);
  });

  test('a cursor that this store did not hand out is refused with a stable code', async () => {
    await expect(store.range({ environment: 'dev', limit: 5, cursor: Buffer.from('x"}]').toString('base64url') })).rejects.toMatchObject({
      code: 'invalid_cursor',
      status: 400,
    });
    await expect(store.range({ environment: 'dev', limit: 5, cursor: 'not base64 !' })).rejects.toBeInstanceOf(WeftError);
  });

  test('every read is an _id range sorted on _id with a limit (what FerretDB answers from its index)', async () => {
    const client = new MongoClient(testInfra().mongodbUri, { retryWrites: false, monitorCommands: true });
    const finds: Array<Record<string, unknown>> = [];
    client.on('commandStarted', (ev: CommandStartedEvent) => {
      if (ev.commandName === 'find' && ev.command.find === 'request_logs') finds.push(ev.command as Record<string, unknown>);
    });
    try {
      await client.connect();
      const watched = new RequestLogStore(client.db(testDb.db().databaseName), 14);
      await watched.range({ environment: 'dev', limit: 10 });
      const second = await watched.range({
        environment: 'dev',
        connectionId: 'user|3',
        integration: 'luma',
        from: new Date(T0),
        to: new Date(T0 + 100_000),
        limit: 2,
      });
      await watched.range({ environment: 'dev', operation: 'sync:issues', cursor: second.nextCursor ?? undefined, direction: 'asc', limit: 30 });
      await watched.sweepExpired(new Date(T0 - 1));
      expect(finds.length).toBeGreaterThanOrEqual(4);
      for (const cmd of finds) {
        expect(Object.keys(cmd.filter as object)).toEqual(['_id']);
        const bounds = (cmd.filter as { _id: Record<string, unknown> })._id;
        expect(Object.keys(bounds).sort()).toEqual(expect.arrayContaining([expect.stringMatching(/^\$gte?$/), expect.stringMatching(/^\$lte?$/)]));
        expect(Object.keys(bounds)).toHaveLength(2);
        expect(Object.values(bounds).every((v) => typeof v === 'string')).toBe(true);
        // The driver sends the sort as a Map (key order matters).
        const sort = cmd.sort instanceof Map ? Object.fromEntries(cmd.sort) : (cmd.sort as object);
        expect(Object.keys(sort)).toEqual(['_id']);
        expect(cmd.limit).toBeGreaterThan(0);
      }
    } finally {
      await client.close();
    }
  });

  test('retention deletes expired entries from every scope, through the expiry keys', async () => {
    const db = testDb.db();
    const now = T0 + 14 * 86_400_000 + 100_000; // entries before T0 + 100 s have expired
    const before = await db.collection('request_logs').countDocuments();
    const expired = written.filter((e) => e.at.getTime() < T0 + 100_000);
    expect(expired.length).toBeGreaterThan(0);

    const removed = await sweepExpired(rules, now);
    if (rules.every((r) => r.native)) return; // MongoDB's TTL monitor deletes on its own schedule
    expect(removed).toBeGreaterThan(0);

    const left = await walk({ environment: 'dev', limit: 100 });
    expect(left.entries.every((e) => e.at.getTime() >= T0 + 100_000)).toBe(true);
    expect(left.entries).toHaveLength(written.filter((e) => e.environment === 'dev' && e.at.getTime() >= T0 + 100_000).length);
    const conn = await walk({ environment: 'dev', connectionId: 'user|1', limit: 100 });
    expect(conn.entries.every((e) => e.at.getTime() >= T0 + 100_000)).toBe(true);
    // Nothing of an expired entry is left behind: its copies and its expiry key went together.
    expect(await db.collection('request_logs').countDocuments({ at: { $lt: new Date(T0 + 100_000) } })).toBe(0);
    expect(before - (await db.collection('request_logs').countDocuments())).toBe(removed);
    expect(await sweepExpired(rules, now)).toBe(0);
  });

  test('appended entries are written together in one insert within a few ms, keyed by their own time; flush() writes what is left', async () => {
    const name = `weft_request_logs_append_${randomBytes(4).toString('hex')}`;
    const client = new MongoClient(testInfra().mongodbUri, { retryWrites: false, monitorCommands: true });
    const inserts: number[] = [];
    client.on('commandStarted', (ev: CommandStartedEvent) => {
      if (ev.commandName === 'insert' && ev.command.insert === 'request_logs') inserts.push((ev.command.documents as unknown[]).length);
    });
    try {
      await client.connect();
      const db = client.db(name);
      const appending = new RequestLogStore(db, 14);
      await appending.ensureIndexes();
      inserts.length = 0;
      const failures: unknown[] = [];
      const onFailure = (err: unknown) => failures.push(err);
      const at = new Date(T0 + 1_000);
      // Thirty entries of one millisecond, appended as thirty concurrent calls would log them.
      for (let n = 0; n < 30; n += 1) appending.append(entry(n, { at, url: `https://api.example.test/same-ms?n=${n}` }), onFailure);
      const deadline = Date.now() + 2_000;
      while (inserts.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      await appending.flush();
      expect(inserts).toHaveLength(1);
      const all = await new RequestLogStore(db, 14).range({ environment: 'dev', limit: 100, direction: 'asc' });
      expect(all.entries.map((e) => e.url).sort()).toEqual(Array.from({ length: 30 }, (_, n) => `https://api.example.test/same-ms?n=${n}`).sort());
      // Keyed by the time of the call, not of the write.
      expect(all.entries.every((e) => e.at.getTime() === at.getTime())).toBe(true);
      // Each entry is in its connection's scope too, as insert() writes it.
      expect((await appending.range({ environment: 'dev', connectionId: 'user|1', limit: 100 })).entries).toHaveLength(
        Array.from({ length: 30 }, (_, n) => n).filter((n) => n % 4 === 1).length,
      );

      // Where the server has no TTL, the batch has one expiry key: past the retention, the sweep
      // deletes every copy of its entries and the key itself.
      const rulesAppended = await appending.ensureIndexes();
      if (!rulesAppended[0].native) {
        expect(inserts[0]).toBe(30 * 3 + 1);
        expect(await sweepExpired([rulesAppended[0]], T0 + 1_000 + 14 * 86_400_000 + 1)).toBe(30 * 3 + 1);
        expect(await db.collection('request_logs').countDocuments()).toBe(0);
      }

      // flush() right after append() writes at once, without waiting for the timer.
      appending.append(entry(99, { url: 'https://api.example.test/flushed' }), onFailure);
      await appending.flush();
      expect((await appending.range({ environment: 'dev', limit: 1, match: (e) => e.url.endsWith('/flushed') })).entries).toHaveLength(1);
      expect(failures).toEqual([]);

      // A batch that cannot be written is reported once per handler, with how many entries it held.
      await client.close();
      const reports: Array<[unknown, number]> = [];
      const report = (err: unknown, n: number) => reports.push([err, n]);
      appending.append(entry(100), report);
      appending.append(entry(101), report);
      await appending.flush();
      expect(reports).toHaveLength(1);
      expect(reports[0][1]).toBe(2);
    } finally {
      await client.connect();
      await client
        .db(name)
        .dropDatabase()
        .catch(() => undefined);
      await client.close();
    }
  });

  test('an entry is stored as one JSON string beside its time; entries of the earlier field-per-field layout read the same', async () => {
    const name = `weft_request_logs_json_${randomBytes(4).toString('hex')}`;
    const db = testDb.client().db(name);
    try {
      const logs = new RequestLogStore(db, 14);
      await logs.ensureIndexes();
      const current = entry(20, { at: new Date(T0 + 2_000), provider_request_id: 'req-20' });
      await logs.insert(current, 'new0');
      const stored = await db.collection('request_logs').findOne({ _id: `dev|a|${new Date(T0 + 2_000).toISOString()}|new0` } as never);
      expect(Object.keys(stored ?? {}).sort()).toEqual(['_id', 'at', 'json']);
      expect(stored?.at).toEqual(current.at);
      // Written by the previous version: every field its own, the tail in `entry`.
      const tail = `${new Date(T0 + 1_000).toISOString()}|old0`;
      const earlier = entry(21, { at: new Date(T0 + 1_000) });
      await db
        .collection('request_logs')
        .insertMany(
          ['dev|a|', 'dev|i|luma|', `dev|c|${encodeURIComponent('user|1')}|`].map((prefix) => ({ _id: prefix + tail, entry: tail, ...earlier })) as never[],
        );
      const page = await logs.range({ environment: 'dev', limit: 10 });
      expect(page.entries).toEqual([
        { ...current, id: `${current.at.toISOString()}|new0` },
        { ...earlier, id: tail },
      ]);
      expect((await logs.range({ environment: 'dev', connectionId: 'user|1', operation: 'sync:issues', limit: 10 })).entries.map((e) => e.id)).toEqual([tail]);
    } finally {
      await db.dropDatabase().catch(() => undefined);
    }
  });

  test('entries written by earlier versions are taken into the keyed layout once', async () => {
    const name = `weft_request_logs_old_${randomBytes(4).toString('hex')}`;
    const db = testDb.client().db(name);
    try {
      const old = db.collection('request_logs');
      const legacy = { ...entry(7), at: new Date(T0 + 5_000) };
      await old.insertMany([
        { _id: new ObjectId(), ...legacy },
        { _id: new ObjectId(), ...entry(8, { connection_id: null }) },
      ]);
      const a = new RequestLogStore(db, 14);
      const b = new RequestLogStore(db, 14);
      await Promise.all([a.ensureIndexes(), b.ensureIndexes()]); // two processes starting together
      const page = await a.range({ environment: 'dev', limit: 10 });
      expect(page.entries.map((e) => e.duration_ms).sort()).toEqual([7, 8]);
      expect((await a.range({ environment: 'dev', connectionId: 'user|3', limit: 10 })).entries.map((e) => e.url)).toEqual([legacy.url]);
      expect(await old.countDocuments({ _id: { $type: 'objectId' } })).toBe(0);
      const rulesOld = await a.ensureIndexes();
      if (!rulesOld[0].native) {
        await sweepExpired(rulesOld, T0 + 15 * 86_400_000);
        expect((await a.range({ environment: 'dev', limit: 10 })).entries).toEqual([]);
      }
    } finally {
      await db.dropDatabase().catch(() => undefined);
    }
  });
});
