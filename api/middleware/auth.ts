import type { NextFunction, Request, Response } from 'express';
import { UnauthorizedError } from '../../common/errors';
import type { EnvironmentStore } from '../../store/environments';

/** Resolves `Authorization: Bearer <secret key>` to its environment; 401 otherwise. */
export function requireSecretKey(environments: EnvironmentStore) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new UnauthorizedError();
    // Cached for a few seconds (store/read-cache.ts): a key replaced by another process opens its environment that much longer.
    const environment = await environments.environmentForSecretKey(match[1]);
    if (!environment) throw new UnauthorizedError();
    res.locals.environment = environment;
    next();
  };
}

export function environmentOf(res: Response): string {
  return res.locals.environment as string;
}
