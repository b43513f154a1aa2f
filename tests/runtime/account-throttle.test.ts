import { AccountThrottle, parseRetryAfter } from '../../runtime/http/account-throttle';
import { githubProvider } from '../../integrations/github/provider';
import { oneDriveProvider } from '../../integrations/one-drive/provider';
import { lumaProvider } from '../../integrations/luma/provider';

const NOW = 1_700_000_000_000;
const github = githubProvider.throttle;
const graph = oneDriveProvider.throttle;
const luma = lumaProvider.throttle;

function ghHeaders(remaining: number, resetInMs: number): Record<string, string> {
  return { 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(Math.floor((NOW + resetInMs) / 1000)) };
}

describe('AccountThrottle', () => {
  test('Retry-After is read as decimal seconds, and pauses every later request of the account', () => {
    const t = new AccountThrottle();
    expect(t.onResponse(graph, 429, { 'retry-after': '2.128' }, '', 60_000, NOW)).toBe(2_128);
    expect(t.delayBeforeRequest(graph, 10_000, NOW + 1_000)).toBe(1_128);
    expect(t.delayBeforeRequest(graph, 10_000, NOW + 2_200)).toBe(0);
    // 503 without Retry-After falls back to the provider's default.
    expect(t.onResponse(graph, 503, {}, '', 60_000, NOW)).toBe(5_000);
    expect(t.onResponse(graph, 404, { 'retry-after': '9' }, '', 60_000, NOW)).toBeNull();
  });

  test('a lockout provider waits the whole lockout on 429', () => {
    const t = new AccountThrottle();
    expect(t.onResponse(luma, 429, {}, '', 60_000, NOW)).toBe(60_000);
    expect(t.delayBeforeRequest(luma, 10_000, NOW + 30_000)).toBe(30_000);
  });

  test("a lockout's 429 with Retry-After lasts what it says (the rest of a lockout another client started)", () => {
    const t = new AccountThrottle();
    expect(t.onResponse(luma, 429, { 'retry-after': '17' }, '', 60_000, NOW)).toBe(17_000);
    expect(t.delayBeforeRequest(luma, 60_000, NOW + 10_000)).toBe(7_000);
  });

  test('GitHub: paces as remaining nears zero, capped; waits for the reset once exhausted', () => {
    const t = new AccountThrottle();
    t.onResponse(github, 200, ghHeaders(4_000, 3_600_000), '', 0, NOW);
    expect(t.delayBeforeRequest(github, 10_000, NOW)).toBe(0);
    t.onResponse(github, 200, ghHeaders(9, 10_000), '', 0, NOW);
    expect(t.delayBeforeRequest(github, 10_000, NOW)).toBe(1_000); // 10 s over the last 10 requests
    t.onResponse(github, 200, ghHeaders(1, 3_000_000), '', 0, NOW);
    expect(t.delayBeforeRequest(github, 10_000, NOW)).toBe(10_000); // courtesy pacing is capped
    t.onResponse(github, 200, ghHeaders(0, 30_000), '', 0, NOW);
    expect(t.delayBeforeRequest(github, 10_000, NOW)).toBeGreaterThanOrEqual(30_000); // not capped: nothing helps before the reset
  });

  test('GitHub: 403 with remaining 0 is the primary limit; with budget left it is secondary or a real error', () => {
    const primary = new AccountThrottle();
    expect(
      primary.onResponse(github, 403, ghHeaders(0, 20_000), '{"message":"API rate limit exceeded for installation ID 1."}', 0, NOW),
    ).toBeGreaterThanOrEqual(20_000);

    const secondary = new AccountThrottle();
    const body = '{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}';
    expect(secondary.onResponse(github, 403, { ...ghHeaders(4_000, 600_000), 'retry-after': '7' }, body, 0, NOW)).toBe(7_000);
    // Without retry-after: a minute, doubling while it repeats; a success ends the streak.
    const bare = new AccountThrottle();
    expect(bare.onResponse(github, 429, ghHeaders(4_000, 600_000), body, 0, NOW)).toBe(60_000);
    expect(bare.onResponse(github, 429, ghHeaders(4_000, 600_000), body, 0, NOW)).toBe(120_000);
    bare.onResponse(github, 200, ghHeaders(3_999, 600_000), '', 0, NOW);
    expect(bare.onResponse(github, 403, ghHeaders(3_998, 600_000), body, 0, NOW)).toBe(60_000);

    const forbidden = new AccountThrottle();
    expect(forbidden.onResponse(github, 403, ghHeaders(4_000, 600_000), '{"message":"Resource not accessible by integration"}', 0, NOW)).toBeNull();
  });

  test('parseRetryAfter reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('10', NOW)).toBe(10_000);
    expect(parseRetryAfter('0.5', NOW)).toBe(500);
    expect(parseRetryAfter(new Date(NOW + 4_000).toUTCString(), NOW)).toBe(4_000);
    expect(parseRetryAfter('soon', NOW)).toBeNull();
    expect(parseRetryAfter(undefined, NOW)).toBeNull();
  });
});
