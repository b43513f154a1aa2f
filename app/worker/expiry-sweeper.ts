import type { Logger } from '../../common/logger';
import { sweepExpired, type ExpiryRule } from '../../store/ttl';

/** Enforces retention the database cannot (FerretDB has no TTL indexes). */
export function startExpirySweeper(rules: ExpiryRule[], logger: Logger, intervalMs = 10 * 60_000): { stop(): void } {
  if (rules.length === 0) return { stop() {} };
  const timer = setInterval(() => {
    sweepExpired(rules)
      .then((removed) => removed > 0 && logger.info({ removed }, 'expired documents removed'))
      .catch((err: unknown) => logger.warn({ err }, 'expiry sweep failed'));
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
