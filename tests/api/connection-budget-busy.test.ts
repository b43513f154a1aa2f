import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * The key check of `POST /connections` goes through the provider account's shared request
 * budget like any call. A busy budget says nothing about the key: the check waits for it
 * (a few seconds at most) or answers 429 `provider_budget_busy` with `Retry-After`, never a
 * credentials error, and stores nothing.
 */
describe('POST /connections when the key’s request budget is busy', () => {
  let stack: WeftStack;
  const KEYS = ['busy-key', 'short-key'];
  const db = () => stack.core.mongo.db(stack.env.MONGODB_DB);
  const connect = (providerConfigKey: string, apiKey: string, connectionId: string) =>
    stack.api('POST', '/connections', {
      body: { provider_config_key: providerConfigKey, connection_id: connectionId, credentials: { type: 'API_KEY', apiKey } },
    });

  beforeAll(async () => {
    // No worker: the new connections' first syncs do not run, so only the key checks use the budgets.
    stack = await startWeftStack({ worker: false, luma: { apiKeys: KEYS, rateLimit: { limit: 100, windowMs: 60_000, lockoutMs: 60_000 } } });
    // Two requests a minute: the third key check within it finds the budget used up for ~a minute.
    await createLumaIntegration(stack, { unique_key: 'luma-busy', rate_limit: { requests: 2, window_ms: 60_000 } });
    // One request per 1.5 s: a second check waits for it inline (the API waits up to 5 s).
    await createLumaIntegration(stack, { unique_key: 'luma-short', rate_limit: { requests: 1, window_ms: 1_500 } });
  });
  afterAll(async () => stack?.shutdown());

  test('a budget used up for longer than the API waits: 429 provider_budget_busy with Retry-After, nothing stored, the provider not called', async () => {
    expect((await connect('luma-busy', 'busy-key', 'busy-1')).status).toBe(201);
    expect((await connect('luma-busy', 'busy-key', 'busy-2')).status).toBe(201);
    const calls = stack.luma.stats().requests;
    const { response, error } = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma-busy', connection_id: 'busy-3', credentials: { type: 'API_KEY', apiKey: 'busy-key' } },
    });
    expect(response.status).toBe(429);
    expect(error?.error.code).toBe('provider_budget_busy');
    // The window is a minute long: the slot frees within it, well past the 5 s the API waits.
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(5);
    expect(retryAfter).toBeLessThanOrEqual(61);
    expect(stack.luma.stats().requests).toBe(calls);
    expect(await db().collection('connections').countDocuments({ connection_id: 'busy-3' })).toBe(0);
  });

  test('a budget that frees within a few seconds: the check waits for it and the connection is created', async () => {
    expect((await connect('luma-short', 'short-key', 'short-1')).status).toBe(201);
    const res = await connect('luma-short', 'short-key', 'short-2');
    expect(res.status).toBe(201);
    expect(
      await db()
        .collection('connections')
        .countDocuments({ connection_id: { $in: ['short-1', 'short-2'] } }),
    ).toBe(2);
    // Its wait is in the request log of the check.
    const logs = await stack.api('GET', '/logs?connection_id=short-2&operation=auth');
    expect(logs.status).toBe(200);
    expect(logs.body.logs.some((l: { rate_limit_wait_ms: number | null }) => (l.rate_limit_wait_ms ?? 0) > 0)).toBe(true);
  });
});
