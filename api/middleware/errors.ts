import { STATUS_CODES } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { WeftError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { outageOf } from '../../common/outage';

/** One error shape for the whole API: `{ error: { code, message, errors? } }`. */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const outage = outageOf(err);
    if (outage) {
      // Expected while MongoDB or Temporal is down: one line per request, no stack.
      logger.warn({ dependency: outage.dependency, method: req.method, path: req.path, cause: causeOf(err) }, `${outage.dependency} unavailable`);
      res
        .status(outage.status)
        .set('Retry-After', String(outage.retryAfterSeconds))
        .json({ error: { code: outage.code, message: outage.message } });
      return;
    }
    if (err instanceof WeftError) {
      const body: Record<string, unknown> = { code: err.code, message: err.message };
      if (Array.isArray(err.details)) body.errors = err.details;
      else if (err.details && typeof err.details === 'object') Object.assign(body, err.details);
      // A wait (a provider account's budget, a throttled provider): when to come back.
      const waitMs = (err as { waitMs?: unknown }).waitMs;
      if (err.status === 429 && typeof waitMs === 'number') res.set('Retry-After', String(Math.max(1, Math.ceil(waitMs / 1000))));
      res.status(err.status).json({ error: body });
      return;
    }
    const refused = requestErrorOf(err);
    if (refused) {
      res.status(refused.status).json({ error: { code: refused.code, message: refused.message } });
      return;
    }
    logger.error({ err, method: req.method, path: req.path }, 'unhandled API error');
    res.status(500).json({ error: { code: 'internal_error', message: 'Something went wrong inside Weft; the error was logged.' } });
  };
}

/**
 * Express, its router and body-parser report a request they cannot read with an error that
 * carries its own 4xx status (http-errors: `status`/`statusCode`, `expose`, and body-parser's
 * `type`). Those are the client's mistakes, not Weft's: each gets its status and a stable
 * code. The parser's own message is not shown where it could quote the body back.
 */
export function requestErrorOf(err: unknown): { status: number; code: string; message: string } | null {
  if (!err || typeof err !== 'object') return null;
  const e = err as { type?: unknown; status?: unknown; statusCode?: unknown; expose?: unknown; message?: unknown; charset?: unknown; encoding?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  if (status === undefined || status < 400 || status > 499) return null;
  // The router's path-parameter decoding (`/integrations/%zz`): a URIError with status 400.
  if (err instanceof URIError)
    return { status: 400, code: 'invalid_path_encoding', message: 'A path segment is not valid percent-encoding (e.g. "%zz"); encode "%" as "%25".' };
  // Only http-errors mark themselves `expose`; an upstream client's error that merely has a
  // `status` (the provider's) is Weft's failure to handle, not the caller's mistake.
  if (e.expose !== true) return null;
  const known = typeof e.type === 'string' ? BODY_ERRORS[e.type]?.(e) : undefined;
  if (known) return { status, ...known };
  const reason = STATUS_CODES[status] ?? 'Bad Request';
  return {
    status,
    code: reason
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_|_$/g, ''),
    message: typeof e.message === 'string' ? e.message : reason,
  };
}

const BODY_ERRORS: Record<string, (e: { charset?: unknown; encoding?: unknown }) => { code: string; message: string }> = {
  'entity.parse.failed': () => ({ code: 'invalid_json', message: 'The request body is not valid JSON.' }),
  'entity.too.large': () => ({ code: 'body_too_large', message: 'The request body is too large.' }),
  'charset.unsupported': (e) => ({ code: 'unsupported_charset', message: `The body's charset "${shown(e.charset)}" is not supported; send UTF-8.` }),
  'encoding.unsupported': (e) => ({
    code: 'unsupported_content_encoding',
    message: `Content-Encoding "${shown(e.encoding)}" is not supported; send gzip, deflate, br or no encoding.`,
  }),
  'parameters.too.many': () => ({ code: 'too_many_parameters', message: 'The form has too many parameters.' }),
  'querystring.parse.rangeError': () => ({ code: 'invalid_form', message: 'The form nests its parameters too deeply.' }),
  'request.aborted': () => ({ code: 'request_aborted', message: 'The request body ended before it was complete.' }),
  'request.size.invalid': () => ({ code: 'invalid_content_length', message: 'The request body is not as long as its Content-Length says.' }),
};

/** A header value quoted back in a message, cut short. */
function shown(value: unknown): string {
  const text = String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** The driver's own words, for the log: name and message only (no topology dump, no connection string). */
function causeOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { message?: string } } | null;
  return `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}${e?.cause?.message ? ` (${e.cause.message})` : ''}`.slice(0, 300);
}

export function notFound(req: Request, res: Response): void {
  res.status(404).json({ error: { code: 'not_found', message: `No route for ${req.method} ${req.path}.` } });
}
