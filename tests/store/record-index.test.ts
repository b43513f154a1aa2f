import { Collection } from 'mongodb';
import { RecordIndex } from '../../store/record-index';
import { RecordStore } from '../../store/records';
import { useTestDatabase } from '../support/test-database';

/**
 * The records engine's per-scope index and its crash safety, on the real MongoDB-wire
 * server (FerretDB by default). Crashes are made by failing one write at the exact point
 * a worker could die.
 */
describe('RecordStore index', () => {
  const testDb = useTestDatabase('weft_record_index');
  const rec = (id: string, extra: Record<string, unknown> = {}) => ({ id, data: { id, ...extra } });
  const scopeOf = (connection: string) => ({ environment: 'dev', connection, model: 'File', variant: 'base' });

  afterEach(() => jest.restoreAllMocks());

  const records = () => testDb.db().collection('records');
  const counter = (connection: string) => testDb.db().collection('record_counters').findOne({ connection });
  async function stored(connection: string) {
    const docs = await records().find({ connection }).sort({ id: 1 }).toArray();
    return new Map(docs.map((d) => [d.id as string, d]));
  }

  /** Scope with r1..r3 saved and finished by run-1. */
  async function seeded(connection: string) {
    const store = new RecordStore(testDb.db());
    const s = scopeOf(connection);
    const w = await store.openWriter(s, 'run-1');
    await w.saveBatch([1, 2, 3].map((n) => rec(`r${n}`, { v: 1 })));
    expect(await store.finishScope(s, 'run-1', false)).toEqual({ added: 3, updated: 0, deleted: 0, live: 3 });
    return { store, s, firstSeen: (await stored(connection)).get('r1')!.first_seen_at as Date };
  }

  test('a crash between removing the old versions and inserting the new ones loses nothing', async () => {
    const { store, s, firstSeen } = await seeded('c-swap');

    // The worker dies right after the old versions of r1 and r2 were deleted.
    const attempt1 = await store.openWriter(s, 'run-2');
    // (The insert of the new versions into `records`; the batch's feed entries went in before.)
    const insertMany = Collection.prototype.insertMany;
    let died = false;
    jest.spyOn(Collection.prototype, 'insertMany').mockImplementation(function (this: Collection, ...args: Parameters<Collection['insertMany']>) {
      if (this.collectionName === 'records' && !died) {
        died = true;
        return Promise.reject(new Error('worker died'));
      }
      return insertMany.apply(this, args);
    });
    await expect(attempt1.saveBatch([rec('r1', { v: 2 }), rec('r2', { v: 2 })])).rejects.toThrow('worker died');
    expect([...(await stored('c-swap')).keys()]).toEqual(['r3']);

    // The next writer of the scope puts the new versions in before anything else.
    const attempt2 = await store.openWriter(s, 'run-2');
    const after = await stored('c-swap');
    expect([...after.keys()]).toEqual(['r1', 'r2', 'r3']);
    expect(JSON.parse(after.get('r1')!.data_json as string)).toEqual({ id: 'r1', v: 2 });
    expect(after.get('r1')!.first_seen_at).toEqual(firstSeen);
    expect(await testDb.db().collection('record_swaps').countDocuments({ connection: 'c-swap' })).toBe(0);

    // The retried page finds them current, and the run still counts them as its updates.
    expect(await attempt2.saveBatch([rec('r1', { v: 2 }), rec('r2', { v: 2 })])).toEqual({ added: 0, updated: 0, unchanged: 2 });
    expect(await store.finishScope(s, 'run-2', false)).toEqual({ added: 0, updated: 2, deleted: 0, live: 3 });
  });

  test('records inserted by a run that died before indexing them are classified from the records themselves', async () => {
    const store = new RecordStore(testDb.db());
    const s = scopeOf('c-lost-chunk');
    const attempt1 = await store.openWriter(s, 'run-1');
    jest.spyOn(RecordIndex.prototype, 'writeChunk').mockRejectedValueOnce(new Error('worker died'));
    await expect(attempt1.saveBatch([rec('r1', { v: 1 }), rec('r2', { v: 1 })])).rejects.toThrow('worker died');
    expect((await stored('c-lost-chunk')).size).toBe(2);

    // The retry re-saves the page plus one more record: the two found stored are its own
    // additions, not new ones and not updates.
    const attempt2 = await store.openWriter(s, 'run-1');
    expect(await attempt2.saveBatch([rec('r1', { v: 1 }), rec('r2', { v: 1 }), rec('r3', { v: 1 })])).toEqual({ added: 1, updated: 0, unchanged: 2 });
    expect(await store.finishScope(s, 'run-1', false)).toEqual({ added: 3, updated: 0, deleted: 0, live: 3 });
    const firstSeen = (await stored('c-lost-chunk')).get('r2')!.first_seen_at;

    // The index has learned them: the next run writes only the record that changed.
    const next = await store.openWriter(s, 'run-2');
    expect(await next.saveBatch([rec('r1', { v: 1 }), rec('r2', { v: 2 }), rec('r3', { v: 1 })])).toEqual({ added: 0, updated: 1, unchanged: 2 });
    expect(await records().countDocuments({ connection: 'c-lost-chunk', run_id: 'run-2' })).toBe(1);
    expect((await stored('c-lost-chunk')).get('r2')!.first_seen_at).toEqual(firstSeen);
  });

  test('a scope stored before the index existed is indexed by its next writer', async () => {
    const { store, s, firstSeen } = await seeded('c-legacy');
    await testDb
      .db()
      .collection('record_counters')
      .updateOne({ connection: 'c-legacy' }, { $unset: { indexed: '', index: '', index_base: '' } });
    await testDb.db().collection('record_index').deleteMany({ connection: 'c-legacy' });

    const w = await store.openWriter(s, 'run-2');
    expect((await counter('c-legacy'))!.index).toHaveLength(1);
    expect(await w.saveBatch([rec('r1', { v: 1 }), rec('r2', { v: 2 })])).toEqual({ added: 0, updated: 1, unchanged: 1 });
    await w.deleteByIds(['r3']);
    expect(await store.finishScope(s, 'run-2', false)).toEqual({ added: 0, updated: 1, deleted: 1, live: 2 });
    expect((await stored('c-legacy')).get('r2')!.first_seen_at).toEqual(firstSeen);

    // The deletion is in the index too: r3 coming back is an addition.
    const w3 = await store.openWriter(s, 'run-3');
    expect(await w3.saveBatch([rec('r3', { v: 1 })])).toEqual({ added: 1, updated: 0, unchanged: 0 });
  });

  test('the index is rewritten once its chunk list has doubled, and stays exact', async () => {
    const { store, s } = await seeded('c-compact');
    const chunks = async () => ((await counter('c-compact'))!.index as string[]).length;
    expect(await chunks()).toBe(1);
    // Each run changes one record: one chunk each, until the list is rewritten.
    const lengths: number[] = [];
    for (let run = 2; run <= 14; run++) {
      const w = await store.openWriter(s, `run-${run}`);
      expect(await w.saveBatch([rec('r1', { v: run })])).toEqual({ added: 0, updated: 1, unchanged: 0 });
      await store.finishScope(s, `run-${run}`, false);
      lengths.push(await chunks());
    }
    // 1 chunk after the first run; rewritten (into 1 again) by the finish that took it past 2 × 1 + 8 = 10.
    expect(lengths).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2, 3, 4]);
    expect(await testDb.db().collection('record_index').countDocuments({ connection: 'c-compact' })).toBe(await chunks());

    const w = await store.openWriter(s, 'run-last');
    expect(await w.saveBatch([rec('r1', { v: 14 }), rec('r2', { v: 1 }), rec('r3', { v: 1 })])).toEqual({ added: 0, updated: 0, unchanged: 3 });
    expect(await w.saveBatch([rec('r1', { v: 15 })])).toEqual({ added: 0, updated: 1, unchanged: 0 });
  });
});
