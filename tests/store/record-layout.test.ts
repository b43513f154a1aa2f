import { MongoClient, type CommandStartedEvent, type CommandSucceededEvent, type Document } from 'mongodb';
import { RecordStore, type RecordScope } from '../../store/records';
import { useTestDatabase } from '../support/test-database';
import { testInfra } from '../support/weft-stack';

/**
 * How records are stored (payloads as one JSON string, feed packs and batch logs as text)
 * and that what earlier versions stored in the document layout reads and changes alike, on
 * the real MongoDB-wire server (FerretDB by default). And what one page costs the server,
 * in commands and documents.
 */
describe('RecordStore storage layout', () => {
  const testDb = useTestDatabase('weft_record_layout');
  const scopeOf = (connection: string): RecordScope => ({ environment: 'dev', connection, model: 'File', variant: 'base' });
  const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `f${String(from + i).padStart(5, '0')}`);
  const payload = (id: string, v: number) => ({
    id,
    name: `${id}.txt`,
    v,
    nested: { list: [1, 'two', { three: 3 }, null], empty: {}, text: 'line\nbreak\ttab "quoted"' },
    unicode: 'Zoë ✓',
  });
  const db = () => testDb.db();
  const raw = (s: RecordScope) => db().collection('records').find({ connection: s.connection }).toArray();

  /** Rewrites a scope's records and feed into the layout earlier versions stored (payload as a document, packs as arrays). */
  async function toEarlierLayout(s: RecordScope): Promise<void> {
    for (const doc of await raw(s)) {
      await db()
        .collection('records')
        .updateOne({ _id: doc._id }, { $set: { data: JSON.parse(doc.data_json as string) }, $unset: { data_json: '' } });
    }
    const prefix = `${s.connection}|`;
    for (const pack of await db()
      .collection('record_feed')
      .find({ _id: { $gte: prefix, $lt: `${s.connection}}` } } as Document)
      .toArray()) {
      const lines = (pack.e as string).split('\n').map((l) => l.split('\t'));
      await db()
        .collection('record_feed')
        .updateOne({ _id: pack._id }, { $set: { s: lines.map(([k]) => k), at: lines.map(([, at]) => parseInt(at, 36)) }, $unset: { e: '' } });
    }
  }

  test('a payload is stored as one JSON string and read back as it was written; a run log holds its ids as text', async () => {
    const store = new RecordStore(db());
    const s = scopeOf('c-layout');
    const w = await store.openWriter(s, 'run-1');
    await w.saveBatch([
      { id: 'a', data: payload('a', 1) },
      { id: 'odd\nid|%', data: { id: 'odd\nid|%', gone: undefined, at: 'x' } },
    ]);
    const batches = await db().collection('record_run_batches').find({ run_id: 'run-1' }).toArray();
    expect(batches.map((b) => b.added)).toEqual([`a\n${encodeURIComponent('odd\nid|%')}`]);
    expect(await store.finishScope(s, 'run-1', true)).toEqual({ added: 2, updated: 0, deleted: 0, live: 2 });

    const docs = await raw(s);
    expect(docs.map((d) => [typeof d.data_json, d.data])).toEqual([
      ['string', undefined],
      ['string', undefined],
    ]);
    const packs = await db().collection('record_feed').find({}).toArray();
    expect(packs.every((p) => typeof p.e === 'string' && p.s === undefined)).toBe(true);

    const page = await store.list(s, { limit: 10 });
    const byId = new Map(page.records.map((r) => [r.id, r.data]));
    expect(byId.get('a')).toEqual(payload('a', 1));
    // An undefined value is stored as null, as the driver stores it in a document.
    expect(byId.get('odd\nid|%')).toEqual({ id: 'odd\nid|%', gone: null, at: 'x' });
    expect((await store.list(s, { limit: 10, ids: ['a'] })).records.map((r) => r.data)).toEqual([payload('a', 1)]);

    // The next run of the same data writes nothing; deleted detection reads the ids back from the log.
    const w2 = await store.openWriter(s, 'run-2');
    expect(await w2.saveBatch([{ id: 'a', data: payload('a', 1) }])).toEqual({ added: 0, updated: 0, unchanged: 1 });
    expect(await store.finishScope(s, 'run-2', true)).toEqual({ added: 0, updated: 0, deleted: 1, live: 1 });
  });

  test('records and feed packs stored in the earlier layout read the same, and move to the new layout when they change', async () => {
    const store = new RecordStore(db());
    const s = scopeOf('c-earlier');
    const w = await store.openWriter(s, 'run-1');
    await w.saveBatch(ids(30).map((id) => ({ id, data: payload(id, 1) })));
    await store.finishScope(s, 'run-1', false);
    const before = (await store.list(s, { limit: 100 })).records;
    await toEarlierLayout(s);
    expect((await raw(s)).every((d) => typeof d.data === 'object' && d.data_json === undefined)).toBe(true);

    // Pages, ids and cursors read the same records.
    expect((await store.list(s, { limit: 100 })).records).toEqual(before);
    const firstTen = await store.list(s, { limit: 10 });
    expect((await store.list(s, { limit: 100, after: firstTen.next! })).records).toEqual(before.slice(10));
    expect((await store.list(s, { limit: 100, ids: ['f00003'] })).records).toEqual([before[3]]);

    // Unchanged data writes nothing; a change writes the new layout, whose reader drops the old entry from its old pack.
    const w2 = await store.openWriter(s, 'run-2');
    expect(await w2.saveBatch(ids(30).map((id) => ({ id, data: payload(id, id === 'f00001' ? 2 : 1) })))).toEqual({ added: 0, updated: 1, unchanged: 29 });
    await store.finishScope(s, 'run-2', false);
    const stored = new Map((await raw(s)).map((d) => [d.id as string, d]));
    expect(JSON.parse(stored.get('f00001')!.data_json as string)).toEqual(payload('f00001', 2));
    expect(stored.get('f00001')!.data).toBeUndefined();
    const after = (await store.list(s, { limit: 100 })).records;
    expect(after.map((r) => r.id)).toEqual([...ids(30).filter((id) => id !== 'f00001'), 'f00001']);
    expect(after[29].data).toEqual(payload('f00001', 2));
    const oldPack = await db()
      .collection('record_feed')
      .findOne({ _id: { $gte: 'c-earlier|', $lt: 'c-earlier}' } } as Document, { sort: { _id: 1 } });
    expect(typeof oldPack!.e).toBe('string');
    expect(oldPack!.e).not.toContain('f00001');

    // Pruning a record of the earlier layout drops its payload document too.
    const pruned = await store.prune(s, { seq: after[0].seq, id: after[0].id }, 10);
    expect(pruned).toEqual({ count: 1, hasMore: false });
    const f0 = (await raw(s)).find((d) => d.id === 'f00000')!;
    expect([f0.data, f0.data_json]).toEqual([undefined, '{}']);
    expect((await store.list(s, { limit: 1 })).records[0].pruned_at).toBeInstanceOf(Date);
  });

  describe('what a page costs the server', () => {
    let client: MongoClient;
    const started = new Map<number, CommandStartedEvent>();
    let done: Array<{ command: string; collection: string; documents: number }> = [];
    beforeAll(async () => {
      client = new MongoClient(testInfra().mongodbUri, { retryWrites: false, monitorCommands: true });
      client.on('commandStarted', (e) => started.set(e.requestId, e));
      client.on('commandSucceeded', (e: CommandSucceededEvent) => {
        const start = started.get(e.requestId);
        if (!start) return;
        const cursor = (e.reply as Document).cursor as Document | undefined;
        const collection = String(start.commandName === 'getMore' ? start.command.collection : start.command[start.commandName]);
        done.push({ command: start.commandName, collection, documents: ((cursor?.firstBatch ?? cursor?.nextBatch ?? []) as unknown[]).length });
      });
      await client.connect();
    });
    afterAll(() => client.close());

    test('a page of 100 is four reads at most, of 100 records and a few feed packs, wherever the cursor is', async () => {
      const store = new RecordStore(client.db(db().databaseName));
      const s = scopeOf('c-page-cost');
      const w = await store.openWriter(s, 'run-1');
      for (let b = 0; b < 5; b++) await w.saveBatch(ids(1000, b * 1000).map((id) => ({ id, data: payload(id, 1) })));
      await store.finishScope(s, 'run-1', false);

      let after: { seq: number; id: string } | undefined;
      for (let page = 0; page < 12; page++) {
        done = [];
        const read = await store.list(s, { limit: 100, after });
        expect(read.records).toHaveLength(100);
        after = read.next ?? undefined;
        const of = (collection: string) => done.filter((c) => c.collection === collection);
        expect(done.every((c) => c.command === 'find')).toBe(true);
        expect(done.length).toBeLessThanOrEqual(4);
        expect(of('record_counters').map((c) => c.documents)).toEqual([1]);
        // The page's records, and the next one (whether there is more).
        expect(of('records').map((c) => c.documents)).toEqual([101]);
        // The pack straddling the cursor, and at most two after it (a pack holds 250 entries).
        expect(of('record_feed').reduce((n, c) => n + c.documents, 0)).toBeLessThanOrEqual(3);
      }
    });
  });
});
