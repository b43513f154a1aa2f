import { randomBytes } from 'node:crypto';
import { MongoClient, type CommandStartedEvent, type Document } from 'mongodb';
import { ApiRateCounterStore, type RateDecision } from '../../store/api-rate-counters';
import { createStores, ensureIndexes } from '../../store/db';
import { testInfra } from '../support/weft-stack';
import { waitUntil } from '../support/wait';

/**
 * The API's request counter on the real MongoDB-wire server, shared by "API processes": each
 * has its own client and its own store (its own memory), as separate processes would, and
 * only the database in common.
 */
describe('ApiRateCounterStore', () => {
  const dbName = `weft_api_rate_${randomBytes(4).toString('hex')}`;
  const clients: MongoClient[] = [];
  /** Commands the stores sent (the test reads through `inspect`, which is not watched). */
  const commands: CommandStartedEvent[] = [];
  let inspect: MongoClient;

  beforeAll(async () => {
    inspect = new MongoClient(testInfra().mongodbUri);
    await inspect.connect();
  });

  async function apiProcess(): Promise<ApiRateCounterStore> {
    const client = new MongoClient(testInfra().mongodbUri, { retryWrites: false, monitorCommands: true });
    client.on('commandStarted', (e) => commands.push(e));
    await client.connect();
    clients.push(client);
    const store = new ApiRateCounterStore(client.db(dbName));
    await store.ensureIndexes();
    // Ten connections open before any race: a process still opening its pool on a busy box
    // could otherwise find the limit used up by the other before its first request.
    await Promise.all(Array.from({ length: 10 }, () => client.db(dbName).command({ ping: 1 })));
    return store;
  }

  afterAll(async () => {
    await inspect
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await Promise.all([inspect, ...clients].map((c) => c.close()));
  });

  test('its expired blocks are swept where the server has no TTL index (the worker sweeps the rules ensureIndexes returns)', async () => {
    const db = inspect.db(dbName);
    const native = await db
      .collection('ttl_probe')
      .createIndex({ at: 1 }, { expireAfterSeconds: 1 })
      .then(
        () => true,
        () => false,
      );
    const rules = await ensureIndexes(createStores(db));
    expect(rules.some((r) => r.collection.collectionName === 'api_rate_blocks')).toBe(!native);
  });

  /** Ten requests at a time through each store until each is refused; what was admitted. */
  async function drain(stores: ApiRateCounterStore[], key: string, limit: number, now: number): Promise<number[]> {
    const admittedBy = stores.map(() => 0);
    const client = async (store: ApiRateCounterStore, i: number) => {
      for (;;) {
        const d = await store.take(key, { limit, windowMs: 60_000 }, now);
        if (!d.allowed) return;
        admittedBy[i] += 1;
      }
    };
    await Promise.all(stores.flatMap((s, i) => Array.from({ length: 10 }, () => client(s, i))));
    return admittedBy;
  }

  test('two processes racing admit exactly the limit: no count lost, none over (blocks of 16)', async () => {
    const [a, b] = [await apiProcess(), await apiProcess()];
    const blocks = inspect.db(dbName).collection('api_rate_blocks');
    // Under a loaded CI run one process can use up the whole limit before the other's first
    // answer: that round was no race, so it is run again (each round's counts must be exact).
    let admittedBy = [0, 0];
    for (let round = 0; round < 4 && !(Math.min(...admittedBy) > 0); round++) {
      await blocks.deleteMany({});
      admittedBy = await drain([a, b], 'dev', 3_200, Date.parse('2030-01-01T00:00:00Z') + round * 600_000);
      expect(admittedBy[0] + admittedBy[1]).toBe(3_200);
      expect(await blocks.countDocuments()).toBe(200);
    }
    // Both took part in a round (it was a race, not one process after the other).
    expect(Math.min(...admittedBy)).toBeGreaterThan(0);
  });

  test('small limits count request by request, exactly, across processes', async () => {
    const [a, b] = [await apiProcess(), await apiProcess()];
    const admittedBy = await drain([a, b], 'prod', 25, Date.parse('2030-01-01T00:00:00Z'));
    expect(admittedBy[0] + admittedBy[1]).toBe(25);
  });

  test('one process: remaining counts down exactly, then refusals until the window ends', async () => {
    const store = await apiProcess();
    const windowMs = 60_000;
    const start = Date.parse('2030-01-01T00:10:00Z');
    const decisions: RateDecision[] = [];
    for (let i = 0; i < 7; i += 1) decisions.push(await store.take('one', { limit: 5, windowMs }, start + i));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    expect(new Set(decisions.map((d) => d.resetAt))).toEqual(new Set([start + windowMs]));

    const next = await store.take('one', { limit: 5, windowMs }, start + windowMs);
    expect(next).toMatchObject({ allowed: true, remaining: 4, resetAt: start + 2 * windowMs });
  });

  test('ended windows are deleted by _id one window later, and every lookup goes by _id', async () => {
    const store = await apiProcess();
    const col = inspect.db(dbName).collection('api_rate_blocks');
    const windowMs = 60_000;
    const t0 = Date.parse('2030-01-01T01:00:00Z');
    commands.length = 0;
    for (let i = 0; i < 3; i += 1) await store.take('gc', { limit: 3, windowMs }, t0);
    await store.take('gc', { limit: 3, windowMs }, t0 + windowMs);
    const idsOf = async () => (await col.find({}, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)).filter((id) => id.endsWith(':gc'));
    expect(await idsOf()).toHaveLength(4); // the first window's 3 are kept for a window of grace
    await store.take('gc', { limit: 3, windowMs }, t0 + 2 * windowMs);
    await waitUntil(async () => (await idsOf()).length === 2, { timeoutMs: 5_000, what: 'both ids' });
    expect((await idsOf()).every((id) => !id.startsWith(`${t0}:`))).toBe(true);

    // FerretDB's SQLite backend reads the whole table for any filter not on _id alone.
    const store2 = await apiProcess();
    await store.take('race', { limit: 2, windowMs }, t0);
    await store2.take('race', { limit: 2, windowMs }, t0); // loses block 0, probes by _id $in
    const ours = commands.filter((c) => commandCollection(c) === 'api_rate_blocks');
    expect(ours.map((c) => c.commandName)).toEqual(expect.arrayContaining(['insert', 'delete', 'find']));
    for (const c of ours) {
      const filters: Document[] = c.commandName === 'find' ? [c.command.filter] : c.commandName === 'delete' ? c.command.deletes.map((d: Document) => d.q) : [];
      for (const f of filters) expect(Object.keys(f)).toEqual(['_id']);
    }
  });
});

function commandCollection(c: CommandStartedEvent): unknown {
  return c.command[c.commandName];
}
