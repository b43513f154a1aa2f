import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../common/config';
import { EnvironmentStore, hashSecretKey } from '../../store/environments';
import { recordFilters } from '../support/command-filters';
import { startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * What has no environment to count against is limited per client address, in the process:
 * missing and wrong secret keys, the Connect page and OAuth callbacks, unknown paths, and
 * (in a budget of their own) readiness probes. Wrong keys are remembered briefly, so a burst
 * of them makes one database lookup. The API trusts the loopback proxy here
 * (WEFT_TRUST_PROXY=loopback), so each test's X-Forwarded-For is a client of its own.
 */
const LIMIT = 5;

describe('limits per client address', () => {
  let stack: WeftStack;
  let clients = 0;
  /** A client address no other request of this file used. */
  const newClient = () => `203.0.113.${(clients += 1)}`;

  beforeAll(async () => {
    stack = await startWeftStack({
      worker: false,
      monitorCommands: true,
      env: { WEFT_API_CLIENT_RATE_LIMIT: String(LIMIT), WEFT_API_CLIENT_RATE_LIMIT_WINDOW_S: '3600', WEFT_TRUST_PROXY: 'loopback' },
    });
  });
  afterAll(async () => stack?.shutdown());

  async function call(path: string, client: string, key?: string): Promise<Response> {
    const headers: Record<string, string> = { 'x-forwarded-for': client };
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    const res = await fetch(`${stack.apiUrl}${path}`, { headers, redirect: 'manual' });
    await res.arrayBuffer();
    return res;
  }
  const wrongKey = () => `weft_sk_dev_${randomBytes(18).toString('base64url')}`;

  test('missing and wrong keys spend the address budget, valid keys do not; then 429 rate_limited for everything without a key from there', async () => {
    const client = newClient();
    for (let i = 0; i < LIMIT + 3; i += 1) expect((await call('/integrations', client, stack.keys.dev)).status).toBe(200);
    const failed = [
      await call('/integrations', client),
      await call('/integrations', client, wrongKey()),
      await call('/connections', client, 'not-a-key'),
      await call('/integrations', client, wrongKey()),
      await call('/sync/status', client),
    ];
    expect(failed.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);

    const refused = await fetch(`${stack.apiUrl}/integrations`, { headers: { 'x-forwarded-for': client, authorization: `Bearer ${wrongKey()}` } });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining(`at most ${LIMIT} per 3600 s`) } });
    // One request back every 3600 / 5 = 720 s.
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(600);
    expect(retryAfter).toBeLessThanOrEqual(720);

    // The pages and unknown paths share the budget; liveness is never limited.
    for (const path of ['/connect?session_token=weft_connect_none', '/oauth/callback?state=none&code=x', '/no-such-route', '/openapi.json'])
      expect([path, (await call(path, client)).status]).toEqual([path, 429]);
    expect((await call('/health', client)).status).toBe(200);

    // Another address has its own budget.
    expect((await call('/integrations', newClient(), wrongKey())).status).toBe(401);
  });

  test('readiness probes have a budget of their own: a flood of wrong keys from the address does not fail them', async () => {
    const client = newClient();
    for (let i = 0; i < LIMIT; i += 1) expect((await call('/integrations', client, wrongKey())).status).toBe(401);
    expect((await call('/integrations', client, wrongKey())).status).toBe(429);
    const probes: number[] = [];
    for (let i = 0; i < LIMIT + 1; i += 1) probes.push((await call('/ready', client)).status);
    expect(probes).toEqual([...Array.from({ length: LIMIT }, () => 200), 429]);
    for (let i = 0; i < 3 * LIMIT; i += 1) expect((await call('/health', client)).status).toBe(200);
  });

  test('a wrong key is looked up once for a burst of requests, one after another or at once', async () => {
    const sequential = wrongKey();
    const together = wrongKey();
    const rec = recordFilters(stack.core.mongo);
    try {
      // Each request from an address of its own, so the address budget does not answer first.
      for (let i = 0; i < 20; i += 1) expect((await call('/integrations', newClient(), sequential)).status).toBe(401);
      const burst = await Promise.all(Array.from({ length: 20 }, () => call('/integrations', newClient(), together)));
      expect(burst.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 401));
    } finally {
      rec.stop();
    }
    const lookupsOf = (key: string) => rec.commands.filter((c) => c.collection === 'environment_keys' && c.filter._id === hashSecretKey(key)).length;
    expect([lookupsOf(sequential), lookupsOf(together)]).toEqual([1, 1]);
  });

  test('a key created after it was refused works at once when this process created it, and soon when another did', async () => {
    const here = wrongKey();
    expect((await call('/integrations', newClient(), here)).status).toBe(401);
    await stack.core.stores.environments.ensure('staging', here);
    expect((await call('/integrations', newClient(), here)).status).toBe(200);

    const there = wrongKey();
    expect((await call('/integrations', newClient(), there)).status).toBe(401);
    // Another process's store on the same database (`weft setup`, another API).
    await new EnvironmentStore(stack.core.stores.db).ensure('qa', there);
    const deadline = Date.now() + 30_000;
    let status = 401;
    while (status === 401 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await call('/integrations', newClient(), there)).status;
    }
    expect(status).toBe(200);
  });
});

describe('WEFT_TRUST_PROXY', () => {
  test('unset: X-Forwarded-For is not believed, the peer is the client', async () => {
    const stack = await startWeftStack({ worker: false, env: { WEFT_API_CLIENT_RATE_LIMIT: '2', WEFT_API_CLIENT_RATE_LIMIT_WINDOW_S: '3600' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const res = await fetch(`${stack.apiUrl}/integrations`, { headers: { 'x-forwarded-for': `198.51.100.${i}` } });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 429]);
    } finally {
      await stack.shutdown();
    }
  });

  test('true is refused (the client would choose its own address); hops and addresses are taken', () => {
    expect(() => loadConfig({ WEFT_TRUST_PROXY: 'true' })).toThrow(/WEFT_TRUST_PROXY/);
    expect(() => loadConfig({ WEFT_TRUST_PROXY: 'loopback, proxy.internal' })).toThrow(/not an address: proxy.internal/);
    expect(loadConfig({ WEFT_TRUST_PROXY: '2' }).WEFT_TRUST_PROXY).toBe(2);
    expect(loadConfig({ WEFT_TRUST_PROXY: 'loopback, 10.0.0.0/8, 192.0.2.4' }).WEFT_TRUST_PROXY).toEqual(['loopback', '10.0.0.0/8', '192.0.2.4']);
    expect(loadConfig({}).WEFT_TRUST_PROXY).toBe(false);
    expect([loadConfig({}).WEFT_API_CLIENT_RATE_LIMIT, loadConfig({}).WEFT_API_CLIENT_RATE_LIMIT_WINDOW_S]).toEqual([600, 60]);
  });
});
