import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { IntegrationRegistry } from '../../runtime/registry';
import { openApiPath, type ApiRoute, type HttpMethod, type RouteGroup } from '../routing/route';

const HTTP_METHODS: readonly HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

/** The OpenAPI operations of the registry's routes, in its order; an alias's right after the route's own. */
export function routeOperations(groups: readonly RouteGroup[], integrations: IntegrationRegistry): RouteConfig[] {
  return groups.flatMap((group) =>
    group.routes.flatMap((route) => {
      if ('undocumented' in route) return [];
      const operations = derivedOperations(group, route);
      const documented = route.openapi ? operations.flatMap((op) => route.openapi!(op, integrations)) : operations;
      return documented.flatMap((op) => (group.alias ? [op, aliasOperation(group, op)] : [op]));
    }),
  );
}

function derivedOperations(group: RouteGroup, route: Extract<ApiRoute, { operationId: string }>): RouteConfig[] {
  const r = route.request ?? {};
  const request: RouteConfig['request'] = {
    ...(r.params ? { params: r.params } : {}),
    ...(r.query ? { query: r.query } : {}),
    ...(r.headers ? { headers: r.headers } : {}),
    ...(r.body
      ? {
          body: {
            required: !r.bodyOptional,
            content: { [r.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: { schema: r.body } },
          },
        }
      : {}),
  };
  const operation: RouteConfig = {
    method: 'get',
    path: openApiPath(route.path),
    operationId: route.operationId,
    tags: [group.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.auth === 'secret-key' ? {} : { security: [] }),
    ...(Object.keys(request).length ? { request } : {}),
    responses: route.responses,
  };
  // A route of any method is one operation per method: `proxyGet`, `proxyPost`, ...
  if (route.method === 'all')
    return HTTP_METHODS.map((method) => ({ ...operation, method, operationId: `${route.operationId}${method[0].toUpperCase()}${method.slice(1)}` }));
  return [{ ...operation, method: route.method }];
}

function aliasOperation(group: RouteGroup, op: RouteConfig): RouteConfig {
  const alias = group.alias!;
  return {
    ...op,
    path: `${alias.mount}${op.path.slice(group.mount.length)}`,
    operationId: op.operationId ? `${op.operationId}${alias.operationIdSuffix}` : undefined,
    deprecated: true,
    description: alias.description,
  };
}
