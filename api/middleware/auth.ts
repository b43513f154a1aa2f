import type { NextFunction, Request, Response } from 'express';
import { UnauthorizedError } from '../../common/errors';
import type { EnvironmentStore } from '../../store/environments';

/** Resolves `Authorization: Bearer <secret key>` to its environment; 401 otherwise. */
export function requireSecretKey(environments: EnvironmentStore) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new UnauthorizedError();
    const env = await environments.findBySecretKey(match[1]);
    if (!env) throw new UnauthorizedError();
    res.locals.environment = env._id;
    next();
  };
}

export function environmentOf(res: Response): string {
  return res.locals.environment as string;
}
