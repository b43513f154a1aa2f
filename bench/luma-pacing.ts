import { randomBytes } from 'node:crypto';
import { createLumaIntegration, readAllRecords, startWeftStack } from '../tests/support/weft-stack';
import type { Figure } from './figure';

const LIMIT = 50;
const WINDOW_MS = 5_000;
const WINDOWS_MEASURED = 4;

/**
 * Two connections sharing one Luma API key sync at once, under a (scaled-down) budget of
 * 50 requests per 5 s window with a lockout on excess, like Luma's 200/min. Achieved =
 * requests answered in the first four full windows after the first request, over what
 * the limit allows in them; the run needs more than four windows of requests.
 */
export async function lumaPacing(): Promise<Figure[]> {
  const stack = await startWeftStack({
    luma: { seed: 4, eventCount: 1_300, maxPageSize: 10, defaultPageSize: 10, rateLimit: { limit: LIMIT, windowMs: WINDOW_MS, lockoutMs: 60_000 } },
  });
  try {
    await createLumaIntegration(stack, { rate_limit: { requests: LIMIT, window_ms: WINDOW_MS, lockout_ms: 60_000 } });
    stack.luma.resetStats();
    const connect = (id: string) =>
      stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      });
    const run = randomBytes(4).toString('hex');
    const [a, b] = [`pace-a-${run}`, `pace-b-${run}`];
    await Promise.all([connect(a), connect(b)]);
    await Promise.all([stack.waitForSync(a, 'list-events'), stack.waitForSync(b, 'list-events')]);
    const synced = (await readAllRecords(stack, a, 'CalendarEvent')).length + (await readAllRecords(stack, b, 'CalendarEvent')).length;

    const log = stack.luma.requestLog();
    const t0 = log[0].at;
    const inWindows = log.filter((e) => e.at < t0 + WINDOWS_MEASURED * WINDOW_MS && e.status === 200).length;
    const stats = stack.luma.stats();
    return [
      {
        figure: 'pacing',
        limit_per_window: LIMIT,
        window_ms: WINDOW_MS,
        requests: stats.requests,
        achieved_per_window: round(inWindows / WINDOWS_MEASURED),
        achieved_vs_limit: round(inWindows / (WINDOWS_MEASURED * LIMIT)),
        target: '>= 0.95',
        max_in_any_window: stats.maxRequestsInAnyWindow,
        http_429: stats.rateLimited,
        events_synced: synced,
      },
    ];
  } finally {
    await stack.shutdown();
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
