/**
 * Single sign-on sessions: after a successful sign-in the browser holds a session cookie,
 * and a later authorize request skips the sign-in page (unless `prompt=login`). Sessions
 * end after 24 h of inactivity (a non-persistent session token), on logout, or when the
 * user's sessions are revoked (revokeRefreshTokens).
 */
import { randomCredential } from './tokens';

/** Microsoft's session cookie name. Cookies ignore ports: one browser, one simulator session. */
export const SESSION_COOKIE = 'ESTSAUTH';
const SESSION_IDLE_MS = 24 * 3_600_000;

export interface SessionRecord {
  id: string;
  userId: string;
  /** Issue sequence number (compared with the user's revocation point). */
  seq: number;
  lastSeen: number;
}

export class SessionStore {
  private readonly sessions = new Map<string, SessionRecord>();

  create(userId: string, seq: number, now: number): SessionRecord {
    const rec: SessionRecord = { id: randomCredential('', 32), userId, seq, lastSeen: now };
    this.sessions.set(rec.id, rec);
    return rec;
  }

  /** The live session for a cookie value; `revokedBefore(userId)` gives the user's revocation point. */
  lookup(id: string | undefined, now: number, revokedBefore: (userId: string) => number | undefined): SessionRecord | undefined {
    if (!id) return undefined;
    const rec = this.sessions.get(id);
    if (!rec) return undefined;
    const validFrom = revokedBefore(rec.userId);
    if (validFrom === undefined || rec.seq < validFrom || now - rec.lastSeen >= SESSION_IDLE_MS) {
      this.sessions.delete(id);
      return undefined;
    }
    rec.lastSeen = now;
    return rec;
  }

  end(id: string | undefined): void {
    if (id) this.sessions.delete(id);
  }

  clear(): void {
    this.sessions.clear();
  }
}

export function sessionCookie(id: string): string {
  // Lax: the authorize request is a top-level navigation from the app, and the forms post
  // back to this same origin, so the cookie travels where it must and nowhere else.
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
}
