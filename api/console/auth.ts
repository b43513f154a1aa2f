import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies } from 'cookie';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { ConsoleSessionDoc } from '../../store/console-sessions';
import { CONSOLE_SESSION_TTL_MS } from '../../store/console-sessions';
import type { ApiDeps } from '../deps';
import type { ClientRateLimiter } from '../middleware/client-rate-limit';
import { consoleRefusal } from './refusal';

/** The session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), the console's path only. */
const SESSION_COOKIE = 'weft_console';
/** Ties the sign-in form to the browser that loaded it (no one else's page can sign a browser in). */
const SIGN_IN_COOKIE = 'weft_console_signin';

/** The signed-in operator of this request (set by loadSession). */
export function sessionOf(res: Response): ConsoleSessionDoc {
  return res.locals.consoleSession as ConsoleSessionDoc;
}

function cookiesOf(req: Request): Record<string, string | undefined> {
  return parseCookies(req.headers.cookie ?? '');
}

function sameSecret(a: string, b: string): boolean {
  // Hashed first: equal lengths for timingSafeEqual, and nothing learned from how long either is.
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

function cookieOptions(req: Request, maxAgeMs: number) {
  return { httpOnly: true, sameSite: 'strict' as const, secure: req.secure, path: '/console', maxAge: maxAgeMs };
}

/** The operator's session from the cookie, when there is a live one. */
export function loadSession(deps: ApiDeps): RequestHandler {
  return async (req, res, next) => {
    const token = cookiesOf(req)[SESSION_COOKIE];
    const session = token ? await deps.stores.consoleSessions.find(token) : null;
    if (session) res.locals.consoleSession = session;
    next();
  };
}

/** Pages: a browser with no session goes to the sign-in page. */
export function requireSession(_req: Request, res: Response, next: NextFunction): void {
  if (res.locals.consoleSession) return next();
  res.redirect(303, '/console/sign-in');
}

/**
 * Changes: a session, the form's CSRF token (the session's own, compared in constant time),
 * and an admin. Each refusal is a page with a stable code, and nothing is changed.
 */
export function requireChange(req: Request, res: Response, next: NextFunction): void {
  const session = res.locals.consoleSession as ConsoleSessionDoc | undefined;
  if (!session) return consoleRefusal(res, 401, 'console_session_required', 'Sign in to the console first.');
  const sent = typeof req.body?._csrf === 'string' ? req.body._csrf : '';
  if (!sent || !sameSecret(sent, session.csrf_token))
    return consoleRefusal(res, 403, 'invalid_csrf_token', 'This form is out of date or did not come from the console. Reload the page and try again.', session);
  if (session.role !== 'admin')
    return consoleRefusal(
      res,
      403,
      'console_read_only',
      'You are signed in as a read-only operator: sign in with the environment’s secret key to change things.',
      session,
    );
  next();
}

/** A fresh sign-in form: its token is set as a cookie too, and the two must match when it is posted. */
export function issueSignInToken(req: Request, res: Response): string {
  const token = randomBytes(24).toString('base64url');
  res.cookie(SIGN_IN_COOKIE, token, cookieOptions(req, 30 * 60_000));
  return token;
}

const signInBody = z.discriminatedUnion('method', [
  z.object({ method: z.literal('key'), secret_key: z.string().min(1).max(500), _csrf: z.string().max(200) }),
  z.object({ method: z.literal('password'), environment: z.string().min(1).max(100), password: z.string().min(1).max(500), _csrf: z.string().max(200) }),
]);

/**
 * POST /console/sign-in: a secret key signs in as that environment's admin; WEFT_CONSOLE_PASSWORD
 * as a read-only operator of the environment named. A wrong key or password spends the
 * address's budget of requests without a key (as a wrong API key does) and is told apart from
 * nothing else: the page does not say which part was wrong.
 */
export function signIn(clients: ClientRateLimiter) {
  return async (deps: ApiDeps, req: Request, res: Response): Promise<void> => {
    const parsed = signInBody.safeParse(req.body);
    const formToken = cookiesOf(req)[SIGN_IN_COOKIE];
    if (!parsed.success || !formToken || !sameSecret(parsed.data._csrf, formToken))
      return consoleRefusal(res, 400, 'invalid_sign_in', 'The sign-in form was incomplete or out of date. Load the sign-in page again.');
    clients.takeUnauthenticated(req, res);
    const body = parsed.data;
    let signedIn: { environment: string; role: ConsoleSessionDoc['role'] } | null = null;
    if (body.method === 'key') {
      const environment = await deps.stores.environments.environmentForSecretKey(body.secret_key);
      if (environment) signedIn = { environment, role: 'admin' };
    } else {
      const password = deps.settings.console?.password;
      const environment = await deps.stores.environments.get(body.environment);
      if (password && sameSecret(body.password, password) && environment) signedIn = { environment: environment._id, role: 'read-only' };
    }
    if (!signedIn) return consoleRefusal(res, 401, 'invalid_credentials', 'That key or password is not right.');
    clients.refundUnauthenticated(req);
    const { token } = await deps.stores.consoleSessions.create(signedIn);
    res.clearCookie(SIGN_IN_COOKIE, { path: '/console' });
    res.cookie(SESSION_COOKIE, token, cookieOptions(req, CONSOLE_SESSION_TTL_MS));
    res.redirect(303, '/console/integrations');
  };
}

/** POST /console/sign-out (a change like any other: the CSRF token is checked, read-only operators may too). */
export async function signOut(deps: ApiDeps, req: Request, res: Response): Promise<void> {
  const session = res.locals.consoleSession as ConsoleSessionDoc | undefined;
  const sent = typeof req.body?._csrf === 'string' ? req.body._csrf : '';
  if (!session || !sent || !sameSecret(sent, session.csrf_token))
    return consoleRefusal(res, 403, 'invalid_csrf_token', 'This form is out of date or did not come from the console.', session);
  await deps.stores.consoleSessions.delete(cookiesOf(req)[SESSION_COOKIE] as string);
  res.clearCookie(SESSION_COOKIE, { path: '/console' });
  res.redirect(303, '/console/sign-in?notice=signed-out');
}
