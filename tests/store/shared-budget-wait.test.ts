import { randomBytes } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { RateLimitedError } from '../../runtime/errors';
import { createSharedRequestBudget, type BudgetStore } from '../../runtime/http/request-budget';
import { RateBudgetStore } from '../../store/rate-budgets';
import { testInfra } from '../support/weft-stack';

/**
 * Waiting for a shared budget is a timer, not a poll: requests of one process waiting for
 * one account stand in line, and only the first asks the store, once to learn when its
 * slot frees and once when it does.
 */
describe('waiting for a shared request budget', () => {
  let client: MongoClient;
  let db: Db;
  const dbName = `weft_budget_wait_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    client = new MongoClient(testInfra().mongodbUri);
    await client.connect();
    db = client.db(dbName);
    await new RateBudgetStore(db).ensureIndexes();
  });
  afterAll(async () => {
    await db.dropDatabase().catch(() => undefined);
    await client.close();
  });

  /** The real store, counting the claims it is asked for. */
  function countingStore(): { store: BudgetStore; claims: () => number } {
    const real = new RateBudgetStore(db);
    let claims = 0;
    return {
      store: {
        tryAcquire: (key, limit, windowMs) => {
          claims += 1;
          return real.tryAcquire(key, limit, windowMs);
        },
        markCompleted: (slotId) => real.markCompleted(slotId),
        blockUntil: (key, limit, windowMs, until) => real.blockUntil(key, limit, windowMs, until),
      },
      claims: () => claims,
    };
  }

  const gate = (store: BudgetStore, key: string, requests: number, windowMs: number, maxInlineWaitMs: number) =>
    createSharedRequestBudget({ store, key, requests, windowMs, maxInlineWaitMs, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });

  test('twelve requests waiting at once: at most two claims asked per request, all granted', async () => {
    const { store, claims } = countingStore();
    const budget = gate(store, `acct-line-${randomBytes(3).toString('hex')}`, 3, 300, 10_000);
    const waited = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const ticket = await budget.acquire();
        await ticket.release();
        return ticket.waitedMs;
      }),
    );
    expect(waited).toHaveLength(12);
    expect(waited.filter((ms) => ms > 0).length).toBeGreaterThanOrEqual(9);
    // Three go at once; each of the nine others: one claim refused (when does it free?), one granted.
    expect(claims()).toBeLessThanOrEqual(3 + 2 * 9);
  });

  test('a budget used up for longer than the inline wait: every waiting request is told so from one claim', async () => {
    const { store, claims } = countingStore();
    const key = `acct-busy-${randomBytes(3).toString('hex')}`;
    const budget = gate(store, key, 2, 5_000, 200);
    for (let i = 0; i < 2; i += 1) await (await budget.acquire()).release();
    const before = claims();
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => budget.acquire()));
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      const err = (o as PromiseRejectedResult).reason;
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).waitMs).toBeGreaterThan(200);
    }
    expect(claims() - before).toBe(1);
  });
});
