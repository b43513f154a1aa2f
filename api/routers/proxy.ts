import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import type { Logger } from '../../common/logger';
import { RateLimitedError } from '../../runtime/errors';
import { environmentOf } from '../middleware/auth';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { proxyHeaders } from '../schemas/proxy';
import { forwardProxyCall } from '../services/proxy';
import { PROXY_VARY } from '../services/proxy-response-headers';

/**
 * `ANY /proxy/<path>`: any method, any body (mounted before the JSON body parser, so bodies
 * reach the provider byte for byte), the provider's answer streamed back as it is.
 */
export const proxyRoutes = routeGroup({
  mount: '/proxy',
  access: 'secret-key',
  tag: 'Proxy',
  rawBody: true,
  routes: [
    route({
      method: 'all',
      path: '/proxy/*path',
      auth: 'secret-key',
      operationId: 'proxy',
      summary: 'Call the provider’s API with the connection’s credentials',
      description:
        'Any path under `/proxy/` is forwarded to the provider (query and body as sent, streamed). `Weft-Proxy-<Header>` (or `Nango-Proxy-<Header>`) headers are passed on without the prefix. With `Weft-Pre-Authenticated: true` the call goes to `Base-Url-Override` without the connection’s credentials (a pre-authenticated URL).',
      request: { params: z.object({ path: z.string().describe('The provider path, slashes included.') }), headers: proxyHeaders },
      // Parsed in the handler, after the cache headers are set.
      validate: 'in-handler',
      responses: {
        default: { description: 'The provider’s answer: its status, content headers and body, streamed.', content: { '*/*': { schema: z.unknown() } } },
        ...errorResponses([404, 424]),
      },
      async handler({ deps, req, res, input }) {
        // Set first, so that Weft's own error answers carry them too. The security headers set
        // no-store already; said again here because no provider header may ever replace it.
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('Vary', PROXY_VARY);
        const headers = input.headers();
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
      },
    }),
  ],
});

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
