import { pipeline } from 'node:stream/promises';
import { Router } from 'express';
import type { Logger } from '../../common/logger';
import { RateLimitedError } from '../../runtime/errors';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { proxyHeaders } from '../schemas/proxy';
import { forwardProxyCall } from '../services/proxy';
import { parseInput } from '../validate';

/**
 * `ANY /proxy/<path>`: any method, any body (mounted before the JSON body parser, so bodies
 * reach the provider byte for byte), the provider's answer streamed back as it is.
 */
export function proxyRouter(deps: ApiDeps): Router {
  const router = Router();

  router.use(async (req, res) => {
    const headers = parseInput(proxyHeaders, req.headers, 'invalid_headers');
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort(new Error('the app closed the proxy request'));
    });
    let answer;
    try {
      answer = await forwardProxyCall(deps, {
        environment: environmentOf(res),
        headers,
        request: req,
        method: req.method,
        pathAndQuery: req.url,
        signal: aborted.signal,
      });
    } catch (err) {
      if (err instanceof RateLimitedError) res.set('Retry-After', String(Math.max(1, Math.ceil(err.waitMs / 1000))));
      throw err;
    }
    res.status(answer.status);
    // The provider's own `x-ratelimit-*` replace Weft's API ones on a proxied answer.
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    await streamBack(answer.body, res, deps.logger);
  });

  return router;
}

async function streamBack(body: NodeJS.ReadableStream, res: NodeJS.WritableStream & { headersSent: boolean }, logger: Logger): Promise<void> {
  try {
    await pipeline(body, res);
  } catch (err) {
    // The status is sent already: the app sees a cut-off body (its Content-Length says so).
    logger.warn({ err: (err as Error).message }, 'proxy: the response stream ended early');
  }
}
