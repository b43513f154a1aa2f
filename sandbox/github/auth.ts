/**
 * GitHub App authentication: the App's RSA key pair, App JWT verification (RS256, GitHub's
 * claim rules and error strings) and installation access tokens.
 */
import crypto from 'node:crypto';
import { Rng } from '../shared/prng';

const DOCS_REST = 'https://docs.github.com/rest';

export interface AppKeys {
  /** PKCS#1 (`-----BEGIN RSA PRIVATE KEY-----`), the form GitHub hands out. */
  privateKeyPem: string;
  publicKey: crypto.KeyObject;
}

/** Uses the given PEM (PKCS#1 or PKCS#8, RSA) or generates an RSA-2048 pair. */
export function loadOrCreateAppKeys(privateKeyPem?: string): AppKeys {
  let privateKey: crypto.KeyObject;
  if (privateKeyPem !== undefined) {
    try {
      privateKey = crypto.createPrivateKey(privateKeyPem);
    } catch (err) {
      throw new Error(`privateKeyPem is not a readable private key: ${(err as Error).message}`);
    }
    if (privateKey.asymmetricKeyType !== 'rsa') throw new Error('privateKeyPem must be an RSA key (GitHub Apps sign with RS256)');
  } else {
    privateKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  }
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    publicKey: crypto.createPublicKey(privateKey),
  };
}

export interface AuthError {
  status: number;
  message: string;
  documentationUrl: string;
}

function fail(status: number, message: string): AuthError {
  return { status, message, documentationUrl: DOCS_REST };
}

export const JWT_NOT_DECODED = 'A JSON web token could not be decoded';
const JWT_EXP_TOO_FAR = "'Expiration time' claim ('exp') is too far in the future";
const JWT_EXP_PAST = "'Expiration time' claim ('exp') is in the past";
const JWT_EXP_NOT_NUMERIC = "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires";
const JWT_IAT_INVALID = "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued";
const INTEGRATION_NOT_FOUND = 'Integration not found';

/** GitHub accepts JWTs that expire at most this far ahead of its own clock. */
const MAX_JWT_LIFETIME_S = 600;

/** Three base64url segments: what GitHub takes for a JWT (anything else is a token). */
export function looksLikeJwt(credential: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(credential);
}

function decodeSegment(segment: string): unknown {
  const text = Buffer.from(segment, 'base64url').toString('utf8');
  return JSON.parse(text);
}

/**
 * Verifies an App JWT the way GitHub does: decode, find the App by `iss` (App id as number
 * or string, or client id), check the RS256 signature, then `iat` and `exp` against `nowMs`.
 * Returns null when the JWT is good, else the error GitHub answers with.
 */
export function verifyAppJwt(jwt: string, app: { id: number; clientId: string }, publicKey: crypto.KeyObject, nowMs: number): AuthError | null {
  if (!looksLikeJwt(jwt)) return fail(401, JWT_NOT_DECODED);
  const [h, p, s] = jwt.split('.');
  let header: unknown;
  let payload: unknown;
  try {
    header = decodeSegment(h);
    payload = decodeSegment(p);
  } catch {
    return fail(401, JWT_NOT_DECODED);
  }
  if (!isObject(header) || !isObject(payload)) return fail(401, JWT_NOT_DECODED);

  const iss = payload.iss;
  const issuerMatches = (typeof iss === 'number' && iss === app.id) || (typeof iss === 'string' && (iss === String(app.id) || iss === app.clientId));
  if (!issuerMatches) return fail(404, INTEGRATION_NOT_FOUND);

  // RS256 only: an `alg: none` or HMAC token must never pass.
  if (header.alg !== 'RS256') return fail(401, JWT_NOT_DECODED);
  const signature = Buffer.from(s, 'base64url');
  let valid = false;
  try {
    valid = crypto.verify('sha256', Buffer.from(`${h}.${p}`, 'ascii'), publicKey, signature);
  } catch {
    valid = false;
  }
  if (!valid) return fail(401, JWT_NOT_DECODED);

  const nowS = Math.floor(nowMs / 1000);
  const iat = payload.iat;
  // iat must be an integer, and not in the future (GitHub answers the same message for clock skew).
  if (typeof iat !== 'number' || !Number.isInteger(iat) || iat > nowS) return fail(401, JWT_IAT_INVALID);
  const exp = payload.exp;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return fail(401, JWT_EXP_NOT_NUMERIC);
  if (exp > nowS + MAX_JWT_LIFETIME_S) return fail(401, JWT_EXP_TOO_FAR);
  if (exp <= nowS) return fail(401, JWT_EXP_PAST);
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------
// Installation access tokens
// ---------------------------------------------------------------------------------------

export type PermissionLevel = 'read' | 'write' | 'admin';

export interface TokenRec {
  installationId: number;
  /** null = every repository of the installation ("all"). */
  repositoryIds: ReadonlySet<number> | null;
  permissions: Record<string, PermissionLevel>;
  expiresAtMs: number;
}

export class TokenStore {
  private readonly tokens = new Map<string, TokenRec>();
  private counter = 0;

  constructor(private readonly seedK: number) {}

  /** Issues `ghs_` + 36 alphanumerics; expiry is whole seconds, as `expires_at` shows it. */
  issue(rec: Omit<TokenRec, 'expiresAtMs'>, nowMs: number, ttlMs: number): { token: string; rec: TokenRec } {
    let token: string;
    do {
      token = 'ghs_' + Rng.from(this.seedK, 'installation-token', this.counter++).alnum(36);
    } while (this.tokens.has(token));
    const full: TokenRec = { ...rec, expiresAtMs: Math.floor((nowMs + ttlMs) / 1000) * 1000 };
    this.tokens.set(token, full);
    return { token, rec: full };
  }

  /** The live token, or undefined when unknown or expired (both are "Bad credentials"). */
  lookup(token: string, nowMs: number): TokenRec | undefined {
    const rec = this.tokens.get(token);
    if (!rec || nowMs >= rec.expiresAtMs) return undefined;
    return rec;
  }

  isIssued(token: string): boolean {
    return this.tokens.has(token);
  }

  expireAll(): void {
    for (const rec of this.tokens.values()) rec.expiresAtMs = Number.NEGATIVE_INFINITY;
  }

  get size(): number {
    return this.tokens.size;
  }
}
