import express, { type Express, type RequestHandler } from 'express';
import type { ApiDeps } from './deps';
import { requireSecretKey } from './middleware/auth';
import { apiRateLimit } from './middleware/rate-limit';
import { ClientRateLimiter } from './middleware/client-rate-limit';
import { securityHeaders } from './middleware/security-headers';
import { routeSpanName } from './middleware/route-span';
import { requestScope } from './middleware/request-scope';
import { errorHandler, notFound } from './middleware/errors';
import { bodyParsing } from './middleware/body-parsing';
import { connectionsRouter } from './routers/connections';
import { syncRouter } from './routers/sync';
import { recordsRouter } from './routers/records';
import { actionsRouter } from './routers/actions';
import { operationsRouter } from './routers/operations';
import { connectSessionsRouter } from './routers/connect-sessions';
import { connectPageRouter } from './routers/connect-page';
import { oauthFlowRouter } from './routers/oauth-flow';
import { logsRouter } from './routers/logs';
import { webhooksRouter } from './routers/webhooks';
import { healthRouter } from './routers/health';
import { docsRouter } from './routers/docs';
import { proxyRouter } from './routers/proxy';
import { codecRouter } from './routers/codec';
import { parseQueryString } from './query-parser';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi/document';
import { groupRouter, type MountContext } from './routing/mount';
import type { RouteGroup } from './routing/route';
import { integrationRoutes } from './routers/integrations';
import { environmentRoutes } from './routers/environment';

/** The app-facing REST API (shape of Nango's public API; the routes are in the OpenAPI document, api/openapi/). */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  let document: OpenApiDocument | undefined;
  const ctx: MountContext = { deps, openApiDocument: () => (document ??= buildOpenApiDocument(deps.registry)) };
  /** A group's router at its mount (and its alias's), behind `before`. */
  const mount = (group: RouteGroup, before: RequestHandler[]) => {
    const router = groupRouter(group, ctx);
    for (const at of [group.mount, ...(group.alias ? [group.alias.mount] : [])]) app.use(at || '/', ...before, router);
  };
  app.disable('x-powered-by');
  // req.ip, by which requests without a key are limited: the peer, or the client the trusted proxies name (WEFT_TRUST_PROXY).
  app.set('trust proxy', deps.settings.trustProxy ?? false);
  app.set('query parser', parseQueryString);
  // With OpenTelemetry on: the request's span is named after the route matched, and the
  // provider calls it makes carry its environment, integration and connection (no-ops otherwise).
  app.use(routeSpanName(), requestScope());
  // First, so every answer has them, including the body parser's refusals and 404s.
  app.use(securityHeaders());
  // Requests with no environment to count against (probes, pages, missing or wrong keys): per client address.
  const clients = new ClientRateLimiter(deps.settings.clientRateLimit ?? { limit: 0, windowMs: 60_000 });
  // Secret key first (it names the environment), then that environment's rate limit.
  const auth = [requireSecretKey(deps.stores.environments, clients), apiRateLimit(deps.stores.apiRateCounters, deps.settings.apiRateLimit, deps.logger)];
  // Before the body parser: any method, and the body streamed to the provider as it came.
  app.use('/proxy', auth, proxyRouter(deps));
  // Operators' tools (the Temporal UI and CLI), with their own tokens, CORS and body cap; off unless configured.
  // Refused calls spend their address's budget, as wrong secret keys do.
  if (deps.codecEndpoint) app.use('/codec', codecRouter(deps.codecEndpoint, deps.logger, { onRefused: (req, res) => clients.takeUnauthenticated(req, res) }));

  // JSON bodies everywhere; the Connect page's API-key form is the one form route.
  app.use(bodyParsing({ formRoutes: ['/connect/api-key/:key'] }));

  // Readiness calls the database and Temporal: limited, in a budget of its own so that a flood
  // of wrong keys from a proxy's address cannot fail its probes. Liveness calls nothing: a
  // limit would cost as much as the answer, and a refused liveness probe restarts the process.
  app.use('/ready', clients.limit('probes'));
  app.use(healthRouter(deps));

  mount(integrationRoutes, auth);
  app.use('/connections', auth, connectionsRouter(deps));
  app.use('/connection', auth, connectionsRouter(deps)); // Nango's older singular path
  app.use('/sync', auth, syncRouter(deps));
  app.use('/records', auth, recordsRouter(deps));
  app.use('/action', auth, actionsRouter(deps));
  app.use('/v1', auth, operationsRouter(deps));
  mount(environmentRoutes, auth);
  app.use('/logs', auth, logsRouter(deps));
  app.use('/webhooks', auth, webhooksRouter(deps));

  app.use('/connect/sessions', auth, connectSessionsRouter(deps));
  // Everything below has no secret key: each client address has its budget.
  app.use(clients.limit('unauthenticated'));
  // Public, like /health: the OpenAPI document and its reference page.
  app.use(docsRouter(deps));
  // Browser-facing: the connect session token (or the OAuth state) is the credential.
  app.use(connectPageRouter(deps));
  app.use(oauthFlowRouter(deps));

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
