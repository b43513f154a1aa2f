import type { NextFunction, Request, Response } from 'express';
import { WeftError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import type { RateDecision, RateWindowPolicy } from '../../store/api-rate-counters';
import { environmentOf } from './auth';

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

/**
 * Rate limit of the app-facing API per environment (runs after requireSecretKey), counted
 * in the database so every API process shares it. Every counted response carries the
 * limit in both spellings clients look for: the IETF draft's `RateLimit-Policy` and
 * `RateLimit` (draft-ietf-httpapi-ratelimit-headers-09) and the `X-RateLimit-*` trio
 * Nango's API sends (Reset as a Unix timestamp, as there). Past the limit: 429
 * `rate_limited` with `Retry-After`.
 *
 * If the counter cannot be reached the request goes through uncounted (fail open): the
 * limit protects capacity, it does not decide who may do what, and the secret-key lookup
 * just before it has already reached the database, so this is a hiccup of the counter
 * alone; a real outage is answered by the handler's own database call (503).
 */
export function apiRateLimit(counter: RequestCounter, settings: ApiRateLimitSettings, logger: Logger) {
  let lastWarning = 0;
  return async (_req: Request, res: Response, next: NextFunction) => {
    if (settings.limit === 0) return next();
    const policy = { limit: settings.limit, windowMs: settings.windowMs };
    let decision: RateDecision;
    try {
      decision = await counter.take(environmentOf(res), policy);
    } catch (err) {
      if (Date.now() - lastWarning > WARN_EVERY_MS) {
        lastWarning = Date.now();
        logger.warn({ err }, 'API rate limit counter unavailable; requests pass uncounted');
      }
      return next();
    }
    const secondsToReset = Math.max(1, Math.ceil((decision.resetAt - Date.now()) / 1000));
    res.setHeader('RateLimit-Policy', `${POLICY_NAME};q=${decision.limit};w=${Math.round(settings.windowMs / 1000)}`);
    res.setHeader('RateLimit', `${POLICY_NAME};r=${decision.remaining};t=${secondsToReset}`);
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(decision.resetAt / 1000)));
    if (!decision.allowed) {
      res.setHeader('Retry-After', String(secondsToReset));
      throw new WeftError(
        'rate_limited',
        `Rate limit of ${decision.limit} requests per ${Math.round(settings.windowMs / 1000)} s for this environment reached; retry after ${secondsToReset} s.`,
        429,
      );
    }
    next();
  };
}
