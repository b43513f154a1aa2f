import { MongoClient, type CommandStartedEvent, type Document } from 'mongodb';
import { decodeRecordCursor as decodeCursor } from '../../store/record-cursor';
import { SCAN_FACTOR, type RecordPage } from '../../store/record-pages';
import { RecordStore, recordKey, type PageQuery, type RecordDoc, type RecordScope } from '../../store/records';
import { useTestDatabase } from '../support/test-database';
import { testInfra } from '../support/weft-stack';

/**
 * Reading records through the per-scope change feed (store/record-feed.ts,
 * store/record-pages.ts), on the real MongoDB-wire server (FerretDB by default): order,
 * cursor stability while a writer writes, filters, superseded entries, the backfill of a
 * scope stored before the feed, and that a page reads nothing but `_id` ranges and points.
 */
describe('RecordStore pages', () => {
  const testDb = useTestDatabase('weft_record_pages');
  const scopeOf = (connection: string, variant = 'base'): RecordScope => ({ environment: 'dev', connection, model: 'File', variant });
  const rec = (id: string, extra: Record<string, unknown> = {}) => ({ id, data: { id, ...extra } });
  const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `f${String(from + i).padStart(5, '0')}`);
  const db = () => testDb.db();

  /** Every page of a query, following next positions; the records of each page. */
  async function readAll(store: RecordStore, scope: RecordScope, q: Omit<PageQuery, 'after'>, between?: (page: number) => Promise<void>) {
    const pages: RecordPage[] = [];
    let after: PageQuery['after'];
    do {
      const page = await store.list(scope, { ...q, after });
      pages.push(page);
      after = page.next ?? undefined;
      if (between) await between(pages.length);
    } while (after);
    return { pages, records: pages.flatMap((p) => p.records) };
  }

  /** Feed entries stored under a key prefix (entries are kept in packs: see store/record-feed.ts). */
  async function feedEntries(prefix: string): Promise<number> {
    const packs = await db()
      .collection('record_feed')
      .find({ _id: { $gte: prefix, $lt: `${prefix.slice(0, -1)}}` } } as Document)
      .toArray();
    return packs.reduce((n, p) => n + (p.e as string).split('\n').length, 0);
  }

  /** The scope's records straight from the collection, in change order. */
  async function stored(scope: RecordScope): Promise<RecordDoc[]> {
    const docs = await db().collection<RecordDoc>('records').find({ connection: scope.connection, variant: scope.variant }).toArray();
    return docs.sort((a, b) => a.seq - b.seq || (encodeURIComponent(a.id) < encodeURIComponent(b.id) ? -1 : 1));
  }

  test('pages follow the change order, and a writer writing between pages makes nothing skipped or repeated', async () => {
    const store = new RecordStore(db());
    const s = scopeOf('c-order');
    const w1 = await store.openWriter(s, 'run-1');
    await w1.saveBatch(ids(300).map((id) => rec(id, { v: 1 })));
    await store.finishScope(s, 'run-1', false);

    const w2 = await store.openWriter(s, 'run-2');
    const { records, pages } = await readAll(store, s, { limit: 40 }, async (page) => {
      // Between pages: records already read and not yet read change, new ones arrive, some go.
      if (page === 2) await w2.saveBatch([rec('f00010', { v: 2 }), rec('f00200', { v: 2 }), rec('new-1')]);
      if (page === 4) await w2.deleteByIds(['f00020', 'f00250']);
      if (page === 5) await w2.saveBatch([rec('f00200', { v: 3 }), rec('new-2')]);
    });
    await store.finishScope(s, 'run-2', false);

    expect(pages.slice(0, -1).every((p) => p.records.length === 40)).toBe(true);
    // Strictly increasing positions: nothing comes twice in one version, the order is the change order.
    const positions = records.map((r) => [r.seq, r.id] as const);
    for (let i = 1; i < positions.length; i++)
      expect(positions[i][0] > positions[i - 1][0] || (positions[i][0] === positions[i - 1][0] && positions[i][1] > positions[i - 1][1])).toBe(true);
    // Every record's final version was read; an id read twice was changed in between.
    const last = new Map(records.map((r) => [r.id, r]));
    const now = await stored(s);
    expect([...last.keys()].sort()).toEqual(now.map((d) => d.id).sort());
    for (const d of now) expect(last.get(d.id)!.seq).toBe(d.seq);
    const repeated = records.map((r) => r.id).filter((id, i, all) => all.indexOf(id) !== i);
    expect(repeated.sort()).toEqual(['f00010', 'f00020']);
    expect(last.get('f00200')!.data).toEqual({ id: 'f00200', v: 3 });
    expect(last.get('f00250')!.last_action).toBe('DELETED');
  });

  test('a page never shows a change past the committed mark', async () => {
    const store = new RecordStore(db());
    const s = scopeOf('c-commit');
    const w = await store.openWriter(s, 'run-1');
    await w.saveBatch(ids(5).map((id) => rec(id)));
    // A batch in flight: seqs reserved and feed entries written, records written, not committed.
    const { first, at } = await store.counters.reserveSeq(s, 2, undefined, new Date());
    await store.feed.append(recordKey(s, ''), [
      { id: 'f00000', seq: first, at },
      { id: 'late', seq: first + 1, at },
    ]);
    await db()
      .collection('records')
      .updateOne({ connection: s.connection, id: 'f00000' }, { $set: { seq: first, data_json: JSON.stringify({ id: 'f00000', v: 'uncommitted' }) } });
    const { records } = await readAll(store, s, { limit: 2 });
    // f00000's new version is not committed: its old entry is superseded, its new one not visible yet.
    expect(records.map((r) => r.id)).toEqual(['f00001', 'f00002', 'f00003', 'f00004']);
    await store.counters.commitSeq(s, first + 1);
    expect((await readAll(store, s, { limit: 2 })).records.map((r) => r.id)).toEqual(['f00001', 'f00002', 'f00003', 'f00004', 'f00000']);
  });

  test('superseded feed entries are skipped, and removed by the reader that meets them', async () => {
    const store = new RecordStore(db());
    const s = scopeOf('c-super');
    const w = await store.openWriter(s, 'run-1');
    await w.saveBatch(ids(50).map((id) => rec(id, { v: 1 })));
    for (let v = 2; v <= 4; v++) await w.saveBatch(ids(30).map((id) => rec(id, { v })));
    await store.finishScope(s, 'run-1', false);
    const feedOf = () => feedEntries('c-super|');
    expect(await feedOf()).toBe(50 + 3 * 30);

    const { records } = await readAll(store, s, { limit: 7 });
    expect(records.map((r) => r.id)).toEqual([...ids(20, 30), ...ids(30)]);
    expect(records.slice(20).every((r) => (r.data as { v: number }).v === 4)).toBe(true);
    expect(await feedOf()).toBe(50);
  });

  test('filters, modified_after, ids and variants select exactly what the records say', async () => {
    const store = new RecordStore(db());
    const s = scopeOf('c-filters');
    const other = scopeOf('c-filters', 'archive');
    const t = (min: number) => new Date(Date.UTC(2026, 0, 1, 0, min));
    const w = await store.openWriter(s, 'run-1');
    await w.saveBatch(
      ids(60).map((id) => rec(id)),
      t(0),
    );
    await w.saveBatch(
      ids(10, 5).map((id) => rec(id, { v: 2 })),
      t(10),
    );
    await w.deleteByIds(ids(5, 40), t(20));
    await w.saveBatch(
      ids(3, 100).map((id) => rec(id)),
      t(30),
    );
    // The clock went back: the record says t(25), and the feed still never goes backwards.
    await w.saveBatch([rec('f00050', { v: 2 })], t(25));
    await store.finishScope(s, 'run-1', false);
    const wo = await store.openWriter(other, 'run-o');
    await wo.saveBatch(
      ids(4).map((id) => rec(id, { archived: true })),
      t(40),
    );
    await store.finishScope(other, 'run-o', false);

    const all = await stored(s);
    const expectSame = async (q: Omit<PageQuery, 'after' | 'limit'>, want: (d: RecordDoc) => boolean) => {
      for (const limit of [3, 1000]) {
        const got = (await readAll(store, s, { ...q, limit })).records.map((r) => r.id);
        expect(got).toEqual(all.filter(want).map((d) => d.id));
      }
    };
    await expectSame({}, () => true);
    await expectSame({ actions: ['DELETED'] }, (d) => d.last_action === 'DELETED');
    await expectSame({ actions: ['ADDED', 'UPDATED'] }, (d) => d.last_action !== 'DELETED');
    for (const min of [0, 5, 10, 20, 25, 26, 30, 31]) await expectSame({ modifiedAfter: t(min) }, (d) => d.last_modified_at >= t(min));
    await expectSame({ modifiedAfter: t(10), actions: ['UPDATED'] }, (d) => d.last_modified_at >= t(10) && d.last_action === 'UPDATED');
    const wanted = ['f00007', 'f00041', 'f00100', 'nope', 'f00007'];
    await expectSame({ ids: wanted }, (d) => wanted.includes(d.id));
    await expectSame({ ids: wanted, actions: ['DELETED'] }, (d) => wanted.includes(d.id) && d.last_action === 'DELETED');

    // A variant is a scope of its own.
    const archived = await readAll(store, other, { limit: 3 });
    expect(archived.records.map((r) => [r.id, r.data])).toEqual(ids(4).map((id) => [id, { id, archived: true }]));
  });

  test('a scope stored before the feed existed gets its feed once, beside a running writer', async () => {
    const store = new RecordStore(db());
    const s = scopeOf('c-old');
    const w = await store.openWriter(s, 'run-1');
    await w.saveBatch(ids(120).map((id) => rec(id, { v: 1 })));
    await w.deleteByIds(['f00030']);
    await store.finishScope(s, 'run-1', false);
    // As the code before the feed left it: no entries, no flag.
    await db().collection('record_feed').deleteMany({});
    await db()
      .collection('record_counters')
      .updateMany({ connection: s.connection }, { $unset: { feed: '', last_at: '' } });
    expect((await store.list(s, { limit: 10 })).records.length).toBe(10); // no empty pages for old scopes
    await db().collection('record_feed').deleteMany({});
    await db()
      .collection('record_counters')
      .updateMany({ connection: s.connection }, { $unset: { feed: '', last_at: '' } });

    // Readers of two processes build it at once while a writer (which builds it too) changes records.
    const w2 = await store.openWriter(s, 'run-2');
    await db()
      .collection('record_counters')
      .updateMany({ connection: s.connection }, { $unset: { feed: '' } });
    await db().collection('record_feed').deleteMany({});
    const otherProcess = new RecordStore(db());
    await Promise.all([
      store.list(s, { limit: 5 }),
      otherProcess.list(s, { limit: 5 }),
      store.list(s, { limit: 5 }),
      w2.saveBatch(ids(20).map((id) => rec(id, { v: 2 }))),
    ]);
    await store.finishScope(s, 'run-2', false);

    expect((await db().collection('record_counters').findOne({ connection: s.connection }))?.feed).toBe(true);
    const { records } = await readAll(store, s, { limit: 25 });
    const now = await stored(s);
    expect(records.map((r) => [r.id, r.seq])).toEqual(now.map((d) => [d.id, d.seq]));
    expect(records.find((r) => r.id === 'f00030')?.last_action).toBe('DELETED');
    expect(records.find((r) => r.id === 'f00001')?.data).toEqual({ id: 'f00001', v: 2 });
  });

  test('a cursor issued before the feed existed reads on from the same record', async () => {
    const store = new RecordStore(db());
    const s = scopeOf('c-cursor');
    const w = await store.openWriter(s, 'run-1');
    await w.saveBatch(ids(30).map((id) => rec(id)));
    await store.finishScope(s, 'run-1', false);
    const all = await stored(s);
    // The old encoding of the 12th record's cursor: base64url of `v2:<seq>:<id>`.
    const old = Buffer.from(`v2:${all[11].seq}:${all[11].id}`).toString('base64url');
    const records: RecordDoc[] = [];
    let after: PageQuery['after'] = decodeCursor(old);
    while (after) {
      const page = await store.list(s, { limit: 8, after });
      records.push(...page.records);
      after = page.next ?? undefined;
    }
    expect(records.map((r) => r.id)).toEqual(all.slice(12).map((d) => d.id));
  });

  test('deleting a scope deletes its feed, and nothing of other scopes', async () => {
    const store = new RecordStore(db());
    const a = scopeOf('c-del');
    const b = scopeOf('c-del-keep');
    for (const s of [a, b]) {
      const w = await store.openWriter(s, 'run-1');
      await w.saveBatch(ids(10).map((id) => rec(id)));
      await store.finishScope(s, 'run-1', false);
    }
    await store.deleteScope({ environment: 'dev', connection: 'c-del' });
    expect(await feedEntries('c-del|')).toBe(0);
    expect(await feedEntries('c-del-keep|')).toBe(10);
    expect((await store.list(a, { limit: 10 })).records).toEqual([]);
    expect((await store.list(b, { limit: 100 })).records).toHaveLength(10);

    // One scope of a connection, or one variant across its models: the others keep their feed.
    const scopes = [
      scopeOf('c-del2'),
      { ...scopeOf('c-del2'), model: 'Folder' },
      scopeOf('c-del2', 'archive'),
      { ...scopeOf('c-del2', 'archive'), model: 'Folder' },
    ];
    for (const s of scopes) {
      const w = await store.openWriter(s, 'run-1');
      await w.saveBatch(ids(3).map((id) => rec(id)));
      await store.finishScope(s, 'run-1', false);
    }
    await store.deleteScope({ environment: 'dev', connection: 'c-del2', model: 'File', variant: 'base' });
    await store.deleteScope({ environment: 'dev', connection: 'c-del2', variant: 'archive' });
    const left = async (s: RecordScope) => (await store.list(s, { limit: 10 })).records.length;
    expect(await Promise.all(scopes.map(left))).toEqual([0, 3, 0, 0]);
    expect(await feedEntries('c-del2|')).toBe(3);
  });

  describe('what a page reads', () => {
    let client: MongoClient;
    let events: CommandStartedEvent[] = [];
    beforeAll(async () => {
      client = new MongoClient(testInfra().mongodbUri, { retryWrites: false, monitorCommands: true });
      client.on('commandStarted', (e) => events.push(e));
      await client.connect();
    });
    afterAll(() => client.close());

    /** The commands of one call, by collection. */
    async function commandsOf(call: () => Promise<unknown>) {
      events = [];
      await call();
      return events.map((e) => ({ name: e.commandName, collection: String(e.command[e.commandName]), command: e.command }));
    }

    test('only _id ranges of the feed and _id points of records, bounded by the page, even when a filter matches nothing', async () => {
      const store = new RecordStore(client.db(db().databaseName));
      const s = scopeOf('c-cost');
      const w = await store.openWriter(s, 'run-1');
      for (let b = 0; b < 5; b++) await w.saveBatch(ids(1000, b * 1000).map((id) => rec(id)));
      await store.finishScope(s, 'run-1', false);
      const middle = (await store.list(s, { limit: 100, after: { seq: 2000, id: 'f01999' } })).records;
      expect(middle[0].id).toBe('f02000');

      // Forward windows ($gt, $lt, ascending) and the pack straddling a start ($gte, $lte, descending, one).
      const isIdRange = (filter: Document) =>
        Object.keys(filter).length === 1 &&
        ['$gt,$lt', '$gte,$lte'].includes(Object.keys(filter._id).sort().join()) &&
        Object.values(filter._id).every((b) => typeof b === 'string');
      const queries = [
        () => store.list(s, { limit: 100, after: { seq: 3000, id: 'f02999' } }),
        () => store.list(s, { limit: 100, after: { seq: 3000, id: 'f02999' }, modifiedAfter: new Date(0) }),
        () => store.list(s, { limit: 100, actions: ['DELETED'] }),
        () => store.list(s, { limit: 100, ids: ['f00001', 'f04000'] }),
      ];
      for (const query of queries) {
        const commands = await commandsOf(query);
        for (const c of commands) {
          if (c.name === 'getMore' || c.name === 'killCursors') continue; // the rest of one of the finds below
          expect(c.name).toBe('find');
          if (c.collection === 'records') {
            expect(Object.keys(c.command.filter)).toEqual(['_id']);
            expect(Object.keys(c.command.filter._id)).toEqual(['$in']);
            expect(c.command.filter._id.$in.length).toBeLessThanOrEqual(1000);
          } else if (c.collection === 'record_feed') {
            expect(isIdRange(c.command.filter)).toBe(true);
            expect([{ _id: 1 }, { _id: -1 }]).toContainEqual(c.command.sort instanceof Map ? Object.fromEntries(c.command.sort) : c.command.sort);
            expect(c.command.limit).toBeLessThanOrEqual(SCAN_FACTOR * 100);
          } else {
            expect(c.collection).toBe('record_counters');
            expect(Object.keys(c.command.filter)).toEqual(['_id']);
          }
        }
      }

      // The feed's window as a page sends it is read through the _id index with its limit (FerretDB's fifth patch; MongoDB's _id index).
      const windows = (await commandsOf(() => store.list(s, { limit: 100, after: { seq: 3000, id: 'f02999' } }))).filter(
        (c) => c.name === 'find' && c.collection === 'record_feed',
      );
      expect(windows.length).toBeGreaterThanOrEqual(2);
      for (const window of windows) {
        const explain = await client
          .db(db().databaseName)
          .collection('record_feed')
          .find(window.command.filter)
          .sort(window.command.sort instanceof Map ? Object.fromEntries(window.command.sort) : window.command.sort)
          .limit(Number(window.command.limit))
          .explain();
        if (explain.serverInfo?.ferretdbVersion) {
          expect({ filter: explain.filterPushdown, sort: explain.sortPushdown, limit: explain.limitPushdown }).toEqual({
            filter: true,
            sort: true,
            limit: true,
          });
        } else expect(JSON.stringify(explain.queryPlanner.winningPlan)).toContain('IXSCAN');
      }

      // A filter that matches nothing stops after SCAN_FACTOR × limit entries, with a place to go on from.
      const commands = await commandsOf(() => store.list(s, { limit: 100, actions: ['DELETED'] }));
      const scanned = commands.filter((c) => c.name === 'find' && c.collection === 'record_feed').reduce((n, c) => n + Number(c.command.limit), 0);
      expect(scanned).toBeLessThanOrEqual(SCAN_FACTOR * 100);
      const cut = await store.list(s, { limit: 100, actions: ['DELETED'] });
      expect(cut.records).toEqual([]);
      expect(cut.next?.seq).toBe(SCAN_FACTOR * 100);

      // modified_after finds its start by a binary search: a few one-entry reads, not a scan.
      const probes = await commandsOf(() => store.list(s, { limit: 10, modifiedAfter: new Date(Date.now() + 60_000) }));
      const feedReads = probes.filter((c) => c.name === 'find' && c.collection === 'record_feed');
      // (each one-entry read: the pack straddling the probe, and the next one if that holds nothing after it)
      expect(feedReads.length).toBeLessThanOrEqual(2 * (Math.ceil(Math.log2(5000)) + 3));
      // ... and on later pages, whose cursor is past the start already, one one-entry read more than without the filter.
      const feedFinds = async (q: PageQuery) =>
        (await commandsOf(() => store.list(s, q))).filter((c) => c.name === 'find' && c.collection === 'record_feed').length;
      const plain = await feedFinds({ limit: 10, after: { seq: 4000, id: 'f03999' } });
      expect(await feedFinds({ limit: 10, after: { seq: 4000, id: 'f03999' }, modifiedAfter: new Date(0) })).toBeLessThanOrEqual(plain + 2);
    });
  });
});
