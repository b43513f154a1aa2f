/**
 * ID tokens: RS256 JWTs signed with a key made on first use (keys are not data, so they
 * need not be reproducible), published at `/{tenant}/discovery/v2.0/keys` so a client that
 * validates ID tokens can. Claims follow the v2.0 ID token: aud, iss, iat, nbf, exp, name,
 * oid, preferred_username, sub (pairwise per app), tid, ver, plus nonce / email when asked.
 */
import crypto from 'node:crypto';
import { SignJWT } from 'jose';

/** Microsoft ID tokens live one hour. */
const ID_TOKEN_TTL_S = 3600;

export interface IdTokenClaimsInput {
  issuer: string;
  clientId: string;
  tenantId: string;
  user: { id: string; username: string; displayName: string; email: string };
  nonce: string | undefined;
  includeEmail: boolean;
  nowMs: number;
}

export class IdTokenSigner {
  private key: { privateKey: crypto.KeyObject; publicJwk: crypto.JsonWebKey; kid: string } | null = null;

  private ensureKey() {
    if (!this.key) {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const publicJwk = publicKey.export({ format: 'jwk' });
      const kid = crypto.createHash('sha256').update(String(publicJwk.n)).digest('base64url').slice(0, 27);
      this.key = { privateKey, publicJwk, kid };
    }
    return this.key;
  }

  async sign(c: IdTokenClaimsInput): Promise<string> {
    const key = this.ensureKey();
    const iat = Math.floor(c.nowMs / 1000);
    const claims: Record<string, unknown> = {
      aud: c.clientId,
      iss: c.issuer,
      iat,
      nbf: iat,
      exp: iat + ID_TOKEN_TTL_S,
      name: c.user.displayName,
      oid: c.user.id,
      preferred_username: c.user.username,
      // Pairwise: the same user has a different `sub` in every app.
      sub: crypto.createHash('sha256').update(`${c.user.id}|${c.clientId}`).digest('base64url').slice(0, 43),
      tid: c.tenantId,
      ver: '2.0',
    };
    if (c.nonce !== undefined) claims.nonce = c.nonce;
    if (c.includeEmail) claims.email = c.user.email;
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid }).sign(key.privateKey);
  }

  /** The JWKS document. */
  jwks(issuer: string): { keys: unknown[] } {
    const key = this.ensureKey();
    return { keys: [{ kty: 'RSA', use: 'sig', kid: key.kid, n: key.publicJwk.n, e: key.publicJwk.e, issuer }] };
  }
}
