import { SyncStore } from '../../store/syncs';
import { useTestDatabase } from '../support/test-database';

/** Sync checkpoints live apart from the sync's status document (they can be hundreds of KB). */
describe('SyncStore checkpoints', () => {
  const testDb = useTestDatabase('weft_syncs');
  const key = { connection: 'conn-1', name: 'user-files', variant: 'base' };
  const ensure = (store: SyncStore, k = key) =>
    store.ensure({ environment: 'dev', connection: k.connection, connection_id: 'c', provider_config_key: 'one-drive', name: k.name, variant: k.variant });

  test('saved, read back, kept out of the status document, and cleared by a reset', async () => {
    const store = new SyncStore(testDb.db());
    await ensure(store);
    expect(await store.getCheckpoint(key)).toBeNull();
    const folders = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`folder-${i}`, `/a/b/folder ${i}`]));
    await store.saveCheckpoint(key, { version: 1, drives: { d1: { deltaLink: 'https://graph/delta?token=1', folders } } });
    await store.saveCheckpoint(key, { version: 1, drives: { d1: { deltaLink: 'https://graph/delta?token=2', folders } } });
    expect(await store.getCheckpoint(key)).toEqual({ version: 1, drives: { d1: { deltaLink: 'https://graph/delta?token=2', folders } } });
    expect((await store.get(key))!.checkpoint).toBeUndefined();

    // Another sync of the same connection has its own.
    const other = { ...key, name: 'list-drives' };
    await ensure(store, other);
    expect(await store.getCheckpoint(other)).toBeNull();

    await store.reset(key);
    expect(await store.getCheckpoint(key)).toBeNull();
    expect((await store.get(key))!.last_success_started_at).toBeNull();
  });

  test('a checkpoint stored on the status document by an older version is still read, until a reset', async () => {
    const store = new SyncStore(testDb.db());
    const old = { ...key, connection: 'conn-old' };
    await ensure(store, old);
    await testDb
      .db()
      .collection('syncs')
      .updateOne({ connection: 'conn-old' }, { $set: { checkpoint: { cursor: 'legacy' } } });
    expect(await store.getCheckpoint(old)).toEqual({ cursor: 'legacy' });
    await store.saveCheckpoint(old, { cursor: 'new' });
    expect(await store.getCheckpoint(old)).toEqual({ cursor: 'new' });
    await store.reset(old);
    expect(await store.getCheckpoint(old)).toBeNull();

    await store.deleteForConnection('conn-old');
    expect(await testDb.db().collection('sync_checkpoints').countDocuments({ connection: 'conn-old' })).toBe(0);
  });
});
