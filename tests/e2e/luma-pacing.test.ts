import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { readAllRecordsTyped } from '../support/weft-client';

/**
 * Luma locks a key out for a minute once it sends more than its limit in any window.
 * Here the window is 1 s and the limit 12 (scaled down so the test takes seconds), and
 * the syncs need several windows' worth of pages: Weft must pace itself, never tripping it.
 */
const LIMIT = 12;
const WINDOW_MS = 1_000;

describe('Luma rate limit pacing', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({
      luma: { seed: 5, eventCount: 1_500, maxPageSize: 50, rateLimit: { limit: LIMIT, windowMs: WINDOW_MS, lockoutMs: 30_000 } },
    });
    await createLumaIntegration(stack, { rate_limit: { requests: LIMIT, window_ms: WINDOW_MS, lockout_ms: 30_000 } });
  });
  afterAll(async () => stack?.shutdown());

  test('a sync of more pages than one window allows never triggers the lockout', async () => {
    const started = Date.now();
    const res = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'pace-1', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(res.response.status).toBe(201);
    const summary: any = await stack.waitForSync('pace-1', 'list-events');
    expect(summary.result.CalendarEvent.added).toBe(1_500);

    const stats = stack.luma.stats();
    expect(stats.byStatus[429] ?? 0).toBe(0);
    expect(stats.rateLimited).toBe(0);
    expect(stats.maxRequestsInAnyWindow).toBeLessThanOrEqual(LIMIT);
    // 30 list pages + the key check = 31 requests: at least two full windows had to pass.
    expect(stats.requests).toBe(31);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * WINDOW_MS);
  });

  test('two connections on the same key share one budget', async () => {
    stack.luma.resetStats();
    const ids = ['pace-a', 'pace-b'];
    for (const id of ids) {
      const res = await stack.client.POST('/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      });
      expect(res.response.status).toBe(201);
    }
    await Promise.all(ids.map((id) => stack.waitForSync(id, 'list-events')));
    const stats = stack.luma.stats();
    expect(stats.rateLimited).toBe(0);
    expect(stats.maxRequestsInAnyWindow).toBeLessThanOrEqual(LIMIT);
    for (const id of ids) expect(await readAllRecordsTyped(stack.client, { model: 'CalendarEvent', connectionId: id })).toHaveLength(1_500);
  });
});
