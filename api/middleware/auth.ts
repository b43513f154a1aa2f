import type { NextFunction, Request, Response } from 'express';
import { UnauthorizedError } from '../../common/errors';
import type { EnvironmentStore } from '../../store/environments';
import type { ClientRateLimiter } from './client-rate-limit';

/**
 * Resolves `Authorization: Bearer <secret key>` to its environment; 401 otherwise.
 *
 * A request without a key, or with one this process has not just verified, first takes one
 * request from its client address's budget (`clients`): an address that has spent it is
 * answered 429 before any lookup, and the request is given back when the key turns out valid,
 * so only missing and wrong keys count. A recently verified key (cached) passes without it.
 */
export function requireSecretKey(environments: EnvironmentStore, clients: ClientRateLimiter) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.header('authorization') ?? '';
    const key = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    const verified = key !== undefined && environments.isRecentlyVerifiedSecretKey(key);
    if (!verified) clients.takeUnauthenticated(req, res);
    if (key === undefined) throw new UnauthorizedError();
    // Cached for a few seconds, found or not (store/environments.ts): a key replaced by another process opens its environment that much longer.
    const environment = await environments.environmentForSecretKey(key);
    if (!environment) throw new UnauthorizedError();
    if (!verified) clients.refundUnauthenticated(req);
    res.locals.environment = environment;
    next();
  };
}

export function environmentOf(res: Response): string {
  return res.locals.environment as string;
}
