import { LRUCache } from 'lru-cache';

export interface BucketPolicy {
  /** Requests a key may make at once, and per window on average. */
  limit: number;
  windowMs: number;
}

export interface BucketDecision {
  allowed: boolean;
  limit: number;
  /** Whole requests left after this one. */
  remaining: number;
  /** When the next request would be allowed (epoch ms; now when one is left). */
  retryAt: number;
  /** When the bucket is full again (epoch ms). */
  fullAt: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * In-process token buckets, one per key: `limit` requests at once, refilled at `limit` per
 * window. Written here rather than taken from a library: it is a dozen lines of arithmetic,
 * and the libraries that have one (rate-limiter-flexible's memory store) count fixed windows
 * with a timer per key instead.
 *
 * Memory is bounded: at most `maxKeys` buckets, the least recently used forgotten first, and
 * a bucket untouched for a whole window is forgotten too (it would be full again anyway).
 */
export class TokenBuckets {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(
    private readonly policy: BucketPolicy,
    maxKeys = 10_000,
  ) {
    this.buckets = new LRUCache<string, Bucket>({ max: maxKeys, ttl: policy.windowMs });
  }

  /** Takes one request from `key`'s bucket, when it has one. */
  take(key: string, now = Date.now()): BucketDecision {
    const bucket = this.refilled(key, now);
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    const { limit, windowMs } = this.policy;
    const msPerToken = windowMs / limit;
    return {
      allowed,
      limit,
      remaining: Math.floor(bucket.tokens),
      retryAt: bucket.tokens >= 1 ? now : now + Math.ceil((1 - bucket.tokens) * msPerToken),
      fullAt: now + Math.ceil((limit - bucket.tokens) * msPerToken),
    };
  }

  /** Gives back a request taken by take() (it turned out not to count). */
  refund(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.policy.limit, bucket.tokens + 1);
  }

  private refilled(key: string, now: number): Bucket {
    const known = this.buckets.get(key);
    if (!known) return { tokens: this.policy.limit, at: now };
    const earned = (Math.max(0, now - known.at) * this.policy.limit) / this.policy.windowMs;
    return { tokens: Math.min(this.policy.limit, known.tokens + earned), at: Math.max(now, known.at) };
  }
}
