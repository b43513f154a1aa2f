import type { RouteGroup } from './routing/route';
import { integrationRoutes } from './routers/integrations';
import { environmentRoutes } from './routers/environment';

/**
 * Every route of the API, by router module: the one list the Express mounting (api/app.ts),
 * the OpenAPI document (api/openapi/document.ts), the fuzz targets (tests/fuzz/routes.ts) and
 * the document's tests read. A route is added to its router module's group; a new router
 * module's group is added here. Within a kind of access, groups are mounted in this order.
 */
export const API_ROUTES: readonly RouteGroup[] = [integrationRoutes, environmentRoutes];
