/**
 * Browser state of the simulated github.com: sign-in sessions (a cookie) and the pending
 * requests behind the authorize and install forms (an opaque id in a hidden field).
 *
 * These ids are random, not seeded: they are not data, and a browser shares cookies among
 * every server on 127.0.0.1 whatever the port, so two simulators with the same seed must
 * never recognise each other's sessions. The cookie name carries the port for the same
 * reason (one simulator's sign-in does not overwrite another's).
 */
import crypto from 'node:crypto';

function randomId(): string {
  return crypto.randomBytes(24).toString('base64url');
}

/** `ghsim_session_<port>`, or `ghsim_session` before the simulator listens. */
export function sessionCookieName(base: string | null): string {
  const port = base ? new URL(base).port : '';
  return port ? `ghsim_session_${port}` : 'ghsim_session';
}

export function parseCookies(header: string | string[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const text = Array.isArray(header) ? header.join('; ') : (header ?? '');
  for (const part of text.split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    let value = part.slice(i + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // keep the raw value
    }
    if (!out.has(name)) out.set(name, value);
  }
  return out;
}

/** A session cookie (no Max-Age: it ends with the browser), HttpOnly, SameSite=Lax. */
export function sessionCookie(name: string, value: string | null): string {
  return value === null ? `${name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0` : `${name}=${value}; Path=/; HttpOnly; SameSite=Lax`;
}

export class SessionStore {
  private readonly sessions = new Map<string, { login: string }>();

  create(login: string): string {
    const id = randomId();
    this.sessions.set(id, { login });
    return id;
  }

  login(id: string | undefined): string | undefined {
    return id === undefined ? undefined : this.sessions.get(id)?.login;
  }

  delete(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(id);
  }

  clear(): void {
    this.sessions.clear();
  }
}

/** Pending form requests live one hour of the simulator's clock, then the form is stale. */
const PENDING_TTL_MS = 3_600_000;

export class PendingStore<T> {
  private readonly items = new Map<string, { value: T; expiresAtMs: number }>();

  create(value: T, nowMs: number): string {
    for (const [id, it] of this.items) if (nowMs >= it.expiresAtMs) this.items.delete(id);
    const id = randomId();
    this.items.set(id, { value, expiresAtMs: nowMs + PENDING_TTL_MS });
    return id;
  }

  get(id: string | null, nowMs: number): T | undefined {
    if (id === null) return undefined;
    const it = this.items.get(id);
    return it && nowMs < it.expiresAtMs ? it.value : undefined;
  }

  delete(id: string | null): void {
    if (id !== null) this.items.delete(id);
  }
}
