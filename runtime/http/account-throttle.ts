import type { RateLimitHeadersRule, ThrottleRule } from '../types';

/**
 * What this process knows about one provider account's limits: until when the provider
 * asked us to pause (Retry-After, a lockout, an exhausted budget), and for providers that
 * report their budget on every response, how much is left and when it refills.
 *
 * Shared by every request and run in the process that uses the account, so a 429 seen by
 * one sync pauses the others too (Graph asks clients to pause all requests while
 * throttled). Workers in other processes learn the same from their own responses.
 */
export class AccountThrottle {
  private blockedUntil = 0;
  private remaining: number | null = null;
  private resetAt = 0;
  private secondaryStreak = 0;

  /** How long to hold the next request. Never long when budget remains: that is only pacing. */
  delayBeforeRequest(rule: ThrottleRule | undefined, maxPacingMs: number, now = Date.now()): number {
    let wait = Math.max(0, this.blockedUntil - now);
    if (rule?.kind === 'rate-limit-headers' && this.remaining !== null && this.resetAt > now) {
      if (this.remaining <= 0) {
        wait = Math.max(wait, this.resetAt - now + RESET_MARGIN_MS);
      } else if (this.remaining <= rule.slowDownBelow) {
        // Spread what is left over the time until the refill, so a long sync neither stalls
        // at zero nor hammers the last few requests (capped: this is courtesy, not a limit).
        wait = Math.max(wait, Math.min(maxPacingMs, Math.ceil((this.resetAt - now) / (this.remaining + 1))));
      }
    }
    return wait;
  }

  /**
   * Reads a response. Returns how long to wait before retrying when the response means
   * "rate limited", or null when it is an ordinary response (success or a real error).
   */
  onResponse(
    rule: ThrottleRule | undefined,
    status: number,
    headers: Record<string, string>,
    bodyText: string,
    fallbackLockoutMs: number,
    now = Date.now(),
  ): number | null {
    if (!rule) return null;
    if (rule.kind === 'rate-limit-headers') return this.onHeaderBudgetResponse(rule, status, headers, bodyText, now);
    if (!rule.statuses.includes(status)) return null;
    // A lockout lasts what the provider says it does (Luma's Retry-After on its 429), else the provider's known lockout.
    const wait = parseRetryAfter(headers['retry-after'], now) ?? (rule.kind === 'lockout' ? fallbackLockoutMs : rule.defaultWaitMs);
    this.blockUntil(now + wait);
    return wait;
  }

  private onHeaderBudgetResponse(rule: RateLimitHeadersRule, status: number, headers: Record<string, string>, bodyText: string, now: number): number | null {
    const remaining = Number(headers[rule.remainingHeader]);
    const reset = Number(headers[rule.resetHeader]);
    if (headers[rule.remainingHeader] !== undefined && Number.isFinite(remaining)) this.remaining = remaining;
    if (headers[rule.resetHeader] !== undefined && Number.isFinite(reset)) this.resetAt = reset * 1000;
    if (!rule.statuses.includes(status)) {
      if (status < 400) this.secondaryStreak = 0;
      return null;
    }
    if (this.remaining === 0 && this.resetAt > 0) {
      // Primary limit: nothing helps before the refill.
      const wait = Math.max(RESET_MARGIN_MS, this.resetAt - now + RESET_MARGIN_MS);
      this.blockUntil(now + wait);
      return wait;
    }
    const retryAfter = parseRetryAfter(headers['retry-after'], now);
    const secondary = retryAfter !== null || (rule.secondaryMessage?.test(bodyText) ?? false);
    if (!secondary) return null; // e.g. 403 "Resource not accessible by integration"
    // Secondary limit: honour retry-after; without it wait a minute, doubling while it repeats.
    const wait = retryAfter ?? rule.secondaryDefaultWaitMs * 2 ** Math.min(this.secondaryStreak, 4);
    this.secondaryStreak += 1;
    this.blockUntil(now + wait);
    return wait;
  }

  private blockUntil(at: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, at);
  }
}

/** Reset times are whole epoch seconds; a little margin avoids arriving a hair early. */
const RESET_MARGIN_MS = 1_000;

const accounts = new Map<string, AccountThrottle>();

/** The process-wide state of one provider account (key: provider name + hashed identity). */
export function accountThrottle(key: string): AccountThrottle {
  let state = accounts.get(key);
  if (!state) {
    state = new AccountThrottle();
    accounts.set(key, state);
  }
  return state;
}

/** `Retry-After` in seconds (decimals allowed, as Graph sends them) or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
