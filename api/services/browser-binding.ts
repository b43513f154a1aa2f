import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

/**
 * Binds an authorization flow to the browser that started it (RFC 9700 §4.7): a random value
 * in an HttpOnly, SameSite=Lax cookie, whose hash the flow's state keeps. A callback carrying
 * someone else's state (a link opened in another browser, an attacker's code injected into a
 * victim's browser) has no matching cookie and is refused.
 *
 * One value per browser, reused by every flow it starts, so several flows in one browser (two
 * tabs, a retry) all still complete. On https the cookie is `__Host-` prefixed, and only that
 * name is read back: a browser keeps a `__Host-` cookie only when it came over https from this
 * very host, so a sibling subdomain or a plain-http page (which can set a plain `weft_flow`
 * for this host) cannot plant a value of its own.
 */
const COOKIE = 'weft_flow';
const SECURE_COOKIE = '__Host-weft_flow';
/** 32 random bytes, base64url. */
const VALUE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function hashBinding(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Sets (or refreshes) the browser's binding cookie; returns the hash to keep with the state. */
export function bindBrowser(req: Request, res: Response, opts: { secure: boolean; maxAgeMs: number }): string {
  const name = opts.secure ? SECURE_COOKIE : COOKIE;
  const existing = readCookie(req, name);
  const value = existing !== undefined && VALUE_PATTERN.test(existing) ? existing : randomBytes(32).toString('base64url');
  res.cookie(name, value, { httpOnly: true, sameSite: 'lax', secure: opts.secure, path: '/', maxAge: opts.maxAgeMs });
  return hashBinding(value);
}

/**
 * Whether this request comes from the browser whose binding hashes to `expectedHash`. Only
 * the cookie bindBrowser sets for `secure` counts: on https a plain `weft_flow` is ignored.
 */
export function isSameBrowser(req: Request, expectedHash: string | undefined, opts: { secure: boolean }): boolean {
  if (!expectedHash) return false;
  const value = readCookie(req, opts.secure ? SECURE_COOKIE : COOKIE);
  if (value === undefined) return false;
  const expected = Buffer.from(expectedHash, 'hex');
  const actual = Buffer.from(hashBinding(value), 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * One cookie from the Cookie header. Written here rather than adding cookie-parser for a
 * single read: names are fixed, values are base64url (nothing to decode).
 */
function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
