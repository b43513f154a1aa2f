import { context } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import type { RequestHandler } from 'express';

/**
 * Gives the API request's span (the http instrumentation's server span) the route Express
 * matched: `http.route` = `/connections/:connectionId`, span name `GET /connections/:connectionId`,
 * never the raw path with its ids. The OTel 1.x generation's express instrumentation patches
 * Express 4 only; this does the part of its job Weft needs, through the same channel: the
 * RPC metadata the http instrumentation puts in the request's context and reads when the
 * response ends. Express (router 2) assigns `req.route` when a route matches, while
 * `req.baseUrl` is still the mount path of its router: a setter on the request catches that
 * moment. A request no route pattern answers inside a mounted router (the proxy's catch-all
 * `use`, a 404 under /connections) gets its mount: `GET /proxy/*`. Without telemetry (no
 * metadata in the context) it does nothing.
 */
export function routeSpanName(): RequestHandler {
  return (req, _res, next) => {
    const rpc = getRPCMetadata(context.active());
    if (rpc?.type !== RPCType.HTTP) return next();
    let route: unknown;
    let baseUrl = req.baseUrl;
    let matched = false;
    Object.defineProperties(req, {
      route: {
        configurable: true,
        enumerable: true,
        get: () => route,
        set(value: { path?: unknown } | undefined) {
          route = value;
          if (typeof value?.path !== 'string') return;
          matched = true;
          rpc.route = routePattern(baseUrl, value.path);
        },
      },
      baseUrl: {
        configurable: true,
        enumerable: true,
        get: () => baseUrl,
        set(value: string) {
          baseUrl = value;
          if (value && !matched) rpc.route = `${value}/*`;
        },
      },
    });
    next();
  };
}

/** The mount path and the route's own path as one pattern: `/connections` + `/` is `/connections`. */
function routePattern(baseUrl: string, path: string): string {
  if (path === '/' && baseUrl) return baseUrl;
  return `${baseUrl}${path}`;
}
