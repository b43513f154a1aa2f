import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';

const DEV_KEY = 'luma-dev-api-key-0123456789';
const PROD_KEY = 'luma-prod-api-key-9876543210';
const EVENTS = 230; // five pages of 50

/** `GET /logs` on real Temporal + FerretDB: entries of real sync runs and verifications, checked against the simulator's own count. */
describe('GET /logs', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({ luma: { seed: 11, eventCount: EVENTS, maxPageSize: 50, apiKeys: [DEV_KEY, PROD_KEY] } });
    await createLumaIntegration(stack);
    await createLumaIntegration(stack, { unique_key: 'luma-b' });
    await createLumaIntegration(stack, { key: stack.keys.prod });
  });
  afterAll(async () => stack?.shutdown());

  const logs = (query: string, key?: string) => stack.api('GET', `/logs${query ? `?${query}` : ''}`, { key });

  /** Every page of a query, following `next_cursor`. */
  async function walk(query: string, key?: string): Promise<any[]> {
    const all: any[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 1_000; pages++) {
      const res = await logs(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
      expect(res.status).toBe(200);
      all.push(...res.body.logs);
      cursor = res.body.next_cursor;
      if (cursor === null) return all;
    }
    throw new Error('paging did not end');
  }

  /** Entries are written in the background (a call never waits on its log line): wait until `n` are listed. */
  async function waitForEntries(n: number, query = 'limit=1000', key?: string): Promise<any[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const all = await walk(query, key);
      if (all.length >= n || Date.now() > deadline) return all;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function connectAndSync(connectionId: string, providerConfigKey = 'luma', apiKey = DEV_KEY, env: 'dev' | 'prod' = 'dev') {
    const created = await stack.api('POST', '/connections', {
      key: stack.keys[env],
      body: { provider_config_key: providerConfigKey, connection_id: connectionId, credentials: { type: 'API_KEY', apiKey } },
    });
    expect(created.status).toBe(201);
    await stack.waitForSync(connectionId, 'list-events', { providerConfigKey, environment: env });
  }

  let devEntries: any[] = [];

  test('one entry per request the simulator received: the verification and every page of the sync, retries included', async () => {
    stack.luma.resetStats();
    await connectAndSync('user-1');
    // A failed page is retried: both attempts are entries.
    stack.luma.failNext(1, 503);
    const trigger = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } });
    expect(trigger.status).toBe(200);
    await stack.waitForSync('user-1', 'list-events');
    await connectAndSync('user-2', 'luma-b');

    const received = stack.luma.stats();
    expect(received.byStatus[503]).toBe(1);
    devEntries = await waitForEntries(received.requests);
    expect(devEntries).toHaveLength(received.requests);

    // Newest first, ids unique.
    const times = devEntries.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(devEntries.map((e) => e.id)).size).toBe(devEntries.length);

    const byOperation = (op: string) => devEntries.filter((e) => e.operation === op);
    expect(byOperation('auth')).toHaveLength(2);
    expect(byOperation('auth')[0]).toMatchObject({ method: 'GET', status: 200, attempt: 1 });
    expect(byOperation('auth')[0].url).toMatch(/\/public\/v1\/user\/get-self/);
    const syncEntries = byOperation('sync:list-events');
    expect(syncEntries.length).toBe(devEntries.length - 2);
    const failed = devEntries.filter((e) => e.status === 503);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ connection_id: 'user-1', integration: 'luma', operation: 'sync:list-events', attempt: 1 });
    const retried = devEntries.filter((e) => e.attempt === 2);
    expect(retried).toHaveLength(1);
    expect(retried[0]).toMatchObject({ status: 200, url: failed[0].url });
    for (const e of devEntries) {
      expect(e).toEqual({
        id: expect.any(String),
        at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        connection_id: expect.stringMatching(/^user-[12]$/),
        integration: expect.stringMatching(/^luma(-b)?$/),
        operation: expect.any(String),
        run_id: e.operation === 'auth' ? null : expect.any(String),
        method: 'GET',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/public\/v1\//),
        status: expect.any(Number),
        duration_ms: expect.any(Number),
        attempt: expect.any(Number),
        rate_limit_wait_ms: expect.any(Number),
        error: e.status === 503 ? expect.any(String) : null,
        provider_request_id: null,
      });
    }
  });

  test('filters: connection, integration, operation, status, time range', async () => {
    const expectSame = (got: any[], want: any[]) => expect(got.map((e) => e.id)).toEqual(want.map((e) => e.id));

    expectSame(
      await walk('connection_id=user-1&limit=7'),
      devEntries.filter((e) => e.connection_id === 'user-1'),
    );
    expectSame(
      await walk('integration=luma-b&limit=7'),
      devEntries.filter((e) => e.integration === 'luma-b'),
    );
    expectSame(await walk('connection_id=user-1&integration=luma-b'), []);
    expectSame(
      await walk('operation=auth'),
      devEntries.filter((e) => e.operation === 'auth'),
    );
    expectSame(
      await walk('operation=sync%3Alist-events&connection_id=user-2'),
      devEntries.filter((e) => e.operation === 'sync:list-events' && e.connection_id === 'user-2'),
    );
    expectSame(
      await walk('status=503'),
      devEntries.filter((e) => e.status === 503),
    );
    expectSame(
      await walk('status=5xx'),
      devEntries.filter((e) => e.status === 503),
    );
    expectSame(
      await walk('status=error'),
      devEntries.filter((e) => e.status === 503),
    );
    expectSame(
      await walk('status=2xx&limit=3'),
      devEntries.filter((e) => e.status === 200),
    );
    expectSame(await walk('status=404'), []);

    // Inclusive bounds, to the millisecond.
    const oldestFirst = [...devEntries].reverse();
    const from = oldestFirst[3].at;
    const to = oldestFirst[oldestFirst.length - 4].at;
    const inRange = devEntries.filter((e) => e.at >= from && e.at <= to);
    expect(inRange.length).toBeGreaterThan(0);
    expectSame(await walk(`from=${from}&to=${to}&limit=2`), inRange);
    expectSame(
      await walk(`from=${from}&to=${from}`),
      devEntries.filter((e) => e.at === from),
    );
    expectSame(
      await walk(`to=${oldestFirst[0].at}&connection_id=user-1`),
      devEntries.filter((e) => e.at <= oldestFirst[0].at && e.connection_id === 'user-1'),
    );
  });

  test('cursor paging: every entry once, in order, at any page size', async () => {
    for (const limit of [1, 4, devEntries.length]) {
      const pages: any[][] = [];
      let cursor: string | null = null;
      do {
        const res = await logs(`limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.logs.length).toBeLessThanOrEqual(limit);
        pages.push(res.body.logs);
        cursor = res.body.next_cursor;
      } while (cursor !== null);
      expect(pages.flat().map((e) => e.id)).toEqual(devEntries.map((e) => e.id));
    }
    const first = await logs('limit=5');
    expect(first.body.logs).toHaveLength(5);
    expect(first.body.logs.map((e: any) => e.id)).toEqual(devEntries.slice(0, 5).map((e) => e.id));
    expect(typeof first.body.next_cursor).toBe('string');
  });

  test('bad input is 400 with a stable code and changes nothing', async () => {
    const cases: Array<[string, string]> = [
      ['limit=0', 'invalid_query_params'],
      ['limit=1001', 'invalid_query_params'],
      ['limit=ten', 'invalid_query_params'],
      ['status=teapot', 'invalid_query_params'],
      ['status=99', 'invalid_query_params'],
      ['from=yesterday', 'invalid_query_params'],
      ['to=1969-12-31T23:59:59.000Z', 'invalid_query_params'],
      ['from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'invalid_query_params'],
      // Both present, neither a time: the range check must not run on the strings (it answered 500).
      ['from=soon&to=later', 'invalid_query_params'],
      ['connection=user-1', 'invalid_query_params'],
      ['connection_id=a&connection_id=b', 'invalid_query_params'],
      ['cursor=not-a-cursor', 'invalid_cursor'],
      [`cursor=${Buffer.from('2026-01-01T00:00:00.000Z|x|y').toString('base64url')}`, 'invalid_cursor'],
    ];
    for (const [query, code] of cases) {
      const res = await logs(query);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code });
    }
    expect((await logs('', null as never)).status).toBe(401);
    expect((await walk('limit=1000')).map((e) => e.id)).toEqual(devEntries.map((e) => e.id));
  });

  test("another environment's entries are invisible, and no entry holds a secret", async () => {
    stack.luma.resetStats();
    await connectAndSync('user-prod', 'luma', PROD_KEY, 'prod');
    const prodEntries = await waitForEntries(stack.luma.stats().requests, 'limit=1000', stack.keys.prod);
    expect(prodEntries).toHaveLength(stack.luma.stats().requests);
    expect(prodEntries.every((e) => e.connection_id === 'user-prod')).toBe(true);

    expect((await walk('limit=1000')).map((e) => e.id)).toEqual(devEntries.map((e) => e.id));
    expect(await walk('connection_id=user-prod')).toEqual([]);
    expect(await walk('connection_id=user-1', stack.keys.prod)).toEqual([]);
    expect(await walk('integration=luma-b', stack.keys.prod)).toEqual([]);

    const everything = JSON.stringify([...devEntries, ...prodEntries, ...(await stack.core.stores.db.collection('request_logs').find({}).toArray())]);
    for (const secret of [DEV_KEY, PROD_KEY, stack.keys.dev, stack.keys.prod]) expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/authorization|x-luma-api-key|bearer/i);
  });
});
