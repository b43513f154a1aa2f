import { RecordStore } from '../../store/records';
import { useTestDatabase } from '../support/test-database';

/** The records engine on the real MongoDB-wire server (FerretDB by default). */
describe('RecordStore', () => {
  const testDb = useTestDatabase('weft_records');
  const scope = { environment: 'dev', connection: 'c1', model: 'File', variant: 'base' };
  const rec = (id: string, extra: Record<string, unknown> = {}) => ({ id, data: { id, ...extra } });

  /** What the run wrote, straight from the collection. */
  async function writtenBy(runId: string) {
    const docs = await testDb.db().collection('records').find({ run_id: runId }).toArray();
    const count = (a: string) => docs.filter((d) => d.last_action === a).length;
    return { added: count('ADDED'), updated: count('UPDATED'), deleted: count('DELETED') };
  }

  test('a batch that changes hundreds of records at once completes, and counts are exact', async () => {
    const store = new RecordStore(testDb.db());
    await store.ensureIndexes();
    const records = (v: number) => Array.from({ length: 300 }, (_, i) => rec(`f${i}`, { name: `file ${i}`, version: i < 250 ? v : 0 }));

    const run1 = await store.openWriter(scope, 'run-1');
    expect(await run1.saveBatch(records(1))).toEqual({ added: 300, updated: 0, unchanged: 0 });
    expect(await store.finishScope(scope, 'run-1', false)).toEqual({ added: 300, updated: 0, deleted: 0, live: 300 });

    // 250 updates in one batch, swapped in by one delete and one insert (a batch of updates
    // once hung FerretDB, which deadlocked on update commands of over 100 statements).
    const run2 = await store.openWriter(scope, 'run-2');
    const saved = await Promise.race([run2.saveBatch(records(2)), new Promise((_, reject) => setTimeout(() => reject(new Error('saveBatch hung')), 20_000))]);
    expect(saved).toEqual({ added: 0, updated: 250, unchanged: 50 });
    expect(await store.finishScope(scope, 'run-2', false)).toEqual({ added: 0, updated: 250, deleted: 0, live: 300 });
    expect(await writtenBy('run-2')).toEqual({ added: 0, updated: 250, deleted: 0 });
    // A retried finish answers the same.
    expect(await store.finishScope(scope, 'run-2', false)).toEqual({ added: 0, updated: 250, deleted: 0, live: 300 });

    // Saving the same data again writes nothing.
    const run3 = await store.openWriter(scope, 'run-3');
    expect(await run3.saveBatch(records(2))).toEqual({ added: 0, updated: 0, unchanged: 300 });
    expect(await testDb.db().collection('records').countDocuments({ run_id: 'run-3' })).toBe(0);

    // Deletions: the run's log and what was written say the same; the live count follows.
    expect(await run3.deleteByIds(['f1', 'f2', 'never-existed'])).toBe(2);
    expect(await run3.deleteByIds(['f1'])).toBe(0);
    expect(await store.finishScope(scope, 'run-3', false)).toEqual({ added: 0, updated: 0, deleted: 2, live: 298 });
    expect(await writtenBy('run-3')).toEqual({ added: 0, updated: 0, deleted: 2 });
    expect(await testDb.db().collection('records').countDocuments({ connection: 'c1', deleted_at: null })).toBe(298);
  });

  test('a retried attempt of a first run re-saves its pages without duplicates or double counts', async () => {
    const store = new RecordStore(testDb.db());
    const s = { ...scope, connection: 'c-retry' };
    const page1 = [1, 2, 3].map((n) => rec(`r${n}`, { v: 1 }));
    const page2 = [4, 5].map((n) => rec(`r${n}`, { v: 1 }));

    // Attempt 1 wrote page 1, then died before its checkpoint moved.
    const attempt1 = await store.openWriter(s, 'run-a');
    await attempt1.saveBatch(page1);
    // Attempt 2 starts from page 1 again; r2 changed at the provider in between, and an id
    // repeats within the run (Graph delta may list an item twice).
    const attempt2 = await store.openWriter(s, 'run-a');
    expect(await attempt2.saveBatch([rec('r1', { v: 1 }), rec('r2', { v: 2 }), rec('r3', { v: 1 })])).toEqual({ added: 1, updated: 0, unchanged: 2 });
    expect(await attempt2.saveBatch([...page2, rec('r1', { v: 1 })])).toEqual({ added: 2, updated: 0, unchanged: 1 });
    expect(await store.finishScope(s, 'run-a', true)).toEqual({ added: 5, updated: 0, deleted: 0, live: 5 });
    expect(await testDb.db().collection('records').countDocuments({ connection: 'c-retry' })).toBe(5);

    // The next run updates one, deletes one, re-adds nothing: counts and live follow.
    const next = await store.openWriter(s, 'run-b');
    expect(await next.saveBatch([rec('r1', { v: 9 })])).toEqual({ added: 0, updated: 1, unchanged: 0 });
    expect(await next.saveBatch([rec('r1', { v: 10 })])).toEqual({ added: 0, updated: 1, unchanged: 0 });
    await next.deleteByIds(['r5']);
    expect(await store.finishScope(s, 'run-b', false)).toEqual({ added: 0, updated: 1, deleted: 1, live: 4 });

    // A deleted record that comes back is an addition, and live again.
    const back = await store.openWriter(s, 'run-c');
    expect(await back.saveBatch([rec('r5', { v: 1 })])).toEqual({ added: 1, updated: 0, unchanged: 0 });
    expect(await store.finishScope(s, 'run-c', false)).toEqual({ added: 1, updated: 0, deleted: 0, live: 5 });
  });

  test('a run that failed after writing makes the next run count and detect deletes from the records themselves', async () => {
    const store = new RecordStore(testDb.db());
    const s = { ...scope, connection: 'c-failed' };
    const failed = await store.openWriter(s, 'failed-1');
    await failed.saveBatch([1, 2, 3].map((n) => rec(`r${n}`)));
    // failed-1 never finishes. The next full run sees only r1: r2 and r3 are gone.
    const next = await store.openWriter(s, 'full-2');
    expect(await next.saveBatch([rec('r1')])).toEqual({ added: 0, updated: 0, unchanged: 1 });
    expect(await store.finishScope(s, 'full-2', true)).toEqual({ added: 0, updated: 0, deleted: 2, live: 1 });
    // An incremental run after it carries the now exact count forward.
    const inc = await store.openWriter(s, 'inc-3');
    await inc.saveBatch([rec('r4')]);
    expect(await store.finishScope(s, 'inc-3', false)).toEqual({ added: 1, updated: 0, deleted: 0, live: 2 });
  });

  test('delete detection of a complete full run marks exactly the unseen records', async () => {
    const store = new RecordStore(testDb.db());
    const s = { ...scope, connection: 'c2' };
    const w1 = await store.openWriter(s, 'full-1');
    await w1.saveBatch([1, 2, 3, 4].map((n) => rec(`r${n}`)));
    expect(await store.finishScope(s, 'full-1', true)).toEqual({ added: 4, updated: 0, deleted: 0, live: 4 });

    const w2 = await store.openWriter(s, 'full-2');
    await w2.saveBatch([1, 3].map((n) => rec(`r${n}`)));
    expect(await store.finishScope(s, 'full-2', true)).toEqual({ added: 0, updated: 0, deleted: 2, live: 2 });
    const { records } = await store.list(s, { limit: 10, actions: ['DELETED'] });
    expect(records.map((r) => r.id).sort()).toEqual(['r2', 'r4']);

    // Emptying the cache resets the live count; the next run starts from nothing.
    await store.deleteScope({ environment: s.environment, connection: s.connection, model: s.model, variant: s.variant });
    const w3 = await store.openWriter(s, 'full-3');
    await w3.saveBatch([rec('r1')]);
    expect(await store.finishScope(s, 'full-3', true)).toEqual({ added: 1, updated: 0, deleted: 0, live: 1 });
  });

  test('a full run in flight across an upgrade keeps the batches an earlier version logged (generated _ids): nothing it saw is deleted', async () => {
    const db = testDb.db();
    const store = new RecordStore(db);
    const s = { ...scope, connection: 'c-upgrade' };
    const w1 = await store.openWriter(s, 'up-1');
    await w1.saveBatch([1, 2, 3, 4].map((n) => rec(`r${n}`)));
    await store.finishScope(s, 'up-1', true);
    // Run up-2 saw r1 and r2 on its first page, logged as the earlier version did.
    await db.collection<any>('record_run_batches').insertOne({
      run_id: 'up-2',
      connection: s.connection,
      model: s.model,
      variant: s.variant,
      seen: ['r1', 'r2'],
      added: [],
      updated: [],
      deleted: [],
      was_live: [],
      created_at: new Date(),
    });
    // The new version starts (its migration runs once) and the run goes on with its second page.
    await db.collection<any>('store_migrations').deleteOne({ _id: 'record_run_batches_by_key' });
    await store.ensureIndexes();
    expect(await db.collection('record_run_batches').countDocuments({ _id: { $type: 'objectId' } })).toBe(0);
    const w2 = await store.openWriter(s, 'up-2');
    await w2.saveBatch([rec('r3')]);
    expect(await store.finishScope(s, 'up-2', true)).toEqual({ added: 0, updated: 0, deleted: 1, live: 3 });
    const { records } = await store.list(s, { limit: 10, actions: ['DELETED'] });
    expect(records.map((r) => r.id)).toEqual(['r4']);
  });
});
