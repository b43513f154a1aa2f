import express, { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { WeftError } from '../../common/errors';
import { outageOf } from '../../common/outage';
import type { ApiDeps } from '../deps';
import type { ClientRateLimiter } from '../middleware/client-rate-limit';
import { requestErrorOf } from '../middleware/errors';
import { loadSession, requireChange, requireSession, signIn, signOut } from './auth';
import { connectionPage, syncAction } from './pages/connection';
import { confirmDeletePage, connectionsPage, createConnectLink, createReconnectLink, deleteConnectionAction } from './pages/connections';
import { integrationPage, integrationsPage } from './pages/integrations';
import { logEntryPage, logsPage } from './pages/logs';
import { recordsPage } from './pages/records';
import { signInPage } from './pages/sign-in';
import { replayEventAction, replayFailedAction, webhookEventPage, webhooksPage } from './pages/webhooks';
import { consoleRefusal } from './refusal';
import { CONSOLE_CSS } from './view/style';

type Handler = (deps: ApiDeps, req: Request, res: Response) => Promise<void> | void;

/**
 * A console handler: what it refuses (a Weft error, a request Express could not read, an
 * outage) is a page with the status and code; anything else is Weft's fault and goes on to
 * the error middleware (logged, 500).
 */
function handle(deps: ApiDeps, fn: Handler): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      await fn(deps, req, res);
    } catch (err) {
      const outage = outageOf(err);
      if (outage) res.set('Retry-After', String(outage.retryAfterSeconds));
      const refused = outage ?? (err instanceof WeftError ? { status: err.status, code: err.code, message: err.message } : requestErrorOf(err));
      if (!refused) return next(err);
      consoleRefusal(res, refused.status, refused.code, refused.message, res.locals.consoleSession);
    }
  };
}

/**
 * The operator console at `/console`: server-rendered pages over the same services the API's
 * routes call, for one environment per sign-in (docs/console.md). Its own Content-Security-
 * Policy: styles from Weft's origin only, no script at all, forms post to Weft only.
 */
export function consoleRouter(deps: ApiDeps, clients: ClientRateLimiter): Router {
  const router = Router();
  router.use(
    helmet.contentSecurityPolicy({
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    }),
  );
  router.get('/assets/console.css', (_req, res) => {
    res.type('css').send(CONSOLE_CSS);
  });
  // Every request without a session counts against its address, as requests without a key do.
  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 100 }));
  router.use(loadSession(deps), (req, res, next) => (res.locals.consoleSession ? next() : clients.limit('unauthenticated')(req, res, next)));

  router.get('/sign-in', handle(deps, signInPage));
  router.post('/sign-in', handle(deps, signIn(clients)));
  router.post('/sign-out', handle(deps, signOut));

  // Changes: session, CSRF token, admin.
  const change = (path: string, fn: Handler) => router.post(path, requireChange, handle(deps, fn));
  change('/connect-links', createConnectLink);
  change('/connections/:key/:id/reconnect', createReconnectLink);
  change('/connections/:key/:id/delete', deleteConnectionAction);
  change('/connections/:key/:id/syncs', syncAction);
  change('/webhooks/replay-failed', replayFailedAction);
  change('/webhooks/:id/replay', replayEventAction);

  // Pages: a session, or the sign-in page.
  const page = (path: string, fn: Handler) => router.get(path, requireSession, handle(deps, fn));
  router.get('/', requireSession, (_req, res) => res.redirect(303, '/console/integrations'));
  page('/integrations', integrationsPage);
  page('/integrations/:key', integrationPage);
  page('/connections', connectionsPage);
  page('/connections/:key/:id', connectionPage);
  page('/connections/:key/:id/delete', confirmDeletePage);
  page('/connections/:key/:id/records', recordsPage);
  page('/logs', logsPage);
  page('/logs/entry', logEntryPage);
  page('/webhooks', webhooksPage);
  page('/webhooks/:id', webhookEventPage);
  router.use((req, res) => consoleRefusal(res, 404, 'not_found', `No console page at ${req.path}.`, res.locals.consoleSession));
  return router;
}
