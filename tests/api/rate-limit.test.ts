import { MongoClient } from 'mongodb';
import { buildCore, type Core } from '../../app/core';
import { startApi } from '../../app/api/build-api';
import { loadConfig } from '../../common/config';
import type { ApiDeps } from '../../api/deps';
import { ApiRateCounterStore } from '../../store/api-rate-counters';
import { startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * The app-facing API's rate limit per environment, shared by two API servers with their own
 * database clients and their own memory (as two processes behind a load balancer) on one
 * database.
 */
const HOUR = 3_600_000;

/** A second API "process" on the stack's database: its own core (clients, stores, counter memory), wired as `weft api` is. */
async function secondApi(stack: WeftStack, rateLimit: ApiDeps['settings']['apiRateLimit'], alter: (core: Core) => Partial<ApiDeps> = () => ({})) {
  const logs: string[] = [];
  const config = loadConfig({ ...stack.env, WEFT_API_RATE_LIMIT: String(rateLimit.limit), WEFT_API_RATE_LIMIT_WINDOW_S: String(rateLimit.windowMs / 1000) });
  const core = await buildCore(config, { log: { level: 'debug', destination: { write: (line: string) => void logs.push(line) } } });
  const api = await startApi(core, { port: 0, alter: (deps) => ({ ...deps, ...alter(core) }) });
  return { url: api.url, logs, close: async () => (await api.close(), await core.close()) };
}

async function get(url: string, key: string | null): Promise<Response> {
  const res = await fetch(`${url}/integrations`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  await res.arrayBuffer();
  return res;
}

/** Windows are aligned to the clock; keep a test's requests inside one. */
async function awayFromWindowEdge(windowMs: number, marginMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((r) => setTimeout(r, left + 50));
}

describe('API rate limit', () => {
  let stack: WeftStack;
  let other: Awaited<ReturnType<typeof secondApi>>;
  const LIMIT = 30;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false, apiRateLimit: { limit: LIMIT, windowMs: HOUR } });
    other = await secondApi(stack, { limit: LIMIT, windowMs: HOUR });
  });
  afterAll(async () => {
    await other?.close();
    await stack?.shutdown();
  });

  test('two API processes share one count per environment: exactly the limit passes, then 429 rate_limited with Retry-After', async () => {
    await awayFromWindowEdge(HOUR, 30_000);
    const windowEnd = Math.ceil((Date.now() + 1) / HOUR) * HOUR;
    // 45 requests at once, alternating between the two servers.
    const responses = await Promise.all(Array.from({ length: 45 }, (_, i) => get(i % 2 ? other.url : stack.apiUrl, stack.keys.dev)));
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(LIMIT);
    expect(limited).toHaveLength(15);
    // Both servers admitted some: the count is shared, not per process.
    expect(ok.filter((r) => r.url.startsWith(other.url)).length).toBeGreaterThan(0);
    expect(ok.filter((r) => r.url.startsWith(stack.apiUrl)).length).toBeGreaterThan(0);

    for (const r of responses) {
      expect(r.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      expect(r.headers.get('ratelimit-policy')).toBe(`"environment";q=${LIMIT};w=3600`);
      expect(Number(r.headers.get('x-ratelimit-reset'))).toBe(windowEnd / 1000);
      const remaining = Number(r.headers.get('x-ratelimit-remaining'));
      expect(remaining).toBeGreaterThanOrEqual(0);
      expect(remaining).toBeLessThan(LIMIT);
      expect(r.headers.get('ratelimit')).toMatch(new RegExp(`^"environment";r=${remaining};t=\\d+$`));
    }
    for (const r of limited) {
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(Math.abs(Date.now() + retryAfter * 1000 - windowEnd)).toBeLessThan(5_000);
    }
    const refused = await fetch(`${other.url}/integrations`, { headers: { authorization: `Bearer ${stack.keys.dev}` } });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining(`${LIMIT} requests per 3600 s`) } });

    // Another environment has its own count; a request without a valid key counts for nobody.
    const prod = await get(stack.apiUrl, stack.keys.prod);
    expect(prod.status).toBe(200);
    expect(prod.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1));
    const anonymous = await get(stack.apiUrl, null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('x-ratelimit-limit')).toBeNull();
  });

  test('the count starts over when the window ends', async () => {
    // Long enough that four requests on a loaded machine stay in one window.
    const windowMs = 10_000;
    const fast = await secondApi(stack, { limit: 3, windowMs });
    try {
      await awayFromWindowEdge(windowMs, 6_000);
      // The prod environment: the first test left dev's hour-long window full.
      const first: Response[] = [];
      for (let i = 0; i < 4; i += 1) first.push(await get(fast.url, stack.keys.prod));
      expect(first.map((r) => r.status)).toEqual([200, 200, 200, 429]);
      expect(first.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
      const retryAfter = Number(first[3].headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(windowMs / 1000);
      await new Promise((r) => setTimeout(r, Number(first[3].headers.get('x-ratelimit-reset')) * 1000 - Date.now() + 50));
      const again = await get(fast.url, stack.keys.prod);
      expect(again.status).toBe(200);
      expect(again.headers.get('x-ratelimit-remaining')).toBe('2');
    } finally {
      await fast.close();
    }
  });

  test('a counter that cannot write falls back to a bucket in the process: the same limit, 429 past it, one warning with no secret', async () => {
    // A real client for a port nothing listens on: every operation fails after server selection.
    const unreachable = new MongoClient('mongodb://127.0.0.1:9/', { serverSelectionTimeoutMS: 200 });
    const blind = await secondApi(stack, { limit: 3, windowMs: HOUR }, (core) => ({
      stores: { ...core.stores, apiRateCounters: new ApiRateCounterStore(unreachable.db('nowhere')) },
    }));
    try {
      const responses: Response[] = [];
      for (let i = 0; i < 4; i += 1) responses.push(await get(blind.url, stack.keys.prod));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
      expect(responses.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual(['3', '3', '3', '3']);
      expect(responses.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0']);
      // The bucket refills at 3 an hour: one request again in about 20 minutes.
      const retryAfter = Number(responses[3].headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(1_100);
      expect(retryAfter).toBeLessThanOrEqual(1_200);
      const refused = await fetch(`${blind.url}/integrations`, { headers: { authorization: `Bearer ${stack.keys.prod}` } });
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining('3 requests per 3600 s') } });
      // Per environment: dev has its own bucket.
      expect((await get(blind.url, stack.keys.dev)).status).toBe(200);
      const warnings = blind.logs.filter((l) => l.includes('API rate limit counter unavailable'));
      expect(warnings).toHaveLength(1);
      expect(blind.logs.join('\n')).not.toContain(stack.keys.prod);
      expect(blind.logs.join('\n')).not.toContain(stack.keys.dev);
    } finally {
      await blind.close();
      await unreachable.close();
    }
  });

  test('defaults: 6,000 requests a minute per environment; 0 turns the limit off', async () => {
    const config = loadConfig({});
    expect([config.WEFT_API_RATE_LIMIT, config.WEFT_API_RATE_LIMIT_WINDOW_S]).toEqual([6_000, 60]);
    const custom = loadConfig({ WEFT_API_RATE_LIMIT: '0', WEFT_API_RATE_LIMIT_WINDOW_S: '10' });
    expect([custom.WEFT_API_RATE_LIMIT, custom.WEFT_API_RATE_LIMIT_WINDOW_S]).toEqual([0, 10]);

    const off = await secondApi(stack, { limit: 0, windowMs: HOUR });
    try {
      const res = await get(off.url, stack.keys.dev); // dev's window is full, but there is no limit here
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    } finally {
      await off.close();
    }
  });
});
