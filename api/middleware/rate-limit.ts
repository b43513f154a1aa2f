import type { NextFunction, Request, Response } from 'express';
import { WeftError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import type { RateDecision, RateWindowPolicy } from '../../store/api-rate-counters';
import { environmentOf } from './auth';
import { TokenBuckets } from './token-buckets';

/** What the limiter needs from the store: count one request of a key in its current window. */
export interface RequestCounter {
  take(key: string, policy: RateWindowPolicy, now?: number): Promise<RateDecision>;
}

export interface ApiRateLimitSettings {
  /** Requests per window and environment; 0 turns the limit off. */
  limit: number;
  windowMs: number;
}

/** The policy's name in the IETF RateLimit / RateLimit-Policy fields. */
const POLICY_NAME = '"environment"';
/** At most one warning per this long while the counter fails (it fails for every request then). */
const WARN_EVERY_MS = 60_000;

/** One request's verdict, whichever way it was counted. */
interface Verdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the full limit is available again (epoch ms). */
  resetAt: number;
  /** When a refused request may be retried (epoch ms). */
  retryAt: number;
}

/**
 * Rate limit of the app-facing API per environment (runs after requireSecretKey), counted
 * in the database so every API process shares it. Every counted response carries the
 * limit in both spellings clients look for: the IETF draft's `RateLimit-Policy` and
 * `RateLimit` (draft-ietf-httpapi-ratelimit-headers-09) and the `X-RateLimit-*` trio
 * Nango's API sends (Reset as a Unix timestamp, as there). Past the limit: 429
 * `rate_limited` with `Retry-After`.
 *
 * When the shared counter cannot be written, this process counts on its own: a token bucket
 * per environment with the same limit (refilled at the limit per window), until the counter
 * answers again. Letting requests through uncounted would turn a database that is slow or
 * failing writes into the moment a client can flood the API (and, through the proxy and the
 * actions, the providers and the worker) without limit; a bucket per process keeps each
 * process within the limit, so the whole deployment within the limit times its API processes.
 */
export function apiRateLimit(counter: RequestCounter, settings: ApiRateLimitSettings, logger: Logger) {
  let lastWarning = 0;
  // Environments are few: a thousand buckets is room to spare.
  const fallback = new TokenBuckets({ limit: Math.max(1, settings.limit), windowMs: settings.windowMs }, 1_000);
  return async (_req: Request, res: Response, next: NextFunction) => {
    if (settings.limit === 0) return next();
    const environment = environmentOf(res);
    const policy = { limit: settings.limit, windowMs: settings.windowMs };
    let verdict: Verdict;
    try {
      const decision = await counter.take(environment, policy);
      verdict = { ...decision, retryAt: decision.resetAt };
    } catch (err) {
      if (Date.now() - lastWarning > WARN_EVERY_MS) {
        lastWarning = Date.now();
        logger.warn({ err }, 'API rate limit counter unavailable; this process counts requests on its own until it is back');
      }
      const taken = fallback.take(environment);
      verdict = { allowed: taken.allowed, limit: taken.limit, remaining: taken.remaining, resetAt: taken.fullAt, retryAt: taken.retryAt };
    }
    const now = Date.now();
    const secondsToReset = Math.max(1, Math.ceil((verdict.resetAt - now) / 1000));
    res.setHeader('RateLimit-Policy', `${POLICY_NAME};q=${verdict.limit};w=${Math.round(settings.windowMs / 1000)}`);
    res.setHeader('RateLimit', `${POLICY_NAME};r=${verdict.remaining};t=${secondsToReset}`);
    res.setHeader('X-RateLimit-Limit', String(verdict.limit));
    res.setHeader('X-RateLimit-Remaining', String(verdict.remaining));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(verdict.resetAt / 1000)));
    if (!verdict.allowed) {
      const retryAfter = Math.max(1, Math.ceil((verdict.retryAt - now) / 1000));
      res.setHeader('Retry-After', String(retryAfter));
      throw new WeftError(
        'rate_limited',
        `Rate limit of ${verdict.limit} requests per ${Math.round(settings.windowMs / 1000)} s for this environment reached; retry after ${retryAfter} s.`,
        429,
      );
    }
    next();
  };
}
