import type { RequestHandler } from 'express';
import type { ApiLifecycle } from '../deps';

/**
 * While the process drains after a stop signal, every answer says `Connection: close`, so
 * keep-alive clients reconnect (to another process) instead of holding a connection that is
 * about to close.
 */
export function closeConnectionsWhileDraining(lifecycle: ApiLifecycle | undefined): RequestHandler {
  return (_req, res, next) => {
    if (lifecycle?.shuttingDown) res.set('Connection', 'close');
    next();
  };
}
