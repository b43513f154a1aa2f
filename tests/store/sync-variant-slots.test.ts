import { MongoClient } from 'mongodb';
import { SyncStore } from '../../store/syncs';
import { testInfra } from '../support/weft-stack';
import { useTestDatabase } from '../support/test-database';

/** A sync's variant limit holds across processes: each variant takes one of its numbered slots (an `_id` insert). */
describe('SyncStore variant slots', () => {
  const testDb = useTestDatabase('weft_variant_slots');
  const opts = { limit: 3, base: 'base' };
  const state = (connection: string, variant: string) => ({
    environment: 'dev',
    connection,
    connection_id: connection,
    provider_config_key: 'one-drive',
    name: 'user-files',
    variant,
  });
  const variantsOf = async (store: SyncStore, connection: string) =>
    (await store.listForConnection(connection)).filter((s) => s.variant !== 'base').map((s) => s.variant);

  // A second client: what another `weft api` process would hold.
  let other: MongoClient;
  beforeAll(async () => {
    other = new MongoClient(testInfra().mongodbUri, { retryWrites: false });
    await other.connect();
  });
  afterAll(() => other?.close());

  test('two processes racing for the last slot: exactly one variant is made, every round', async () => {
    const stores = [new SyncStore(testDb.db()), new SyncStore(other.db(testDb.db().databaseName))];
    for (let round = 0; round < 8; round++) {
      const conn = `race-${round}`;
      await stores[0].ensure(state(conn, 'base'));
      for (const v of ['a', 'b']) expect(await stores[0].createVariant(state(conn, v), opts)).toMatchObject({ variant: v, slot: expect.any(Number) });
      const results = await Promise.all(
        ['x0', 'x1', 'x2', 'x3'].map((v, i) => stores[i % 2].createVariant(state(conn, v), opts).then((r) => (typeof r === 'string' ? r : 'created'))),
      );
      expect(results.sort()).toEqual(['created', 'full', 'full', 'full']);
      expect(await variantsOf(stores[0], conn)).toHaveLength(3);
    }
  });

  test('the same name twice at once: one made, the other told it exists, and its slot is not kept', async () => {
    const stores = [new SyncStore(testDb.db()), new SyncStore(other.db(testDb.db().databaseName))];
    const results = await Promise.all(stores.map((s) => s.createVariant(state('twin', 'same'), opts).then((r) => (typeof r === 'string' ? r : 'created'))));
    expect(results.sort()).toEqual(['created', 'exists']);
    expect(await testDb.db().collection('sync_variant_slots').countDocuments({ connection: 'twin' })).toBe(1);
    // Also for the last slot: the one that finds it taken is told the name exists, not that the sync is full.
    for (const v of ['a', 'b']) await stores[0].createVariant(state('twin-last', v), opts);
    const last = await Promise.all(stores.map((s) => s.createVariant(state('twin-last', 'same'), opts).then((r) => (typeof r === 'string' ? r : 'created'))));
    expect(last.sort()).toEqual(['created', 'exists']);
  });

  test('a deleted variant frees its slot; variants made before slots count against the limit; a connection delete frees all', async () => {
    const store = new SyncStore(testDb.db());
    // Two variants of an earlier version: no slot.
    for (const v of ['old1', 'old2']) await store.create(state('legacy', v));
    expect(await store.createVariant(state('legacy', 'new1'), opts)).toMatchObject({ variant: 'new1' });
    expect(await store.createVariant(state('legacy', 'new2'), opts)).toBe('full');
    expect(await store.createVariant(state('legacy', 'old1'), opts)).toBe('exists');

    await store.delete({ connection: 'legacy', name: 'user-files', variant: 'new1' });
    expect(await store.createVariant(state('legacy', 'new2'), opts)).toMatchObject({ variant: 'new2' });
    await store.delete({ connection: 'legacy', name: 'user-files', variant: 'old1' });
    expect(await store.createVariant(state('legacy', 'new3'), opts)).toMatchObject({ variant: 'new3' });
    expect(await store.createVariant(state('legacy', 'new4'), opts)).toBe('full');
    expect((await variantsOf(store, 'legacy')).sort()).toEqual(['new2', 'new3', 'old2']);

    await store.deleteForConnection('legacy');
    expect(await testDb.db().collection('sync_variant_slots').countDocuments({ connection: 'legacy' })).toBe(0);
    for (const v of ['a', 'b', 'c']) expect(await store.createVariant(state('legacy', v), opts)).toMatchObject({ variant: v });
  });

  test('a slot left by a create that stopped half-way is free again once abandoned, not before', async () => {
    const store = new SyncStore(testDb.db());
    for (const v of ['a', 'b']) await store.createVariant(state('crashed', v), opts);
    // A process took the last slot and stopped before writing its state.
    const slots = testDb.db().collection<{ _id: string; connection: string; variant: string; claimed_at: Date }>('sync_variant_slots');
    await slots.insertOne({ _id: 'crashed|user-files|2', connection: 'crashed', variant: 'lost', claimed_at: new Date() });
    expect(await store.createVariant(state('crashed', 'c'), opts)).toBe('full');
    await slots.updateOne({ _id: 'crashed|user-files|2' }, { $set: { claimed_at: new Date(Date.now() - 120_000) } });
    expect(await store.createVariant(state('crashed', 'c'), opts)).toMatchObject({ variant: 'c', slot: 2 });
  });
});
