import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JSONWebKeySet } from 'jose';
import type { Config } from '../../common/config';
import { WeftError } from '../../common/errors';

/** How the codec endpoint knows its callers (WEFT_CODEC_ENDPOINT_TOKENS, WEFT_CODEC_ENDPOINT_JWKS_FILE and its JWT settings). */
export interface CodecAuthSettings {
  /** Static bearer tokens (the `temporal` CLI's `--codec-auth`). */
  tokens: readonly string[];
  /** The Temporal UI's sign-in access tokens, verified as JWTs against the identity provider's keys. */
  jwt?: { jwksFile: string; issuer: string; audience: string };
}

/** The settings from the configuration: the JWT ones all three or none, so no token is taken for an audience or issuer left open. */
export function codecAuthSettings(
  config: Pick<Config, 'WEFT_CODEC_ENDPOINT_TOKENS' | 'WEFT_CODEC_ENDPOINT_JWKS_FILE' | 'WEFT_CODEC_ENDPOINT_JWT_ISSUER' | 'WEFT_CODEC_ENDPOINT_JWT_AUDIENCE'>,
): CodecAuthSettings {
  const { WEFT_CODEC_ENDPOINT_JWKS_FILE: jwksFile, WEFT_CODEC_ENDPOINT_JWT_ISSUER: issuer, WEFT_CODEC_ENDPOINT_JWT_AUDIENCE: audience } = config;
  if (!jwksFile && !issuer && !audience) return { tokens: config.WEFT_CODEC_ENDPOINT_TOKENS };
  if (!jwksFile || !issuer || !audience) {
    throw new WeftError(
      'codec_endpoint_jwt_incomplete',
      'WEFT_CODEC_ENDPOINT_JWKS_FILE, WEFT_CODEC_ENDPOINT_JWT_ISSUER and WEFT_CODEC_ENDPOINT_JWT_AUDIENCE go together: set all three (or none).',
    );
  }
  return { tokens: config.WEFT_CODEC_ENDPOINT_TOKENS, jwt: { jwksFile, issuer, audience } };
}

/** Who called, for the audit line: a token's position in the list, or a JWT's subject. */
export type CodecCaller = string;

/** Signature algorithms of identity providers' keys; symmetric ones (a shared secret in a key file) are not taken. */
const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** An unknown key id re-reads the JWKS file (the provider rotated its keys) at most this often. */
const JWKS_REREAD_MS = 60_000;

/**
 * Checks `Authorization: Bearer <credential>` for the codec endpoint: one of the configured
 * tokens (each compared in constant time over equal-length digests, so timing tells nothing of
 * how much matched or which), or, when configured, a JWT signed by a key of the JWKS file with
 * the configured issuer and audience, unexpired. Answers the caller, or null.
 *
 * The JWKS is read from a file, not fetched: every outbound call of Weft goes through its
 * egress policy, and the keys of an identity provider change rarely (a file a deployment
 * refreshes; it is read again when a token names a key it lacks).
 */
export function codecAuthenticator(settings: CodecAuthSettings): (authorization: string | undefined) => Promise<CodecCaller | null> {
  if (settings.tokens.length === 0 && !settings.jwt) {
    throw new WeftError(
      'codec_endpoint_without_auth',
      'WEFT_CODEC_ENDPOINT_ENABLED is true but neither WEFT_CODEC_ENDPOINT_TOKENS nor WEFT_CODEC_ENDPOINT_JWKS_FILE is set: the endpoint would decrypt for anyone.',
    );
  }
  const tokenDigests = settings.tokens.map(digest);
  const jwks = settings.jwt ? jwksFromFile(settings.jwt.jwksFile) : null;

  return async (authorization) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    const presented = match?.[1] ?? '';
    const position = tokenPosition(presented, tokenDigests);
    if (match && position !== null) return `codec token #${position}`;
    if (!match || !jwks || !settings.jwt || presented.split('.').length !== 3) return null;
    try {
      const { payload } = await jwks.verify(presented, settings.jwt);
      return `jwt ${typeof payload.sub === 'string' ? payload.sub.slice(0, 200) : '(no subject)'}`;
    } catch {
      return null;
    }
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** The 1-based position of `presented` among the tokens, comparing every one. */
function tokenPosition(presented: string, tokenDigests: readonly Buffer[]): number | null {
  const mine = digest(presented);
  let position: number | null = null;
  tokenDigests.forEach((known, i) => {
    if (timingSafeEqual(known, mine) && position === null) position = i + 1;
  });
  return position;
}

/** The JWKS file's keys, read now (a missing or malformed file stops the start) and again when a token names a key they lack. */
function jwksFromFile(file: string) {
  let keys = read();
  let readAt = Date.now();

  function read(): ReturnType<typeof createLocalJWKSet> {
    try {
      return createLocalJWKSet(JSON.parse(readFileSync(file, 'utf8')) as JSONWebKeySet);
    } catch (err) {
      throw new WeftError(
        'codec_endpoint_jwks_unreadable',
        `WEFT_CODEC_ENDPOINT_JWKS_FILE (${file}) is not a readable JSON Web Key Set ({"keys":[…]}): ${(err as Error).message.slice(0, 200)}`,
      );
    }
  }

  return {
    async verify(token: string, expected: { issuer: string; audience: string }) {
      const options = { issuer: expected.issuer, audience: expected.audience, algorithms: JWT_ALGORITHMS };
      try {
        return await jwtVerify(token, keys, options);
      } catch (err) {
        if (!(err instanceof joseErrors.JWKSNoMatchingKey) || Date.now() - readAt < JWKS_REREAD_MS) throw err;
        keys = read();
        readAt = Date.now();
        return jwtVerify(token, keys, options);
      }
    },
  };
}
