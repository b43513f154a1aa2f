import type { RouteGroup } from './routing/route';
import { actionRoutes } from './routers/actions';
import { connectPageRoutes } from './routers/connect-page';
import { connectionRoutes } from './routers/connections';
import { connectSessionRoutes } from './routers/connect-sessions';
import { docsRoutes } from './routers/docs';
import { environmentRoutes } from './routers/environment';
import { healthRoutes } from './routers/health';
import { integrationRoutes } from './routers/integrations';
import { logsRoutes } from './routers/logs';
import { mcpRoutes } from './routers/mcp';
import { oauthFlowRoutes } from './routers/oauth-flow';
import { operationRoutes } from './routers/operations';
import { providerRoutes } from './routers/providers';
import { providerWebhookRoutes } from './routers/provider-webhooks';
import { proxyRoutes } from './routers/proxy';
import { recordsRoutes } from './routers/records';
import { syncRoutes } from './routers/sync';
import { webhookRoutes } from './routers/webhooks';

/**
 * Every route of the API, by router module: the one list the Express mounting (api/app.ts),
 * the OpenAPI document (api/openapi/document.ts, in this order), the fuzz targets
 * (tests/fuzz/routes.ts) and the document's tests read. A route is added to its router
 * module's group; a new router module's group is added here.
 */
export const API_ROUTES: readonly RouteGroup[] = [
  healthRoutes,
  docsRoutes,
  integrationRoutes,
  providerRoutes,
  connectionRoutes,
  syncRoutes,
  recordsRoutes,
  actionRoutes,
  operationRoutes,
  environmentRoutes,
  logsRoutes,
  webhookRoutes,
  providerWebhookRoutes,
  proxyRoutes,
  mcpRoutes,
  connectSessionRoutes,
  connectPageRoutes,
  oauthFlowRoutes,
];
