import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { WeftError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import { codecAuthenticator, type CodecAuthSettings } from '../middleware/codec-auth';
import { codecBody, type JsonPayload } from '../schemas/codec';
import { parseInput } from '../validate';

/** What `weft api` serves the codec endpoint with (WEFT_CODEC_ENDPOINT_*). */
export interface CodecEndpoint {
  /** The core's payload codec: the one every Weft client and worker writes with. */
  codec: PayloadCodec;
  /** Who may call it: bearer tokens (WEFT_CODEC_ENDPOINT_TOKENS) and/or the UI's sign-in JWTs (WEFT_CODEC_ENDPOINT_JWKS_FILE). */
  auth: CodecAuthSettings;
  /** Browser origins allowed to call it (WEFT_CODEC_ENDPOINT_CORS_ORIGINS): the Temporal UI's. */
  corsOrigins: readonly string[];
  /** WEFT_CODEC_ENDPOINT_MAX_BODY_BYTES. */
  maxBodyBytes: number;
}

export interface CodecRouterOptions {
  /**
   * Counts a refused call against its client's budget of requests without valid credentials
   * (the API's per-address limit); throws its 429 when that is spent.
   */
  onRefused?: (req: Request, res: Response) => void;
}

/** The headers the Temporal UI sends with its codec calls, allowed in preflight. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Namespace';
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * The codec endpoint for operators: Temporal's remote-codec protocol, so the Temporal UI
 * (its "Codec Server" setting, or the server's `--ui-codec-endpoint`) and the `temporal` CLI
 * (`--codec-endpoint <base>/codec --codec-auth "Bearer <token>"`) show the payloads Weft
 * encrypted (auth/payload-codec.ts).
 *
 * - `POST /decode`, `POST /encode`: `{"payloads":[{"metadata":{…base64…},"data":"base64"}]}` in
 *   and out, `X-Namespace` naming the namespace. Decoding returns secrets (tokens, download
 *   URLs, file contents), so every call needs `Authorization: Bearer <credential>`: one of the
 *   configured tokens, or a sign-in JWT of the Temporal UI's identity provider when configured
 *   (api/middleware/codec-auth.ts); else 401 `codec_unauthorized`, before the body is read.
 * - CORS for the configured origins only, with credentials (the UI's "include cross-origin
 *   credentials"); a preflight from any other origin is 403 `codec_origin_not_allowed`.
 * - Each call is logged with who called (a token's position in the list, or the JWT's
 *   subject), the namespace and the count of payloads, never the payloads.
 *
 * Mounted only when WEFT_CODEC_ENDPOINT_ENABLED is true; otherwise its paths are 404.
 */
export function codecRouter(endpoint: CodecEndpoint, logger: Logger, opts: CodecRouterOptions = {}): Router {
  const authenticate = codecAuthenticator(endpoint.auth);
  const router = Router();
  const origins = new Set(endpoint.corsOrigins);
  const log = logger.child({ component: 'codec-endpoint' });

  router.use((req: Request, res: Response, next: NextFunction) => {
    const origin = req.header('origin');
    if (origin && origins.has(origin)) {
      res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true' });
      res.vary('Origin');
    }
    if (req.method !== 'OPTIONS') return next();
    if (!origin || !origins.has(origin)) {
      return next(new WeftError('codec_origin_not_allowed', 'This origin may not call the codec endpoint; add it to WEFT_CODEC_ENDPOINT_CORS_ORIGINS.', 403));
    }
    res
      .set({ 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': ALLOWED_HEADERS, 'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_S) })
      .status(204)
      .end();
  });

  // Before the body is read: an unauthenticated caller cannot make the process parse megabytes.
  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const caller = await authenticate(req.header('authorization'));
    if (caller === null) {
      opts.onRefused?.(req, res);
      return next(
        new WeftError(
          'codec_unauthorized',
          'The codec endpoint needs "Authorization: Bearer <credential>": one of WEFT_CODEC_ENDPOINT_TOKENS, or a sign-in token it can verify.',
          401,
        ),
      );
    }
    res.locals.codecCaller = caller;
    next();
  });

  const json = express.json({ limit: endpoint.maxBodyBytes, type: () => true });
  for (const direction of ['decode', 'encode'] as const) {
    router.post(`/${direction}`, json, async (req: Request, res: Response) => {
      const { payloads } = parseInput(codecBody, req.body, 'invalid_body');
      const namespace = req.header('x-namespace') ?? null;
      const input = payloads.map(fromJson);
      const output = direction === 'decode' ? await endpoint.codec.decode(input) : await endpoint.codec.encode(input);
      log.info({ direction, caller: res.locals.codecCaller as string, namespace, payloads: payloads.length }, `codec endpoint: ${direction}d payloads`);
      res.json({ payloads: output.map(toJson) });
    });
  }
  return router;
}

function fromJson(p: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data ?? '', 'base64'),
  };
}

function toJson(p: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')])),
    data: Buffer.from(p.data ?? []).toString('base64'),
  };
}
