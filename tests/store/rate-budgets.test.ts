import { randomBytes } from 'node:crypto';
import { MongoClient, type CommandSucceededEvent, type Db } from 'mongodb';
import { RateBudgetStore } from '../../store/rate-budgets';
import { testInfra } from '../support/weft-stack';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The shared budget on the real MongoDB-wire server, raced by "workers" on clients of their own. */
describe('RateBudgetStore', () => {
  const clients: MongoClient[] = [];
  const dbName = `weft_budget_${randomBytes(4).toString('hex')}`;
  /** A client of its own, as another process has. */
  const connect = async (): Promise<MongoClient> => {
    const client = new MongoClient(testInfra().mongodbUri, { monitorCommands: true });
    await client.connect();
    clients.push(client);
    return client;
  };
  let db: Db;

  beforeAll(async () => {
    db = (await connect()).db(dbName);
    await new RateBudgetStore(db).ensureIndexes();
  });
  afterAll(async () => {
    await db.dropDatabase().catch(() => undefined);
    await Promise.all(clients.map((c) => c.close()));
  });

  /** What one operation costs the database: commands by name and documents the reads returned. */
  async function costOf(client: MongoClient, op: () => Promise<unknown>): Promise<{ commands: Record<string, number>; docsRead: number }> {
    const commands: Record<string, number> = {};
    let docsRead = 0;
    const listener = (e: CommandSucceededEvent) => {
      commands[e.commandName] = (commands[e.commandName] ?? 0) + 1;
      const batch = (e.reply as { cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
      docsRead += (batch?.firstBatch ?? batch?.nextBatch ?? []).length;
    };
    client.on('commandSucceeded', listener);
    try {
      await op();
    } finally {
      client.off('commandSucceeded', listener);
    }
    return { commands, docsRead };
  }

  test('claimers in two processes racing never have more than the limit in a window', async () => {
    const LIMIT = 10;
    const WINDOW = 400;
    const key = 'luma:race';
    const a = new RateBudgetStore((await connect()).db(dbName));
    const b = new RateBudgetStore((await connect()).db(dbName));
    // Per claimed number: when its request went, and when its answer came back.
    const sent = new Map<number, number>();
    const answered = new Map<number, number>();
    const run = async (store: RateBudgetStore, requests: number) => {
      for (let i = 0; i < requests;) {
        const g = await store.tryAcquire(key, LIMIT, WINDOW);
        if (!g.acquired) {
          await sleep(g.waitMs);
          continue;
        }
        const n = Number(g.slotId.split('#')[1]);
        sent.set(n, Date.now());
        await sleep(Math.floor(Math.random() * 30)); // the provider's answer time
        const at = new Date();
        answered.set(n, at.getTime());
        await store.markCompleted(g.slotId, at);
        i += 1;
      }
    };
    await Promise.all([run(a, 15), run(b, 15), run(a, 5), run(b, 5)]);
    // Every claim has a number of its own, one after another.
    expect([...sent.keys()].sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // A request went only a window after every request `LIMIT` or more numbers before it was
    // answered: wherever the provider counted each (between send and answer), no window holds
    // more than LIMIT of them.
    for (const [n, at] of sent) {
      for (let older = 1; older <= n - LIMIT; older += 1) expect(at - answered.get(older)!).toBeGreaterThanOrEqual(WINDOW);
    }
    // And the time of each claim in the log is the time of its answer.
    const log = await db.collection('rate_budget_log').find({ key }).toArray();
    expect(log.map((e) => (e.at as Date).getTime()).sort()).toEqual([...answered.values()].sort());
  });

  test('a claim costs the same few commands and documents at limit 10 and 300, with 1 or 100 accounts of history and 1 or 100 claimers', async () => {
    const client = await connect();
    const clientDb = client.db(dbName);
    // A window of 1 ms: every earlier request is out of it by the next claim, so none waits.
    const WINDOW = 1;
    /**
     * A key whose log holds over 2 × limit + `claimers` answered requests, claimed by `claimers`
     * processes in turn (each has seen the others' claims only up to its own last one), then
     * the cost of the next claim, by the process that claimed longest ago.
     */
    const measure = async (label: string, limit: number, claimers: number, otherKeys: number) => {
      const key = `luma:${label}`;
      const stores = Array.from({ length: claimers }, () => new RateBudgetStore(clientDb));
      for (let i = 0; i < otherKeys; i += 1) {
        const g = await stores[0].tryAcquire(`luma:${label}-other-${i}`, limit, WINDOW);
        if (g.acquired) await stores[0].markCompleted(g.slotId);
      }
      // Ending at the same place between two moves of the head (every 8 claims) whatever the limit.
      const history = Math.ceil((2 * limit + claimers) / 8) * 8 + 3;
      for (let i = 0; i < history; i += 1) {
        const g = await stores[i % claimers].tryAcquire(key, limit, WINDOW);
        if (!g.acquired) throw new Error(`history claim ${i} refused`);
        await stores[i % claimers].markCompleted(g.slotId);
      }
      const next = stores[history % claimers];
      let grant: Awaited<ReturnType<RateBudgetStore['tryAcquire']>> | undefined;
      const claim = await costOf(client, async () => (grant = await next.tryAcquire(key, limit, WINDOW)));
      expect(grant?.acquired).toBe(true);
      const complete = await costOf(client, () => next.markCompleted((grant as { slotId: string }).slotId));
      // A process that never claimed on this key (reads the head first).
      const fresh = new RateBudgetStore(clientDb);
      const cold = await costOf(client, () => fresh.tryAcquire(key, limit, WINDOW));
      return { claim, complete, cold };
    };
    const small = await measure('small', 10, 1, 0);
    const large = await measure('large', 300, 1, 100);
    const sharedSmall = await measure('shared-small', 10, 100, 0);
    const sharedLarge = await measure('shared-large', 300, 100, 100);

    // One read and one insert; the answer, one update.
    expect(small.claim).toEqual({ commands: { find: 1, insert: 1 }, docsRead: 3 });
    expect(large.claim).toEqual(small.claim);
    expect(small.complete).toEqual({ commands: { update: 1 }, docsRead: 0 });
    expect(large.complete).toEqual(small.complete);
    // A process new to the key reads the head too, and from it (it lags by up to 8 claims) a
    // few more entries: at most the head, the 8 claims past it and 10 from the one replaced.
    for (const { cold } of [small, large, sharedSmall, sharedLarge]) {
      expect(cold.commands).toEqual({ find: 2, insert: 1 });
      expect(cold.docsRead).toBeLessThanOrEqual(19);
    }
    // 99 claims of other processes since this one last looked: it goes on from the head, so
    // at most two more reads and the look-ahead's entries, the same whatever the limit.
    for (const { claim } of [sharedSmall, sharedLarge]) {
      expect(claim.commands).toEqual({ find: 3, insert: 1 });
      expect(claim.docsRead).toBeLessThanOrEqual(40);
    }
  }, 300_000);

  test('a refused claim says when its slot frees, and a claim at that time gets it', async () => {
    const store = new RateBudgetStore((await connect()).db(dbName));
    const key = 'luma:timer';
    for (let i = 0; i < 3; i += 1) {
      const g = await store.tryAcquire(key, 3, 500);
      if (!g.acquired) throw new Error('refused under the limit');
      await store.markCompleted(g.slotId);
    }
    const refused = await store.tryAcquire(key, 3, 500);
    expect(refused.acquired).toBe(false);
    if (refused.acquired) return;
    expect(refused.waitMs).toBeGreaterThan(0);
    expect(refused.waitMs).toBeLessThanOrEqual(500);
    await sleep(refused.waitMs);
    expect((await store.tryAcquire(key, 3, 500)).acquired).toBe(true);
  });

  test('a request that never reported back (its process died) stops counting at its deadline', async () => {
    const DEADLINE = 600;
    const WINDOW = 200;
    const key = 'luma:crashed';
    const dead = new RateBudgetStore((await connect()).db(dbName), { requestDeadlineMs: DEADLINE });
    const crashed = await dead.tryAcquire(key, 1, WINDOW);
    expect(crashed.acquired).toBe(true);
    // Never completed. Another process:
    const alive = new RateBudgetStore((await connect()).db(dbName), { requestDeadlineMs: DEADLINE });
    const early = await alive.tryAcquire(key, 1, WINDOW);
    expect(early.acquired).toBe(false);
    // Were it answered now it would count a window from now: that is when to look again.
    if (!early.acquired) expect(early.waitMs).toBeLessThanOrEqual(WINDOW);
    await sleep(DEADLINE + WINDOW + 50);
    const later = await alive.tryAcquire(key, 1, WINDOW);
    expect(later).toEqual({ acquired: true, slotId: `${key}#2` });
  });

  test('a lockout holds the whole budget until it ends', async () => {
    const store = new RateBudgetStore(db);
    // Far longer than the 300 ms window, with room for a slow machine between the calls.
    const until = Date.now() + 3_000;
    await store.blockUntil('luma:locked', 5, 300, new Date(until));
    const g = await store.tryAcquire('luma:locked', 5, 300);
    expect(g.acquired).toBe(false);
    if (!g.acquired) expect(g.waitMs).toBeGreaterThan(300);
    await sleep(until - Date.now() + 100);
    expect((await new RateBudgetStore(db).tryAcquire('luma:locked', 5, 300)).acquired).toBe(true);
  });

  test('entries written by the previous version count until their deadline, then free', async () => {
    const key = 'luma:upgraded';
    const now = Date.now();
    // The previous version's entries: no `done`, `at` the answer's time; its head.
    const old = (n: number, at: number) => ({ _id: `${key}#${n}`, key, n, at: new Date(at), expires_at: new Date(now + 600_000) });
    await db.collection<any>('rate_budget_log').insertMany([old(1, now - 120_000), old(2, now - 120_000), old(3, now - 1_000), old(4, now - 1_000)]);
    await db.collection<any>('rate_budget_heads').insertOne({ _id: key, n: 4 });
    const store = new RateBudgetStore(db, { requestDeadlineMs: 60_000 });
    // Limit 2: claim 5 replaces entry 3, a second old: counted as in flight, so not yet.
    expect((await store.tryAcquire(key, 2, 1_000)).acquired).toBe(false);
    // Limit 4: claim 5 replaces entry 1, two minutes old: past deadline and window.
    expect(await store.tryAcquire(key, 4, 1_000)).toEqual({ acquired: true, slotId: `${key}#5` });
  });
});
