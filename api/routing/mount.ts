import { Router, type Request, type RequestHandler } from 'express';
import type { z } from 'zod';
import type { ApiDeps } from '../deps';
import { parseInput } from '../validate';
import type { ApiRoute, OpenApiDocument, RouteGroup, RouteInput, RouteRequest } from './route';

/** The handlers' surroundings that are not the request: the deps, and the served document. */
export interface MountContext {
  deps: ApiDeps;
  openApiDocument(): OpenApiDocument;
}

/**
 * The group's routes as one Express router, to be mounted at `group.mount` (and its alias):
 * each route at its path relative to the mount, in declaration order (a literal segment
 * declared before a parameter takes precedence: `/metadata` before `/:connectionId`); a
 * route of any method as the router's catch-all.
 */
export function groupRouter(group: RouteGroup, ctx: MountContext): Router {
  const router = Router();
  for (const route of group.routes) {
    const handler = routeHandler(route, ctx);
    if (route.method === 'all') router.use(handler);
    else router[route.method](route.path.slice(group.mount.length) || '/', handler);
  }
  return router;
}

/** The Express paths of the routes that take URL-encoded forms (the body parser reads forms there only). */
export function formRoutes(groups: readonly RouteGroup[]): string[] {
  return groups.flatMap((g) => g.routes.filter((r) => r.request?.bodyType === 'form').map((r) => r.path));
}

function routeHandler(route: ApiRoute, ctx: MountContext): RequestHandler {
  return async (req, res, next) => {
    const input = routeInput(route.request ?? {}, req);
    if (route.validate !== 'in-handler') {
      input.params();
      input.headers();
      input.query();
      input.body();
    }
    await route.handler({ deps: ctx.deps, openApiDocument: ctx.openApiDocument, req, res, next, input });
  };
}

function routeInput<R extends RouteRequest>(request: R, req: Request): RouteInput<R> {
  const parsed = new Map<string, unknown>();
  const part = (name: string, schema: z.ZodType | undefined, value: () => unknown, code: Parameters<typeof parseInput>[2]) => () => {
    if (!schema) return undefined;
    if (!parsed.has(name)) parsed.set(name, parseInput(schema, value(), code));
    return parsed.get(name);
  };
  return {
    params: part('params', request.params, () => req.params, 'invalid_path_params'),
    headers: part('headers', request.headers, () => req.headers, 'invalid_headers'),
    query: part('query', request.query, () => req.query, 'invalid_query_params'),
    body: part('body', request.body, () => req.body, 'invalid_body'),
  } as RouteInput<R>;
}
