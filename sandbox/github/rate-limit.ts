/**
 * GitHub's primary rate limit as fixed windows: a bucket's window opens
 * with its first counted request and closes `windowMs` later, when `used` drops back to 0.
 * `x-ratelimit-reset` is that moment in epoch seconds, rounded up so a client that sleeps
 * until the header's second never arrives before the window has really reset.
 */

export interface RateSettings {
  limit: number;
  windowMs: number;
}

export interface RateSnapshot {
  limit: number;
  used: number;
  remaining: number;
  /** Epoch seconds. */
  reset: number;
}

interface Bucket {
  used: number;
  /** End of the current window (epoch ms), or null while no window is open. */
  resetAtMs: number | null;
  /** Fixed settings (the unauthenticated bucket); otherwise the shared, changeable ones. */
  fixed?: RateSettings;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private settings: RateSettings) {}

  /** Changes the limit and window length of every non-fixed bucket (open windows keep their end). */
  configure(next: Partial<RateSettings>): void {
    this.settings = { ...this.settings, ...next };
  }

  get current(): RateSettings {
    return { ...this.settings };
  }

  /** Declares a bucket with its own settings (e.g. 60/hour for unauthenticated callers). */
  defineFixed(key: string, settings: RateSettings): void {
    this.buckets.set(key, { used: 0, resetAtMs: null, fixed: settings });
  }

  private bucket(key: string, nowMs: number): Bucket {
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = { used: 0, resetAtMs: null }));
    if (b.resetAtMs !== null && nowMs >= b.resetAtMs) {
      b.used = 0;
      b.resetAtMs = null;
    }
    return b;
  }

  private settingsOf(b: Bucket): RateSettings {
    return b.fixed ?? this.settings;
  }

  snapshot(key: string, nowMs: number): RateSnapshot {
    const b = this.bucket(key, nowMs);
    const s = this.settingsOf(b);
    const resetMs = b.resetAtMs ?? nowMs + s.windowMs;
    return { limit: s.limit, used: b.used, remaining: Math.max(0, s.limit - b.used), reset: Math.ceil(resetMs / 1000) };
  }

  /** Counts one request (opening a window if none is open); never goes past the limit. */
  consume(key: string, nowMs: number): void {
    const b = this.bucket(key, nowMs);
    const s = this.settingsOf(b);
    if (b.resetAtMs === null) b.resetAtMs = nowMs + s.windowMs;
    if (b.used < s.limit) b.used++;
  }

  /** Gives a counted request back (304 answers to conditional requests are free). */
  refund(key: string, nowMs: number): void {
    const b = this.bucket(key, nowMs);
    if (b.used > 0) b.used--;
  }

  /** Uses the whole budget now; the window ends `resetInMs` from now. */
  exhaust(key: string, nowMs: number, resetInMs: number): void {
    const b = this.bucket(key, nowMs);
    b.used = this.settingsOf(b).limit;
    b.resetAtMs = nowMs + resetInMs;
  }

  /** Forgets every window (fixed buckets keep their settings). */
  reset(): void {
    for (const [key, b] of this.buckets) {
      if (b.fixed) this.buckets.set(key, { used: 0, resetAtMs: null, fixed: b.fixed });
      else this.buckets.delete(key);
    }
  }
}
