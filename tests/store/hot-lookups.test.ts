import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { ConnectionStore, type NewConnection } from '../../store/connections';
import { IntegrationStore } from '../../store/integrations';
import { EnvironmentStore, hashSecretKey } from '../../store/environments';
import { SyncStore } from '../../store/syncs';
import { RateBudgetStore } from '../../store/rate-budgets';
import { ALIAS_IN_FLIGHT_MS } from '../../store/key-aliases';
import { AlreadyExistsError } from '../../common/errors';
import { useTestDatabase } from '../support/test-database';
import { recordFilters, selectsByIdOnly } from '../support/command-filters';
import { testInfra } from '../support/weft-stack';

/**
 * The lookups every request makes (environment by secret key, integration by unique key,
 * connection by (environment, integration, connection id), sync state by (connection, sync,
 * variant), rate budget by key) keep their meaning, and reach the database by `_id` only:
 * FerretDB's SQLite backend answers nothing else from an index.
 */
describe('hot lookups by _id', () => {
  const testDb = useTestDatabase('weft_hot');
  let monitored: MongoClient;
  /** The same database through a client that reports every command. */
  let db: Db;

  beforeAll(async () => {
    monitored = new MongoClient(testInfra().mongodbUri, { retryWrites: false, monitorCommands: true });
    await monitored.connect();
    db = monitored.db(testDb.db().databaseName);
  });
  afterAll(async () => {
    await monitored.close();
  });

  const newConnection = (over: Partial<NewConnection> = {}): NewConnection => ({
    _id: randomUUID(),
    environment: 'dev',
    provider_config_key: 'luma',
    provider: 'luma',
    connection_id: 'user-1',
    auth_mode: 'API_KEY',
    credentials_encrypted: 'sealed',
    connection_config: {},
    metadata: {},
    tags: {},
    ...over,
  });

  /** Runs `fn` and returns the commands it sent that select documents by anything but `_id`. */
  async function scansDuring(fn: () => Promise<unknown>): Promise<string[]> {
    const rec = recordFilters(monitored);
    try {
      await fn();
    } finally {
      rec.stop();
    }
    expect(rec.commands.length).toBeGreaterThan(0);
    return rec.commands.filter((c) => !selectsByIdOnly(c.filter)).map((c) => `${c.command} ${c.collection} ${JSON.stringify(c.filter)}`);
  }

  describe('connections', () => {
    test('found by key, 409 for a second one with the same key, isolated per environment and integration', async () => {
      const store = new ConnectionStore(db);
      await store.ensureIndexes();
      const a = await store.create(newConnection({ connection_id: 'dup' }));
      const err = await store.create(newConnection({ connection_id: 'dup' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AlreadyExistsError);
      expect(err).toMatchObject({ code: 'duplicate_connection', status: 409 });
      // The same connection id elsewhere is another connection.
      const prod = await store.create(newConnection({ environment: 'prod', connection_id: 'dup' }));
      const other = await store.create(newConnection({ provider_config_key: 'luma-2', connection_id: 'dup' }));
      expect((await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'dup' }))?._id).toBe(a._id);
      expect((await store.find({ environment: 'prod', providerConfigKey: 'luma', connectionId: 'dup' }))?._id).toBe(prod._id);
      expect((await store.find({ environment: 'dev', providerConfigKey: 'luma-2', connectionId: 'dup' }))?._id).toBe(other._id);
      expect(await store.find({ environment: 'staging', providerConfigKey: 'luma', connectionId: 'dup' })).toBeNull();
      expect((await store.findInIntegrations('dev', ['luma', 'luma-2', 'nope'], 'dup')).map((c) => c._id).sort()).toEqual([a._id, other._id].sort());
    });

    test('delete then create again under the same key', async () => {
      const store = new ConnectionStore(db);
      const first = await store.create(newConnection({ connection_id: 'again' }));
      await store.delete(first._id);
      expect(await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'again' })).toBeNull();
      const second = await store.create(newConnection({ connection_id: 'again' }));
      expect((await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'again' }))?._id).toBe(second._id);
    });

    test('keys that share a prefix stay apart; an integration lists its own connections only', async () => {
      const store = new ConnectionStore(db);
      const one = await store.create(newConnection({ provider_config_key: 'gh', connection_id: 'x' }));
      await store.create(newConnection({ provider_config_key: 'gh|2', connection_id: 'x' }));
      await store.create(newConnection({ provider_config_key: 'gh2', connection_id: 'x' }));
      await store.create(newConnection({ environment: 'dev|gh', connection_id: 'x' }));
      expect((await store.listForIntegration('dev', 'gh')).map((c) => c._id)).toEqual([one._id]);
      expect(await store.find({ environment: 'dev', providerConfigKey: 'gh|2', connectionId: 'x' })).not.toBeNull();
    });

    test('a key left by a create or delete that stopped half-way: absent to readers, taken over by the next create once it is old', async () => {
      const store = new ConnectionStore(db);
      const aliases = db.collection<{ _id: string; target: string; created_at: Date }>('connection_keys');
      const key = 'dev|luma|stranded';
      await aliases.insertOne({ _id: key, target: 'gone', created_at: new Date() });
      expect(await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'stranded' })).toBeNull();
      // Young: maybe a create in flight; the key is not free yet.
      await expect(store.create(newConnection({ connection_id: 'stranded' }))).rejects.toMatchObject({ code: 'duplicate_connection' });
      await aliases.updateOne({ _id: key }, { $set: { created_at: new Date(Date.now() - ALIAS_IN_FLIGHT_MS - 1000) } });
      const created = await store.create(newConnection({ connection_id: 'stranded' }));
      expect((await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'stranded' }))?._id).toBe(created._id);
    });

    test('connections stored by an earlier version (no key entry) are found after start-up', async () => {
      const store = new ConnectionStore(db);
      await store.ensureIndexes();
      const old = { ...newConnection({ connection_id: 'legacy' }), auth_status: 'ok', last_auth_error: null, created_at: new Date(), updated_at: new Date() };
      await db.collection<any>('connections').insertOne(old);
      await db.collection<any>('store_migrations').deleteOne({ _id: 'connection_keys' });
      // Two processes starting together both run the backfill; it is idempotent.
      await Promise.all([new ConnectionStore(db).ensureIndexes(), new ConnectionStore(db).ensureIndexes()]);
      expect((await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'legacy' }))?._id).toBe(old._id);
      await expect(store.create(newConnection({ connection_id: 'legacy' }))).rejects.toMatchObject({ code: 'duplicate_connection' });
    });

    test('connections stored by an earlier version are listed by tag and integration after start-up; a stale listing key is passed over', async () => {
      const store = new ConnectionStore(db);
      await store.ensureIndexes();
      const at = new Date();
      const old = {
        ...newConnection({ environment: 'listing', connection_id: 'legacy', tags: { Team: 'red' } }),
        auth_status: 'ok',
        last_auth_error: null,
        created_at: at,
        updated_at: at,
      };
      await db.collection<any>('connections').insertOne(old);
      const byTag = () => store.listInScopes('listing', { tags: { team: 'red' }, match: () => true, limit: 10, page: 0 });
      const byIntegration = () => store.listInScopes('listing', { tags: {}, providerConfigKeys: ['luma'], match: () => true, limit: 10, page: 0 });
      expect(await byTag()).toEqual([]);
      await db.collection<any>('store_migrations').deleteOne({ _id: 'connection_list_keys' });
      await Promise.all([new ConnectionStore(db).ensureIndexes(), new ConnectionStore(db).ensureIndexes()]);
      expect((await byTag()).map((c) => c._id)).toEqual([old._id]);
      expect((await byIntegration()).map((c) => c._id)).toEqual([old._id]);

      // Keys naming a connection that is gone, or whose tags changed behind the store's back, list nothing.
      await db.collection<any>('connection_list_keys').insertOne({ _id: `listing|t|team|red|${at.toISOString()}|gone`, target: 'gone' });
      await db.collection<any>('connections').updateOne({ _id: old._id }, { $set: { tags: { Team: 'blue' } } });
      expect(await byTag()).toEqual([]);
      expect((await byIntegration()).map((c) => c._id)).toEqual([old._id]);
    });

    test('a connection without a key entry (lost in a race) is refused as a duplicate and listed again', async () => {
      const store = new ConnectionStore(db);
      await store.ensureIndexes(); // the backfill is done: it will not list this one
      const unlisted = {
        ...newConnection({ connection_id: 'unlisted' }),
        auth_status: 'ok',
        last_auth_error: null,
        created_at: new Date(),
        updated_at: new Date(),
      };
      await db.collection<any>('connections').insertOne(unlisted);
      await expect(store.create(newConnection({ connection_id: 'unlisted' }))).rejects.toMatchObject({ code: 'duplicate_connection' });
      expect((await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'unlisted' }))?._id).toBe(unlisted._id);
    });

    test('a lookup reads by _id only', async () => {
      const store = new ConnectionStore(db);
      const c = await store.create(newConnection({ connection_id: 'monitored' }));
      expect(
        await scansDuring(async () => {
          expect((await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'monitored' }))?._id).toBe(c._id);
          expect(await store.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'unknown' })).toBeNull();
          await store.listForIntegration('dev', 'luma');
          await store.findInIntegrations('dev', ['luma'], 'monitored');
          await store.updateMetadata(c._id, { a: 1 }, 'merge');
        }),
      ).toEqual([]);
    });
  });

  describe('integrations', () => {
    const newIntegration = (over: { environment?: string; unique_key?: string } = {}) => ({
      _id: randomUUID(),
      environment: over.environment ?? 'dev',
      unique_key: over.unique_key ?? 'luma',
      provider: 'luma',
      display_name: 'Luma',
    });

    test('found by unique key, 409 on a second, per environment; delete then create again; listed oldest first', async () => {
      const store = new IntegrationStore(db);
      await store.ensureIndexes();
      const a = await store.create(newIntegration({ unique_key: 'i-1' }));
      await expect(store.create(newIntegration({ unique_key: 'i-1' }))).rejects.toMatchObject({ code: 'duplicate_provider_config', status: 409 });
      const prod = await store.create(newIntegration({ environment: 'prod', unique_key: 'i-1' }));
      const b = await store.create(newIntegration({ unique_key: 'my.luma' }));
      expect((await store.get('dev', 'i-1'))?._id).toBe(a._id);
      expect((await store.get('prod', 'i-1'))?._id).toBe(prod._id);
      expect((await store.list('dev')).map((i) => i._id)).toEqual([a._id, b._id]);
      expect((await store.update('dev', 'i-1', { display_name: 'Renamed' }))?.display_name).toBe('Renamed');
      expect(await store.delete('dev', 'i-1')).toBe(true);
      expect(await store.get('dev', 'i-1')).toBeNull();
      expect(await store.delete('dev', 'i-1')).toBe(false);
      expect(await store.update('dev', 'i-1', { display_name: 'x' })).toBeNull();
      const again = await store.create(newIntegration({ unique_key: 'i-1' }));
      expect((await store.get('dev', 'i-1'))?._id).toBe(again._id);
      expect((await store.get('prod', 'i-1'))?._id).toBe(prod._id);
    });

    test('integrations of an earlier version are found after start-up', async () => {
      const old = {
        ...newIntegration({ unique_key: 'legacy-int' }),
        credentials_encrypted: null,
        provider_overrides: {},
        created_at: new Date(),
        updated_at: new Date(),
      };
      await db.collection<any>('integrations').insertOne(old);
      await db.collection<any>('store_migrations').deleteOne({ _id: 'integration_keys' });
      const store = new IntegrationStore(db);
      await store.ensureIndexes();
      expect((await store.get('dev', 'legacy-int'))?._id).toBe(old._id);
    });

    test('get, list, update and delete read by _id only', async () => {
      const store = new IntegrationStore(db);
      await store.create(newIntegration({ unique_key: 'watched' }));
      expect(
        await scansDuring(async () => {
          await store.get('dev', 'watched');
          await store.list('dev');
          await store.update('dev', 'watched', { display_name: 'W' });
          await store.delete('dev', 'watched');
        }),
      ).toEqual([]);
    });
  });

  describe('environments', () => {
    test('a secret key finds its environment; a replaced key no longer does; two environments cannot share a key', async () => {
      const store = new EnvironmentStore(db);
      await store.ensureIndexes();
      const created = await store.ensure('env-a');
      expect(created.created).toBe(true);
      expect((await store.findBySecretKey(created.secretKey!))?._id).toBe('env-a');
      await store.ensure('env-a', 'weft_sk_pinned_key_a');
      expect(await store.findBySecretKey(created.secretKey!)).toBeNull();
      expect((await store.findBySecretKey('weft_sk_pinned_key_a'))?._id).toBe('env-a');
      await expect(store.ensure('env-b', 'weft_sk_pinned_key_a')).rejects.toMatchObject({ code: 'duplicate_secret_key' });
      expect(await store.get('env-b')).toBeNull();
      expect(await store.findBySecretKey('weft_sk_unknown')).toBeNull();
    });

    test('environments of an earlier version authenticate after start-up, by _id only', async () => {
      await db.collection<any>('environments').insertOne({
        _id: 'legacy-env',
        secret_key_hash: hashSecretKey('weft_sk_legacy'),
        secret_key_hint: 'gacy',
        created_at: new Date(),
        updated_at: new Date(),
      });
      await db.collection<any>('store_migrations').deleteOne({ _id: 'environment_keys' });
      const store = new EnvironmentStore(db);
      await store.ensureIndexes();
      expect(await scansDuring(async () => expect((await store.findBySecretKey('weft_sk_legacy'))?._id).toBe('legacy-env'))).toEqual([]);
    });
  });

  describe('sync states', () => {
    const input = (connection: string, name = 'list-events', variant = 'base') => ({
      environment: 'dev',
      connection,
      connection_id: 'c',
      provider_config_key: 'luma',
      name,
      variant,
    });

    test('ensure is idempotent under concurrency; a connection lists its own syncs only, by name and variant', async () => {
      const store = new SyncStore(db);
      await store.ensureIndexes();
      const docs = await Promise.all(Array.from({ length: 8 }, () => store.ensure(input('conn-1'))));
      expect(new Set(docs.map((d) => d._id)).size).toBe(1);
      expect(await db.collection('syncs').countDocuments({ connection: 'conn-1' })).toBe(1);
      await store.ensure(input('conn-1', 'a-sync', 'v2'));
      await store.ensure(input('conn-1', 'a-sync', 'base'));
      await store.ensure(input('conn-10'));
      await store.ensure(input('conn-1|x'));
      expect((await store.listForConnection('conn-1')).map((s) => `${s.name}/${s.variant}`)).toEqual(['a-sync/base', 'a-sync/v2', 'list-events/base']);
      await store.markRunStarted({ connection: 'conn-1', name: 'list-events', variant: 'base' }, 'run-1', new Date());
      expect((await store.get({ connection: 'conn-1', name: 'list-events', variant: 'base' }))?.last_run?.id).toBe('run-1');
      // A variant with a lone surrogate (JSON "\ud800") is a key like any other, not a crash.
      await store.ensure(input('conn-1', 'list-events', 'v\ud800'));
      expect(await store.get({ connection: 'conn-1', name: 'list-events', variant: 'v\ud800' })).not.toBeNull();
    });

    test('states stored by an earlier version (random _id, unique index) keep their settings after start-up', async () => {
      const col = db.collection<any>('syncs');
      await col.createIndex({ connection: 1, name: 1, variant: 1 }, { unique: true });
      await col.insertOne({
        ...input('conn-old'),
        _id: randomUUID(),
        paused: true,
        frequency: '1h',
        last_success_started_at: null,
        last_run: null,
        record_count: { Event: 3 },
        created_at: new Date(),
        updated_at: new Date(),
      });
      await db.collection<any>('store_migrations').deleteOne({ _id: 'syncs_by_key' });
      const store = new SyncStore(db);
      await Promise.all([store.ensureIndexes(), new SyncStore(db).ensureIndexes()]);
      const key = { connection: 'conn-old', name: 'list-events', variant: 'base' };
      expect(await store.get(key)).toMatchObject({ paused: true, frequency: '1h', record_count: { Event: 3 } });
      expect(await col.countDocuments({ connection: 'conn-old' })).toBe(1);
      expect((await store.ensure(input('conn-old'))).frequency).toBe('1h');
    });

    test('get, ensure, status updates and the listing read by _id only', async () => {
      const store = new SyncStore(db);
      const key = { connection: 'conn-w', name: 'list-events', variant: 'base' };
      expect(
        await scansDuring(async () => {
          await store.ensure(input('conn-w'));
          await store.get(key);
          await store.markRunStarted(key, 'r', new Date());
          await store.markRunSucceeded(key, { id: 'r', startedAt: new Date(), result: {}, recordCount: {} });
          await store.getCheckpoint(key);
          await store.listForConnection('conn-w');
        }),
      ).toEqual([]);
    });
  });

  describe('rate budgets', () => {
    test('counting goes on across processes and a lagging head; reads are by _id only', async () => {
      const a = new RateBudgetStore(db);
      await a.ensureIndexes();
      const LIMIT = 40;
      for (let i = 0; i < LIMIT - 1; i += 1) expect((await a.tryAcquire('acct-1', LIMIT, 60_000)).acquired).toBe(true);
      // The head moves every few claims: a fresh process finds the rest by looking ahead.
      const b = new RateBudgetStore(db);
      let last: Awaited<ReturnType<RateBudgetStore['tryAcquire']>> | undefined;
      expect(await scansDuring(async () => (last = await b.tryAcquire('acct-1', LIMIT, 60_000)))).toEqual([]);
      expect(last).toMatchObject({ acquired: true, slotId: `acct-1#${LIMIT}` });
      expect((await a.tryAcquire('acct-1', LIMIT, 60_000)).acquired).toBe(false);
      expect((await b.tryAcquire('acct-1', LIMIT, 60_000)).acquired).toBe(false);
    });

    test('a log written by an earlier version (no heads) keeps counting where it was', async () => {
      const now = Date.now();
      await db
        .collection<any>('rate_budget_log')
        .insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: `acct-old#${100 + i}`, key: 'acct-old', n: 100 + i, at: new Date(now - 1000) })));
      await db.collection<any>('store_migrations').deleteOne({ _id: 'rate_budget_heads' });
      const store = new RateBudgetStore(db);
      await store.ensureIndexes();
      expect((await store.tryAcquire('acct-old', 5, 60_000)).acquired).toBe(false);
      expect(await db.collection('rate_budget_log').countDocuments({ key: 'acct-old', expires_at: { $exists: false } })).toBe(0);
    });
  });
});
