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
import { closeConnectionsWhileDraining } from './middleware/draining';
import { codecRouter } from './routers/codec';
import { consoleRouter } from './console/router';
import { parseQueryString } from './query-parser';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi/document';
import { API_ROUTES } from './route-registry';
import { formRoutes, groupRouter, type MountContext } from './routing/mount';
import type { RouteGroup } from './routing/route';

/**
 * The app-facing REST API (shape of Nango's public API). Its routes are the route registry's
 * (api/route-registry.ts), each group mounted where its access puts it; the order of the
 * middleware around them is here.
 */
/** Lets a public route give back its request's address budget once the request proved itself (a verified signature). */
function refundOnceVerified(clients: ClientRateLimiter): RequestHandler {
  return (req, res, next) => {
    res.locals.verified = () => clients.refundUnauthenticated(req);
    next();
  };
}

export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // req.ip, by which requests without a key are limited: the peer, or the client the trusted proxies name (WEFT_TRUST_PROXY).
  app.set('trust proxy', deps.settings.trustProxy ?? false);
  app.set('query parser', parseQueryString);
  let document: OpenApiDocument | undefined;
  const ctx: MountContext = { deps, openApiDocument: () => (document ??= buildOpenApiDocument(deps.registry)) };
  const mount = (groups: RouteGroup[], before: RequestHandler[]) => {
    for (const group of groups) {
      const router = groupRouter(group, ctx);
      for (const at of [group.mount, ...(group.alias ? [group.alias.mount] : [])]) app.use(at || '/', ...before, router);
    }
  };
  const groups = (access: RouteGroup['access'], rawBody = false) => API_ROUTES.filter((g) => g.access === access && (g.rawBody ?? false) === rawBody);

  // With OpenTelemetry on: the request's span is named after the route matched, and the
  // provider calls it makes carry its environment, integration and connection (no-ops otherwise).
  app.use(routeSpanName(), requestScope());
  // First, so every answer has them, including the body parser's refusals and 404s.
  app.use(securityHeaders());
  // Requests with no environment to count against (probes, pages, missing or wrong keys): per client address.
  const clients = new ClientRateLimiter(deps.settings.clientRateLimit ?? { limit: 0, windowMs: 60_000 });
  // Secret key first (it names the environment), then that environment's rate limit.
  const auth = [requireSecretKey(deps.stores.environments, clients), apiRateLimit(deps.stores.apiRateCounters, deps.settings.apiRateLimit, deps.logger)];
  // Before the body parser: any method, and the body streamed to the provider as it came (the proxy).
  mount(groups('secret-key', true), auth);
  // The providers' webhook intake reads its raw body itself (the signature is over it). Each
  // delivery spends its address's budget until its signature verifies (then it is given back
  // and the integration's own limit counts it): forged deliveries cannot use up a provider's.
  mount(groups('public', true), [clients.limit('unauthenticated'), refundOnceVerified(clients)]);
  // Operators' tools (the Temporal UI and CLI), with their own tokens, CORS and body cap; off unless configured.
  // Refused calls spend their address's budget, as wrong secret keys do.
  if (deps.codecEndpoint) app.use('/codec', codecRouter(deps.codecEndpoint, deps.logger, { onRefused: (req, res) => clients.takeUnauthenticated(req, res) }));

  // The operator console: its own pages, forms, sessions and CSP (api/console/), before the API's JSON body parser.
  app.use('/console', consoleRouter(deps, clients));

  // JSON bodies everywhere; the routes that declare a form body (the Connect page's API-key form) take forms.
  app.use(bodyParsing({ formRoutes: formRoutes(API_ROUTES) }));

  // Readiness calls the database and Temporal: limited, in a budget of its own so that a flood
  // of wrong keys from a proxy's address cannot fail its probes. Liveness calls nothing: a
  // limit would cost as much as the answer, and a refused liveness probe restarts the process.
  app.use('/ready', clients.limit('probes'));
  app.use(closeConnectionsWhileDraining(deps.lifecycle));
  mount(groups('probe'), []);

  mount(groups('secret-key'), auth);

  // Everything below has no secret key: each client address has its budget. The OpenAPI
  // document and its reference page are public, like /health; the browser-facing routes'
  // credential is the connect session token (or the OAuth state).
  app.use(clients.limit('unauthenticated'));
  mount(groups('public'), []);

  app.use(notFound);
  app.use(errorHandler(deps.logger));
  return app;
}
