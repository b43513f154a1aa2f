import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Router } from 'express';
import type { Logger } from '../../common/logger';
import { RateLimitedError } from '../../runtime/errors';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { proxyHeaders } from '../schemas/proxy';
import { forwardProxyCall } from '../services/proxy';
import { PROXY_VARY } from '../services/proxy-response-headers';
import { parseInput } from '../validate';

/**
 * `ANY /proxy/<path>`: any method, any body (mounted before the JSON body parser, so bodies
 * reach the provider byte for byte), the provider's answer streamed back as it is.
 */
export function proxyRouter(deps: ApiDeps): Router {
  const router = Router();

  router.use(async (req, res) => {
    // Set first, so that Weft's own error answers carry them too. The security headers set
    // no-store already; said again here because no provider header may ever replace it.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Vary', PROXY_VARY);
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
    // The provider's status as it is (undici gave a valid one: Express's status() checks it again).
    res.statusCode = answer.status;
    // The provider's own `x-ratelimit-*` replace Weft's API ones on a proxied answer. Its
    // headers pass by allow-list (proxy-response-headers.ts): none of them is Cache-Control,
    // so the security headers' `no-store` stays, and none is Vary.
    for (const name in answer.headers) res.setHeader(name, answer.headers[name]);
    await streamBack(answer.body, res, deps.logger);
  });

  return router;
}

/**
 * The provider's body to the app, as it comes. `pipe` with the two ends handled rather than
 * `stream/promises` pipeline, whose AbortController (and the DOMException it makes on every
 * finish) showed in the proxy's CPU profile; the same outcome: the app going away stops the
 * provider's body, a provider's body that fails cuts the app's answer off.
 */
function streamBack(body: Readable, res: ServerResponse, logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    let ended = false;
    const end = (problem?: string) => {
      if (ended) return;
      ended = true;
      // The status is sent already: the app sees a cut-off body (its Content-Length says so).
      if (problem) logger.warn({ err: problem }, 'proxy: the response stream ended early');
      resolve();
    };
    if (res.destroyed) {
      // The app left while the provider answered: its 'close' is gone already.
      body.destroy();
      return end('the app closed the connection before the body');
    }
    if (body.destroyed) {
      // Failed between the provider's headers and now: its 'error' is gone already.
      res.destroy();
      return end(body.errored?.message ?? 'the provider body was closed');
    }
    body.once('error', (err) => {
      res.destroy(err);
      end(err.message);
    });
    res.once('close', () => {
      if (res.writableFinished) return end();
      body.destroy();
      end('the app closed the connection before the end of the body');
    });
    body.pipe(res);
  });
}
