import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { CLOSE_POPUP_SCRIPT, EXPIRY_SCRIPT, PAGE_STYLE } from '../pages/html';

/** A CSP source that allows exactly this inline content (CSP Level 2 hash source). */
function inlineHash(content: string): string {
  return `'sha256-${createHash('sha256').update(content, 'utf8').digest('base64')}'`;
}

/**
 * Security headers on every response, JSON and HTML alike (helmet):
 *
 * - One Content-Security-Policy for all: nothing loads by default; the pages' single inline
 *   style and their two scripts (closing a popup, the expiry in the reader's time zone) run
 *   because their hashes are listed (no 'unsafe-inline'), so markup injected into a page
 *   could not run script; stylesheets and images come from Weft's own origin only (the
 *   Connect page's colour, the app's and providers' logos); forms post only
 *   to Weft; no page can be framed (`frame-ancestors 'none'`, and X-Frame-Options: DENY for
 *   older browsers), so nobody can overlay the Connect page to capture an API key.
 * - Cross-Origin-Opener-Policy stays off: the Connect page is opened as a popup by the
 *   app's frontend, and `same-origin` would cut the popup from its opener (the app could not
 *   tell when it closes, and the result page could not close itself).
 * - `Cache-Control: no-store` on every response: the API answers with credentials
 *   (GET /connections/:id, ?include=credentials), session tokens (POST /connect/sessions,
 *   the Connect page that embeds one), signing keys and connection results; none of it may
 *   sit in a browser or proxy cache. The Connect page's assets (logos, colour stylesheets),
 *   named by their content, say otherwise themselves.
 * - The rest as helmet sets it: nosniff, Referrer-Policy: no-referrer (connect links carry
 *   the session token in the query), HSTS (browsers honour it only over https), ...
 */
export function securityHeaders(): RequestHandler {
  const headers = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: [inlineHash(CLOSE_POPUP_SCRIPT), inlineHash(EXPIRY_SCRIPT)],
        // 'self': the Connect page's colour stylesheet and its logos, served by Weft itself.
        styleSrc: ["'self'", inlineHash(PAGE_STYLE)],
        imgSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    },
    crossOriginOpenerPolicy: false,
    xFrameOptions: { action: 'deny' },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Cache-Control', 'no-store');
    headers(req, res, next);
  };
}
