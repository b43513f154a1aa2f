/**
 * Authorization codes, refresh tokens and access tokens.
 *
 * Credentials come from crypto.randomBytes, not the seeded generator: nothing asserts on
 * their value, and two simulators (or two runs) feeding one Graph simulator must never
 * mint the same token. Records are never deleted, so a replayed or expired credential can
 * be told apart from a garbage one.
 */
import crypto from 'node:crypto';
import type { ParsedScopes, Resource } from './scopes';

/** What other simulators need to accept (or stop accepting) an access token. */
export interface AccessTokenEvent {
  token: string;
  resource: Resource;
  /** The SharePoint host the token is for (resource `sharepoint` only). */
  host?: string;
  /** Granted permission names (no OIDC scopes), e.g. `['Files.Read.All', 'User.Read']`. */
  scopes: string[];
  /** The user's object id (`oid`). */
  userId: string;
  clientId: string;
  /** Epoch ms (simulator clock). */
  expiresAt: number;
}

export function randomCredential(prefix: string, bytes: number): string {
  return prefix + crypto.randomBytes(bytes).toString('base64url');
}

// ---------------------------------------------------------------------------------------
// Authorization codes
// ---------------------------------------------------------------------------------------

export interface CodeRecord {
  userId: string;
  clientId: string;
  redirectUri: string;
  /** The authorize request's scopes. */
  scopes: ParsedScopes;
  challenge: { value: string; method: 'S256' | 'plain' } | null;
  nonce: string | undefined;
  expiresAt: number;
  redeemed: boolean;
}

export class CodeStore {
  private readonly codes = new Map<string, CodeRecord>();

  issue(rec: CodeRecord): string {
    // Real codes are long and start with a version marker; clients must treat them as opaque.
    const code = randomCredential('1.A', 96);
    this.codes.set(code, rec);
    return code;
  }

  get(code: string): CodeRecord | undefined {
    return this.codes.get(code);
  }

  /** Every outstanding code lapses now (AADSTS70008 when redeemed). */
  expireAll(now: number): void {
    for (const rec of this.codes.values()) if (rec.expiresAt > now) rec.expiresAt = now;
  }
}

// ---------------------------------------------------------------------------------------
// Refresh tokens
// ---------------------------------------------------------------------------------------

export interface RefreshRecord {
  userId: string;
  clientId: string;
  /** Issue sequence number: a user's revocation invalidates lower ones (AADSTS50173). */
  seq: number;
  issuedAt: number;
  lastUsedAt: number;
  /** Set by expireRefreshTokens (AADSTS70008). */
  expired: boolean;
  /** The scopes of the request that first led to it (used when a refresh names none). */
  origin: ParsedScopes;
}

export class RefreshTokenStore {
  private readonly tokens = new Map<string, RefreshRecord>();

  issue(rec: Omit<RefreshRecord, 'lastUsedAt' | 'expired'>): string {
    const token = randomCredential('1.AR', 120);
    this.tokens.set(token, { ...rec, lastUsedAt: rec.issuedAt, expired: false });
    return token;
  }

  get(token: string): RefreshRecord | undefined {
    return this.tokens.get(token);
  }

  expireAll(): number {
    let n = 0;
    for (const rec of this.tokens.values()) {
      if (!rec.expired) n++;
      rec.expired = true;
    }
    return n;
  }

  get size(): number {
    return this.tokens.size;
  }
}

// ---------------------------------------------------------------------------------------
// Access tokens
// ---------------------------------------------------------------------------------------

interface AccessRecord extends AccessTokenEvent {
  issuedAt: number;
  revoked: boolean;
  /** Its end (lapse or revocation) has been reported to the listeners. */
  announced: boolean;
}

export interface AccessTokenInfo extends AccessTokenEvent {
  issuedAt: number;
  /** Live: not revoked and not past expiresAt. */
  valid: boolean;
}

export class AccessTokenStore {
  private readonly tokens = new Map<string, AccessRecord>();
  /** Tokens whose end has not been announced yet (the sweep only walks these). */
  private readonly live = new Set<string>();

  issue(event: Omit<AccessTokenEvent, 'token'>, issuedAt: number): AccessTokenEvent {
    // Opaque to clients: deliberately not a JWT, so nobody starts decoding it.
    const token = randomCredential('EwB', 96);
    const rec: AccessRecord = { ...event, token, issuedAt, revoked: false, announced: false };
    this.tokens.set(token, rec);
    this.live.add(token);
    return publicEvent(rec);
  }

  isValid(token: string, now: number): boolean {
    const rec = this.tokens.get(token);
    return rec !== undefined && !rec.revoked && now < rec.expiresAt;
  }

  info(token: string, now: number): AccessTokenInfo | undefined {
    const rec = this.tokens.get(token);
    if (!rec) return undefined;
    return { ...publicEvent(rec), issuedAt: rec.issuedAt, valid: !rec.revoked && now < rec.expiresAt };
  }

  /** Revokes one token; returns its event when this ended it (for the listeners). */
  revoke(token: string): AccessTokenEvent | undefined {
    const rec = this.tokens.get(token);
    if (!rec || rec.revoked) return undefined;
    rec.revoked = true;
    return this.announce(rec);
  }

  /** Every live token lapses now; returns the events to announce. */
  expireAll(now: number): AccessTokenEvent[] {
    const out: AccessTokenEvent[] = [];
    for (const token of [...this.live]) {
      const rec = this.tokens.get(token)!;
      if (rec.expiresAt > now) rec.expiresAt = now;
      const e = this.announce(rec);
      if (e) out.push(e);
    }
    return out;
  }

  /** Tokens past their expiry whose end was not announced yet. */
  sweep(now: number): AccessTokenEvent[] {
    const out: AccessTokenEvent[] = [];
    for (const token of [...this.live]) {
      const rec = this.tokens.get(token)!;
      if (now >= rec.expiresAt) {
        const e = this.announce(rec);
        if (e) out.push(e);
      }
    }
    return out;
  }

  /** Earliest expiry among unannounced tokens, or null. */
  nextExpiry(): number | null {
    let min: number | null = null;
    for (const token of this.live) {
      const at = this.tokens.get(token)!.expiresAt;
      if (min === null || at < min) min = at;
    }
    return min;
  }

  private announce(rec: AccessRecord): AccessTokenEvent | undefined {
    if (rec.announced) return undefined;
    rec.announced = true;
    this.live.delete(rec.token);
    return publicEvent(rec);
  }
}

function publicEvent(rec: AccessTokenEvent): AccessTokenEvent {
  const e: AccessTokenEvent = {
    token: rec.token,
    resource: rec.resource,
    scopes: [...rec.scopes],
    userId: rec.userId,
    clientId: rec.clientId,
    expiresAt: rec.expiresAt,
  };
  if (rec.host !== undefined) e.host = rec.host;
  return e;
}
