import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { RateBudgetStore } from '../../store/rate-budgets';
import { testInfra } from '../support/weft-stack';

/** The shared budget on the real MongoDB-wire server, raced by two "workers". */
describe('RateBudgetStore', () => {
  let client: MongoClient;
  const dbName = `weft_budget_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    client = new MongoClient(testInfra().mongodbUri);
    await client.connect();
  });
  afterAll(async () => {
    await client
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await client.close();
  });

  test('two processes racing never exceed the limit in any window', async () => {
    const LIMIT = 10;
    const WINDOW = 400;
    const a = new RateBudgetStore(client.db(dbName));
    const b = new RateBudgetStore(client.db(dbName));
    await a.ensureIndexes();
    const granted: number[] = [];
    const run = async (store: RateBudgetStore, n: number) => {
      for (let i = 0; i < n;) {
        const g = await store.tryAcquire('luma:acct', LIMIT, WINDOW);
        if (g.acquired) {
          granted.push(Date.now());
          i += 1;
        } else await new Promise((r) => setTimeout(r, g.waitMs));
      }
    };
    const started = Date.now();
    await Promise.all([run(a, 15), run(b, 15), run(a, 5), run(b, 5)]);
    expect(granted).toHaveLength(40);
    // The claims as recorded (the times the budget enforces): every claim has its own
    // entry number, and any LIMIT+1 consecutive claims span at least one window.
    const log = await client.db(dbName).collection('rate_budget_log').find({ key: 'luma:acct' }).toArray();
    expect(log).toHaveLength(40);
    const times = log.map((e) => (e.at as Date).getTime()).sort((x, y) => x - y);
    for (let i = LIMIT; i < times.length; i += 1) expect(times[i] - times[i - LIMIT]).toBeGreaterThanOrEqual(WINDOW);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * WINDOW - 20);
  });

  test('a lockout holds the whole budget until it ends', async () => {
    const store = new RateBudgetStore(client.db(dbName));
    await store.blockUntil('luma:locked', 5, 300, new Date(Date.now() + 500));
    const g = await store.tryAcquire('luma:locked', 5, 300);
    expect(g.acquired).toBe(false);
    if (!g.acquired) expect(g.waitMs).toBeGreaterThan(300);
  });
});
