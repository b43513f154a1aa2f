import { TokenBuckets } from '../../api/middleware/token-buckets';

/** The in-process buckets behind the API's fallback and per-address limits (api/middleware/token-buckets.ts), on a clock the test sets. */
describe('token buckets', () => {
  const t0 = 1_800_000_000_000;

  test('the limit at once, then refilled at the limit per window, never above it', () => {
    const buckets = new TokenBuckets({ limit: 4, windowMs: 60_000 });
    const first = Array.from({ length: 5 }, () => buckets.take('env', t0));
    expect(first.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    // One request every 15 s: the refused one may retry then; the bucket is full a window after it emptied.
    expect(first[4].retryAt).toBe(t0 + 15_000);
    expect(first[4].fullAt).toBe(t0 + 60_000);
    expect(buckets.take('env', t0 + 14_999).allowed).toBe(false);
    expect(buckets.take('env', t0 + 15_000)).toMatchObject({ allowed: true, remaining: 0 });
    // Idle for an hour: full again, not more.
    expect(buckets.take('env', t0 + 3_600_000)).toMatchObject({ allowed: true, remaining: 3 });
  });

  test('keys are counted apart; a refund gives back one request, up to the limit', () => {
    const buckets = new TokenBuckets({ limit: 2, windowMs: 60_000 });
    buckets.take('a', t0);
    buckets.take('a', t0);
    expect(buckets.take('a', t0).allowed).toBe(false);
    expect(buckets.take('b', t0)).toMatchObject({ allowed: true, remaining: 1 });
    buckets.refund('a');
    expect(buckets.take('a', t0)).toMatchObject({ allowed: true, remaining: 0 });
    buckets.refund('b');
    buckets.refund('b');
    expect(buckets.take('b', t0)).toMatchObject({ allowed: true, remaining: 1 });
  });

  test('memory is bounded: past maxKeys the least recently used key is forgotten (and starts full)', () => {
    const buckets = new TokenBuckets({ limit: 1, windowMs: 60_000 }, 3);
    for (const key of ['a', 'b', 'c']) buckets.take(key, t0);
    expect(buckets.take('a', t0).allowed).toBe(false); // a is now the most recent
    buckets.take('d', t0); // b goes
    expect(buckets.take('b', t0).allowed).toBe(true);
    expect(buckets.take('a', t0).allowed).toBe(false);
  });
});
