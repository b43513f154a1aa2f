import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { WeftError } from '../../common/errors';

/**
 * How the API reads request bodies, in one place: JSON everywhere, URL-encoded forms only on
 * the browser routes that post them. Any other body used to be skipped by the parser and
 * read as `{}` (a `text/plain` PATCH answered 200 and changed nothing); now it is a 415.
 *
 * Errors of the parsers themselves (unsupported charset or encoding, too large, too many
 * form parameters) carry their own 4xx status and are answered by the error middleware.
 */
const BODY_LIMITS = {
  /** JSON bodies, after decompression. */
  json: '2mb',
  /** Browser forms carry a session token and an API key. */
  form: '16kb',
  /** Form fields; more is a 413 (body-parser's own default, stated here so it is visible). */
  formParameters: 1_000,
} as const;

export interface BodyParsingOptions {
  /** Routes (Express paths) that take URL-encoded browser forms instead of JSON, e.g. `/connect/api-key/:key`. */
  formRoutes: string[];
}

export function bodyParsing(opts: BodyParsingOptions): Router {
  const router = Router();
  const json = express.json({ limit: BODY_LIMITS.json });
  const form = express.urlencoded({ extended: false, limit: BODY_LIMITS.form, parameterLimit: BODY_LIMITS.formParameters });

  if (opts.formRoutes.length) {
    router.post(opts.formRoutes, accepting('application/x-www-form-urlencoded', form), (_req, _res, next) => next('router'));
  }
  router.use(accepting('application/json', json));
  return router;
}

/** Parses the body with `parser` when it has the one media type this route takes; 415 otherwise. */
function accepting(mediaType: string, parser: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!carriesBody(req)) return next();
    if (!req.is(mediaType)) {
      const given = req.headers['content-type'];
      return next(
        new WeftError(
          'unsupported_media_type',
          `This route takes ${mediaType} bodies; the request's Content-Type is ${given ? JSON.stringify(given.length > 80 ? `${given.slice(0, 80)}…` : given) : 'missing'}.`,
          415,
        ),
      );
    }
    parser(req, res, (err?: unknown) => next(err === undefined ? undefined : decompressionError(req, err)));
  };
}

/** A body is there when it is announced with a length above zero or sent chunked. */
function carriesBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/**
 * A body that says `Content-Encoding: gzip` (deflate, br) but does not decompress fails in
 * zlib; body-parser passes that on as a bare 400 without a type. Name it.
 */
function decompressionError(req: Request, err: unknown): unknown {
  const e = err as { type?: unknown; status?: unknown };
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity' && e && e.type === undefined && e.status === 400) {
    return new WeftError('invalid_content_encoding', `The body is not valid ${encoding.slice(0, 20)} data, as its Content-Encoding says it is.`, 400);
  }
  return err;
}
