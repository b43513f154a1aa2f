import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { RecordStore } from '../../store/records';
import { testInfra } from '../support/weft-stack';

/** The records engine on the real MongoDB-wire server (FerretDB by default). */
describe('RecordStore', () => {
  let client: MongoClient;
  const dbName = `weft_records_${randomBytes(4).toString('hex')}`;
  const scope = { environment: 'dev', connection: 'c1', model: 'File', variant: 'base' };

  beforeAll(async () => {
    client = new MongoClient(testInfra().mongodbUri, { retryWrites: false });
    await client.connect();
  });
  afterAll(async () => {
    await client.db(dbName).dropDatabase().catch(() => undefined);
    await client.close();
  });

  test('a batch that changes hundreds of records at once completes, and counts are exact', async () => {
    const store = new RecordStore(client.db(dbName));
    await store.ensureIndexes();
    const records = (v: number) => Array.from({ length: 300 }, (_, i) => ({ id: `f${i}`, data: { id: `f${i}`, name: `file ${i}`, version: i < 250 ? v : 0 } }));

    const run1 = await store.openWriter(scope, 'run-1');
    expect(await run1.saveBatch(records(1))).toEqual({ added: 300, updated: 0, unchanged: 0 });

    // 250 updates in one batch: FerretDB deadlocks on an `update` command with more than
    // 100 statements, so the engine must split them (this hung before it did).
    const run2 = await store.openWriter(scope, 'run-2');
    const saved = await Promise.race([run2.saveBatch(records(2)), new Promise((_, reject) => setTimeout(() => reject(new Error('saveBatch hung')), 20_000))]);
    expect(saved).toEqual({ added: 0, updated: 250, unchanged: 50 });
    // The writer's own counts (used to skip the finish scan) agree with the scan.
    expect(run2.runCounts()).toEqual({ added: 0, updated: 250, deleted: 0, live: 300 });
    expect(await store.finishScope(scope, 'run-2', false)).toEqual({ added: 0, updated: 250, deleted: 0, live: 300 });

    // Saving the same data again writes nothing.
    const run3 = await store.openWriter(scope, 'run-3');
    expect(await run3.saveBatch(records(2))).toEqual({ added: 0, updated: 0, unchanged: 300 });
    expect(await client.db(dbName).collection('records').countDocuments({ run_id: 'run-3' })).toBe(0);

    // Deletions: the writer's counts and a scan of what was written say the same.
    await run3.deleteByIds(['f1', 'f2', 'never-existed']);
    expect(run3.runCounts()).toEqual({ added: 0, updated: 0, deleted: 2, live: 298 });
    expect(await store.finishScope(scope, 'run-3', false)).toEqual({ added: 0, updated: 0, deleted: 2, live: 298 });
  });

  test('delete detection of a complete full run marks exactly the unseen records', async () => {
    const store = new RecordStore(client.db(dbName));
    const s = { ...scope, connection: 'c2' };
    const w1 = await store.openWriter(s, 'full-1');
    await w1.saveBatch([1, 2, 3, 4].map((n) => ({ id: `r${n}`, data: { id: `r${n}` } })));
    await store.markSeen(s, 'full-1', ['r1', 'r2', 'r3', 'r4']);
    await store.finishScope(s, 'full-1', true);

    const w2 = await store.openWriter(s, 'full-2');
    await w2.saveBatch([1, 3].map((n) => ({ id: `r${n}`, data: { id: `r${n}` } })));
    await store.markSeen(s, 'full-2', ['r1', 'r3']);
    expect(await store.finishScope(s, 'full-2', true)).toEqual({ added: 0, updated: 0, deleted: 2, live: 2 });
    const { records } = await store.list(s, { limit: 10, actions: ['DELETED'] });
    expect(records.map((r) => r.id).sort()).toEqual(['r2', 'r4']);
  });
});
