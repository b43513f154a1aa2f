/**
 * What a route hands back to the pipeline (an Outcome), and the small HTTP helpers the
 * routes share: JSON / HTML / redirect answers, request bodies, cookies, Basic auth.
 */
import type http from 'node:http';
import type { AadError } from './errors';

export interface Outcome {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  /** The AADSTS error this answer carries (JSON body, error page or error redirect), for log and stats. */
  error?: AadError;
}

/** Pages carry no caching and refuse framing, as Microsoft's sign-in pages do. */
const HTML_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store, no-cache',
  pragma: 'no-cache',
  'x-frame-options': 'DENY',
};

export function htmlOutcome(status: number, html: string, error?: AadError): Outcome {
  return { status, headers: { ...HTML_HEADERS }, body: html, error };
}

/** Token responses must not be cached (RFC 6749 §5.1). */
export function jsonOutcome(status: number, body: unknown, error?: AadError): Outcome {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store, no-cache', pragma: 'no-cache' },
    body: JSON.stringify(body),
    error,
  };
}

export function redirectOutcome(location: string, error?: AadError): Outcome {
  return { status: 302, headers: { location, 'cache-control': 'no-store, no-cache' }, body: '', error };
}

export function withHeader(o: Outcome, name: string, value: string): Outcome {
  const prev = o.headers[name];
  const next = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  return { ...o, headers: { ...o.headers, [name]: next } };
}

const MAX_BODY_BYTES = 1 << 20;

/** The request body as text (at most 1 MiB; more, or an aborted upload → null). */
export function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(chunks).toString('utf8')));
    // An aborted upload never ends: settle anyway (a no-op after 'end').
    req.on('close', () => resolve(null));
    req.on('error', reject);
  });
}

/** Form fields of an `application/x-www-form-urlencoded` body; anything else reads as empty. */
export function parseForm(contentType: string | undefined, body: string): URLSearchParams {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/x-www-form-urlencoded' ? new URLSearchParams(body) : new URLSearchParams();
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Authorization: Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1). */
export function parseBasicAuth(header: string | undefined): { clientId: string; secret: string } | null {
  const m = header ? /^\s*basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!m) return null;
  const text = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return { clientId: decode(text.slice(0, colon)), secret: decode(text.slice(colon + 1)) };
}

/** The first value of a parameter, or undefined. */
export function param(p: URLSearchParams, name: string): string | undefined {
  const v = p.get(name);
  return v === null ? undefined : v;
}
