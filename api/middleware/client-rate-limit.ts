import type { NextFunction, Request, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { WeftError } from '../../common/errors';
import { TokenBuckets } from './token-buckets';

export interface ClientRateLimitSettings {
  /** Requests per window and client address; 0 turns the limit off. */
  limit: number;
  windowMs: number;
}

/** What a bucket counts: readiness probes, or everything else without a valid secret key. */
type Scope = 'probes' | 'unauthenticated';

/** Client addresses remembered per scope at most (a bucket is a few dozen bytes). */
const MAX_CLIENTS = 50_000;

/**
 * Limits per client address, in this process, for requests that have no environment to count
 * against: the probes, the Connect page and OAuth callbacks (their token or state is checked
 * in the database), unknown paths, and requests whose secret key is missing or wrong. Without
 * it, a flood of those reaches the database one lookup each, however the per-environment
 * limit is set. In process on purpose: counting them in the database would be the very load
 * it is there to keep away.
 *
 * The address is `req.ip`: the peer's address, or with WEFT_TRUST_PROXY the client's as the
 * trusted proxies report it. Behind a proxy without it, every client is the proxy's address
 * and shares one budget. IPv6 clients are counted per /64, the block one host usually has.
 */
export class ClientRateLimiter {
  private readonly buckets: Record<Scope, TokenBuckets> | null;

  constructor(private readonly settings: ClientRateLimitSettings) {
    this.buckets = settings.limit > 0 ? { probes: new TokenBuckets(settings, MAX_CLIENTS), unauthenticated: new TokenBuckets(settings, MAX_CLIENTS) } : null;
  }

  /** Middleware counting every request that reaches it against its address in `scope`. */
  limit(scope: Scope) {
    return (req: Request, res: Response, next: NextFunction) => {
      this.take(scope, req, res);
      next();
    };
  }

  /** One request without a verified key: 429 rate_limited (with Retry-After) when its address has none left. */
  takeUnauthenticated(req: Request, res: Response): void {
    this.take('unauthenticated', req, res);
  }

  /** Gives back what takeUnauthenticated took, for a request whose key turned out valid. */
  refundUnauthenticated(req: Request): void {
    this.buckets?.unauthenticated.refund(clientAddress(req));
  }

  private take(scope: Scope, req: Request, res: Response): void {
    if (!this.buckets) return;
    const decision = this.buckets[scope].take(clientAddress(req));
    if (decision.allowed) return;
    const retryAfter = Math.max(1, Math.ceil((decision.retryAt - Date.now()) / 1000));
    res.setHeader('Retry-After', String(retryAfter));
    const what = scope === 'probes' ? 'readiness probes' : 'requests without a valid secret key';
    throw new WeftError(
      'rate_limited',
      `Too many ${what} from this address (at most ${decision.limit} per ${Math.round(this.settings.windowMs / 1000)} s); retry after ${retryAfter} s.`,
      429,
    );
  }
}

/** The address a client is counted by: IPv4 as it is (also when IPv4-mapped), IPv6 by its /64. */
function clientAddress(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? '';
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${(parsed as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((p) => p.toString(16))
    .join(':')}::/64`;
}
