import type { OpenApiGeneratorV31, RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import type { IntegrationRegistry } from '../../runtime/registry';
import type { ApiDeps } from '../deps';

/**
 * One route of the API, declared once, beside its handler: its method and path, what it takes
 * (zod schemas, which both validate the request and describe it), who may call it, what it
 * answers (the OpenAPI responses). The registry (api/route-registry.ts) collects every
 * router module's routes; the Express mounting (api/routing/mount.ts, api/app.ts), the
 * OpenAPI document (api/openapi/document.ts), the fuzz targets and the document's tests
 * are derived from it.
 */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/**
 * Who may call a route:
 * - `secret-key`: `Authorization: Bearer <secret key>`, which names the environment
 *   (`environmentOf(res)`); counted against that environment's rate limit.
 * - `session`: a browser holding a connect session token (in the query or the form).
 * - `none`: anyone (probes, the document, the OAuth redirects, whose state is the credential).
 * The last two are limited per client address.
 */
export type RouteAuth = 'secret-key' | 'session' | 'none';

/** What OpenAPI takes as path, query and header parameters: an object schema. */
type ParameterSchema = z.ZodObject | z.ZodPipe;

export interface RouteRequest {
  params?: ParameterSchema;
  headers?: ParameterSchema;
  query?: ParameterSchema;
  body?: z.ZodType;
  /** `form`: a browser's URL-encoded form (the body parser reads forms on such routes only). JSON otherwise. */
  bodyType?: 'json' | 'form';
  /** The body may be left out. */
  bodyOptional?: true;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * The request's parts, each parsed with its declared schema once (a failure is a 400 with
 * the part's code: `invalid_path_params`, `invalid_headers`, `invalid_query_params`,
 * `invalid_body`, and the invalid fields).
 */
export interface RouteInput<R extends RouteRequest> {
  params(): Parsed<R['params']>;
  headers(): Parsed<R['headers']>;
  query(): Parsed<R['query']>;
  body(): Parsed<R['body']>;
}

export interface RouteContext<R extends RouteRequest> {
  deps: ApiDeps;
  req: Request;
  res: Response;
  next: NextFunction;
  input: RouteInput<R>;
  /** The API's OpenAPI document, built on first use. Handed in, not imported: it is built from these routes. */
  openApiDocument(): OpenApiDocument;
}

interface RouteBase<R extends RouteRequest> {
  /** `all`: any method, at any path under `path`'s mount (the proxy); documented once per HttpMethod. */
  method: HttpMethod | 'all';
  /** The Express path, whole (`/integrations/:key`, `/v1/*path`); the document writes `{key}`. */
  path: string;
  auth: RouteAuth;
  request?: R;
  /**
   * By default every declared part is parsed before the handler runs, in the order params,
   * headers, query, body. `in-handler`: the handler parses (`input.body()`, ...) when its
   * own checks come first, e.g. a browser route's session before its form, answered as a page.
   */
  validate?: 'in-handler';
  handler(ctx: RouteContext<R>): Promise<void> | void;
}

interface DocumentedRoute<R extends RouteRequest> extends RouteBase<R> {
  operationId: string;
  summary: string;
  description?: string;
  /** Status → response (`json(schema, description)`, `html(...)`, `...errorResponses([404])`: api/openapi/). */
  responses: RouteConfig['responses'];
  /**
   * The route's operations when they depend on the integrations (the records' models, each
   * operation's own `/v1/...` endpoint): made from the one derived from the fields above.
   */
  openapi?(operation: RouteConfig, integrations: IntegrationRegistry): RouteConfig[];
}

interface UndocumentedRoute<R extends RouteRequest> extends RouteBase<R> {
  /** Served but not in the OpenAPI document, and why. */
  undocumented: string;
}

export type ApiRoute<R extends RouteRequest = RouteRequest> = DocumentedRoute<R> | UndocumentedRoute<R>;

/** Declares a route: `request`'s schemas type the handler's `input`. */
export function route<const R extends RouteRequest = Record<never, never>>(def: ApiRoute<R>): ApiRoute<R> {
  return def;
}

/**
 * The routes of one router module, mounted together at `mount`:
 * - `secret-key` routes behind the key check and the environment's rate limit;
 * - `probe` routes (`/health`, `/ready`) before any per-address limit (api/app.ts gives
 *   `/ready` a budget of its own);
 * - `public` routes after the per-address limit of requests without a key.
 */
export interface RouteGroup {
  /** Where the group's router is mounted ('' for the root): every route's path starts with it. */
  mount: string;
  access: 'secret-key' | 'probe' | 'public';
  /** The OpenAPI tag of its operations. */
  tag: string;
  /** Mounted before the JSON body parser, so the handler gets the body unread (the proxy streams it on). */
  rawBody?: true;
  /** A second mount of the same routes (Nango's older path), documented as deprecated: this description, operationIds with this suffix. */
  alias?: { mount: string; description: string; operationIdSuffix: string };
  routes: ApiRoute[];
}

/** Declares a router module's group; a route that does not belong to it is refused here, at load. */
export function routeGroup(group: RouteGroup): RouteGroup {
  for (const r of group.routes) {
    const where = `${r.method.toUpperCase()} ${r.path}`;
    if (r.path !== group.mount && !r.path.startsWith(`${group.mount}/`)) throw new Error(`${where} is not under its group's mount ${group.mount}`);
    if ((r.auth === 'secret-key') !== (group.access === 'secret-key')) throw new Error(`${where}: auth ${r.auth} in a ${group.access} group`);
    if (r.method === 'all' && !/^\/\*\w+$/.test(r.path.slice(group.mount.length)))
      throw new Error(`${where}: a route of any method takes everything under its mount (${group.mount}/*path)`);
  }
  return group;
}

/** Every route of the registry, by the name reports use (`GET /integrations/:key`), at each mount (an alias's too). */
export interface ListedRoute {
  /** `GET /connections/:connectionId`; `ANY /proxy/*path` for a route of any method. */
  name: string;
  method: HttpMethod | 'all';
  path: string;
  route: ApiRoute;
  group: RouteGroup;
}

/** The OpenAPI form of an Express path: `/integrations/:key` is `/integrations/{key}`, `/proxy/*path` is `/proxy/{path}`. */
export function openApiPath(path: string): string {
  return path.replace(/[:*](\w+)/g, '{$1}');
}

export function listRoutes(groups: readonly RouteGroup[]): ListedRoute[] {
  return groups.flatMap((group) =>
    [group.mount, ...(group.alias ? [group.alias.mount] : [])].flatMap((mount) =>
      group.routes.map((route) => {
        const path = `${mount}${route.path.slice(group.mount.length)}`;
        return { name: `${route.method === 'all' ? 'ANY' : route.method.toUpperCase()} ${path}`, method: route.method, path, route, group };
      }),
    ),
  );
}
