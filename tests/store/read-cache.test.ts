import { randomUUID } from 'node:crypto';
import { ConnectionStore, type NewConnection } from '../../store/connections';
import { EnvironmentStore } from '../../store/environments';
import { IntegrationStore, type NewIntegration } from '../../store/integrations';
import { READ_CACHE_TTL_MS, ReadCache } from '../../store/read-cache';
import { useTestDatabase } from '../support/test-database';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The proxy's hot-path caches (store/read-cache.ts): two store instances on one database
 * stand for two processes. A change made through this process's store is seen at once; one
 * made by another process within READ_CACHE_TTL_MS, never later.
 */
describe('read caches of the hot lookups', () => {
  const testDb = useTestDatabase('weft_read_cache');

  const newConnection = (connectionId: string): NewConnection => ({
    _id: randomUUID(),
    environment: 'dev',
    provider_config_key: 'luma',
    provider: 'luma',
    connection_id: connectionId,
    auth_mode: 'API_KEY',
    credentials_encrypted: 'sealed-1',
    connection_config: {},
    metadata: {},
    tags: {},
  });

  test('connections: own writes at once, another process within the bound; a new connection is found at once', async () => {
    const here = new ConnectionStore(testDb.db());
    const elsewhere = new ConnectionStore(testDb.db());
    await here.ensureIndexes();
    const key = (connectionId: string) => ({ environment: 'dev', providerConfigKey: 'luma', connectionId });

    // Not found is not cached: created by another process, found by this one at once.
    expect(await here.findRecent(key('c-1'))).toBeNull();
    const c1 = await elsewhere.create(newConnection('c-1'));
    const c2 = await elsewhere.create(newConnection('c-2'));
    expect((await here.findRecent(key('c-1')))?._id).toBe(c1._id);
    expect((await here.findRecent(key('c-2')))?._id).toBe(c2._id);

    // This process's own write (a refreshed credential, a delete): seen at once.
    await here.updateCredentials(c1._id, 'sealed-2');
    expect((await here.findRecent(key('c-1')))?.credentials_encrypted).toBe('sealed-2');
    await here.delete(c1._id);
    expect(await here.findRecent(key('c-1'))).toBeNull();

    // Another process's delete: the cached document is served for at most the bound.
    expect((await here.findRecent(key('c-2')))?._id).toBe(c2._id); // cached again (the own writes dropped it)
    const deletedAt = Date.now();
    await elsewhere.delete(c2._id);
    expect(await elsewhere.findRecent(key('c-2'))).toBeNull();
    expect((await here.findRecent(key('c-2')))?._id).toBe(c2._id);
    while ((await here.findRecent(key('c-2'))) !== null) await sleep(100);
    expect(Date.now() - deletedAt).toBeLessThanOrEqual(READ_CACHE_TTL_MS + 500);
  });

  test('secret keys: a key this process replaces stops at once, one replaced elsewhere within the bound; the new key works at once', async () => {
    const here = new EnvironmentStore(testDb.db());
    const elsewhere = new EnvironmentStore(testDb.db());
    await here.ensureIndexes();
    await here.ensure('env-c', 'weft_sk_cache_key_1');
    expect(await here.environmentForSecretKey('weft_sk_cache_key_1')).toBe('env-c');
    expect(await here.environmentForSecretKey('weft_sk_unknown_key')).toBeNull();

    await here.ensure('env-c', 'weft_sk_cache_key_2');
    expect(await here.environmentForSecretKey('weft_sk_cache_key_1')).toBeNull();
    expect(await here.environmentForSecretKey('weft_sk_cache_key_2')).toBe('env-c');

    const replacedAt = Date.now();
    await elsewhere.ensure('env-c', 'weft_sk_cache_key_3');
    expect(await here.environmentForSecretKey('weft_sk_cache_key_2')).toBe('env-c'); // still, for now
    expect(await here.environmentForSecretKey('weft_sk_cache_key_3')).toBe('env-c');
    while ((await here.environmentForSecretKey('weft_sk_cache_key_2')) !== null) await sleep(100);
    expect(Date.now() - replacedAt).toBeLessThanOrEqual(READ_CACHE_TTL_MS + 500);
  });

  test('integrations: an own delete at once, a delete by another process within the bound', async () => {
    const here = new IntegrationStore(testDb.db());
    const elsewhere = new IntegrationStore(testDb.db());
    await here.ensureIndexes();
    const input = (unique_key: string): NewIntegration => ({ _id: randomUUID(), environment: 'dev', unique_key, provider: 'luma', display_name: unique_key });
    await elsewhere.create(input('i-1'));
    await elsewhere.create(input('i-2'));
    expect((await here.getRecent('dev', 'i-1'))?.unique_key).toBe('i-1');
    expect((await here.getRecent('dev', 'i-2'))?.unique_key).toBe('i-2');
    await here.delete('dev', 'i-1');
    expect(await here.getRecent('dev', 'i-1')).toBeNull();
    expect((await here.getRecent('dev', 'i-2'))?.unique_key).toBe('i-2'); // cached again (the own delete dropped it)
    const deletedAt = Date.now();
    await elsewhere.delete('dev', 'i-2');
    expect((await here.getRecent('dev', 'i-2'))?.unique_key).toBe('i-2');
    while ((await here.getRecent('dev', 'i-2')) !== null) await sleep(100);
    expect(Date.now() - deletedAt).toBeLessThanOrEqual(READ_CACHE_TTL_MS + 500);
  });

  test('concurrent reads of a key share one load; a read after a write does not join a load begun before it', async () => {
    const cache = new ReadCache<string>(60_000);
    let loads = 0;
    let finish!: (v: string) => void;
    const slow = () => {
      loads += 1;
      return new Promise<string>((r) => (finish = r));
    };
    const together = Array.from({ length: 32 }, () => cache.get('k', slow));
    expect(loads).toBe(1);
    finish('v1');
    expect(await Promise.all(together)).toEqual(Array.from({ length: 32 }, () => 'v1'));

    const other = new ReadCache<string>(60_000);
    const before = other.get('k', slow);
    other.clear(); // a write of this process, while the read is out
    const after = other.get('k', async () => 'after the write');
    finish('before the write');
    expect(await before).toBe('before the write');
    expect(await after).toBe('after the write');
    // A failed load is not kept for the next read either.
    const failing = new ReadCache<string>(60_000);
    await expect(failing.get('k', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(await failing.get('k', async () => 'back')).toBe('back');
  });

  test('a read under way while this process writes is not kept (it may predate the write)', async () => {
    const cache = new ReadCache<string>(60_000);
    let finish!: (v: string) => void;
    const pending = cache.get('k', () => new Promise<string>((r) => (finish = r)));
    cache.clear(); // a write of this process, while the read is out
    finish('old');
    expect(await pending).toBe('old');
    expect(await cache.get('k', async () => 'new')).toBe('new');
    expect(await cache.get('k', async () => 'newer')).toBe('new');
  });
});
