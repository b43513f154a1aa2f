/**
 * The largest number of timestamps that fall inside any half-open span
 * `[t, t + windowMs)`. `timestamps` must be sorted ascending. O(n).
 */
export function maxInAnyWindow(timestamps: ReadonlyArray<number>, windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < timestamps.length; hi++) {
    while (timestamps[hi] - timestamps[lo] >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** Monotonic wall-clock milliseconds (epoch-based, never goes backwards). */
export function monotonicNow(): number {
  return performance.timeOrigin + performance.now();
}
