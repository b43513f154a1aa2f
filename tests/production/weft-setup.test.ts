import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { createStores } from '../../store/db';
import { testInfra } from '../support/weft-stack';
import { spawnWeft } from '../support/worker-process';

/**
 * A new deployment has a database and a Temporal namespace and nothing in them: `weft setup`
 * makes what `weft api` needs (indexes, environments with their keys) and says the keys once;
 * run again (every deploy), it changes nothing and shows no key.
 */
describe('weft setup', () => {
  const dbName = `weft_setup_${randomBytes(4).toString('hex')}`;
  let mongo: MongoClient;
  const env = () => ({
    ...process.env,
    TEMPORAL_ADDRESS: testInfra().temporalAddress,
    MONGODB_URI: testInfra().mongodbUri,
    MONGODB_DB: dbName,
    WEFT_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  });

  beforeAll(async () => {
    mongo = new MongoClient(testInfra().mongodbUri);
    await mongo.connect();
  });
  afterAll(async () => {
    await mongo?.db(dbName).dropDatabase();
    await mongo?.close();
  });

  async function runSetup(extra: Record<string, string> = {}): Promise<string> {
    const p = spawnWeft('setup', { ...env(), ...extra });
    const code = await p.exited;
    if (code !== 0) throw new Error(`weft setup exited ${code}:\n${p.output()}`);
    return p.output();
  }

  test('first run: indexes made, dev and prod created, their keys printed once; they open their environment', async () => {
    const output = await runSetup();
    const keys = Object.fromEntries([...output.matchAll(/│\s+(dev|prod)\s+(\S+)\s+│/g)].map((m) => [m[1], m[2]]));
    expect(Object.keys(keys).sort()).toEqual(['dev', 'prod']);
    expect(output).toContain('weft setup');

    const stores = createStores(mongo.db(dbName));
    expect(await stores.environments.environmentForSecretKey(keys.dev)).toBe('dev');
    expect(await stores.environments.environmentForSecretKey(keys.prod)).toBe('prod');
    const connectionIndexes = await mongo.db(dbName).collection('connections').indexes();
    expect(connectionIndexes.some((i) => i.unique && i.key.connection_id === 1)).toBe(true);

    // Again, as every deploy runs it: nothing new, no key shown.
    const again = await runSetup();
    expect(again).toMatch(/environments dev and prod exist/);
    expect(again).not.toContain(keys.dev);
    expect(await stores.environments.environmentForSecretKey(keys.dev)).toBe('dev');
  }, 120_000);

  test('a key chosen by the operator (WEFT_PROD_SECRET_KEY) replaces the stored one and is never printed', async () => {
    const chosen = `prod-key-${randomBytes(12).toString('hex')}`;
    const output = await runSetup({ WEFT_PROD_SECRET_KEY: chosen });
    expect(output).not.toContain(chosen);
    expect(output).toMatch(/environment prod: secret key from WEFT_PROD_SECRET_KEY/);
    expect(await createStores(mongo.db(dbName)).environments.environmentForSecretKey(chosen)).toBe('prod');
  }, 60_000);

  test('without the servers it stops at once, naming what is missing', async () => {
    const p = spawnWeft('setup', { PATH: process.env.PATH, HOME: process.env.HOME });
    expect(await p.exited).toBe(1);
    expect(p.output()).toMatch(/setup_not_configured/);
  }, 60_000);
});
