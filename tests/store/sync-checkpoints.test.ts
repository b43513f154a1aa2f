import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { SyncStore } from '../../store/syncs';
import { testInfra } from '../support/weft-stack';

/** Sync checkpoints live apart from the sync's status document (they can be hundreds of KB). */
describe('SyncStore checkpoints', () => {
  let client: MongoClient;
  const dbName = `weft_syncs_${randomBytes(4).toString('hex')}`;
  const key = { connection: 'conn-1', name: 'user-files', variant: 'base' };
  const ensure = (store: SyncStore, k = key) =>
    store.ensure({ environment: 'dev', connection: k.connection, connection_id: 'c', provider_config_key: 'one-drive', name: k.name, variant: k.variant });

  beforeAll(async () => {
    client = new MongoClient(testInfra().mongodbUri, { retryWrites: false });
    await client.connect();
  });
  afterAll(async () => {
    await client.db(dbName).dropDatabase().catch(() => undefined);
    await client.close();
  });

  test('saved, read back, kept out of the status document, and cleared by a reset', async () => {
    const store = new SyncStore(client.db(dbName));
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
    const store = new SyncStore(client.db(dbName));
    const old = { ...key, connection: 'conn-old' };
    await ensure(store, old);
    await client.db(dbName).collection('syncs').updateOne({ connection: 'conn-old' }, { $set: { checkpoint: { cursor: 'legacy' } } });
    expect(await store.getCheckpoint(old)).toEqual({ cursor: 'legacy' });
    await store.saveCheckpoint(old, { cursor: 'new' });
    expect(await store.getCheckpoint(old)).toEqual({ cursor: 'new' });
    await store.reset(old);
    expect(await store.getCheckpoint(old)).toBeNull();

    await store.deleteForConnection('conn-old');
    expect(await client.db(dbName).collection('sync_checkpoints').countDocuments({ connection: 'conn-old' })).toBe(0);
  });
});
