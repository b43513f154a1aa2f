import type { NextFunction, Request, Response } from 'express';
import { WeftError } from '../../common/errors';
import type { Logger } from '../../common/logger';

/** One error shape for the whole API: `{ error: { code, message, errors? } }`. */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof WeftError) {
      const body: Record<string, unknown> = { code: err.code, message: err.message };
      if (Array.isArray(err.details)) body.errors = err.details;
      else if (err.details && typeof err.details === 'object') Object.assign(body, err.details);
      res.status(err.status).json({ error: body });
      return;
    }
    const e = err as { type?: string; status?: number; message?: string };
    if (e?.type === 'entity.parse.failed') {
      res.status(400).json({ error: { code: 'invalid_json', message: 'The request body is not valid JSON.' } });
      return;
    }
    if (e?.type === 'entity.too.large') {
      res.status(413).json({ error: { code: 'body_too_large', message: 'The request body is too large.' } });
      return;
    }
    logger.error({ err, method: req.method, path: req.path }, 'unhandled API error');
    res.status(500).json({ error: { code: 'internal_error', message: 'Something went wrong inside Weft; the error was logged.' } });
  };
}

export function notFound(req: Request, res: Response): void {
  res.status(404).json({ error: { code: 'not_found', message: `No route for ${req.method} ${req.path}.` } });
}
