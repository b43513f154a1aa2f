import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { codecAuthenticator, codecAuthSettings } from '../../api/middleware/codec-auth';
import type { WeftError } from '../../common/errors';

/** Who may call the codec endpoint: configured bearer tokens, and the Temporal UI's sign-in JWTs verified against a JWKS file. */
describe('codec endpoint authentication', () => {
  const TOKENS = ['a'.repeat(40), 'b'.repeat(40)];
  const ISSUER = 'https://idp.example.com/';
  const AUDIENCE = 'temporal-ui';
  let dir: string;
  let jwksFile: string;
  let signer: KeyLike;
  let stranger: KeyLike;

  const sign = (claims: { iss?: string; aud?: string; exp?: string }, key = signer, kid = 'k1', alg = 'ES256') => {
    const jwt = new SignJWT({ sub: 'ops@example.com' }).setProtectedHeader({ alg, kid }).setIssuedAt();
    if (claims.iss) jwt.setIssuer(claims.iss);
    if (claims.aud) jwt.setAudience(claims.aud);
    jwt.setExpirationTime(claims.exp ?? '5m');
    return jwt.sign(key);
  };
  const refusal = (fn: () => unknown): WeftError => {
    try {
      fn();
    } catch (err) {
      return err as WeftError;
    }
    throw new Error('accepted');
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'weft-codec-auth-'));
    jwksFile = path.join(dir, 'jwks.json');
    const pair = await generateKeyPair('ES256');
    signer = pair.privateKey as KeyLike;
    stranger = (await generateKeyPair('ES256')).privateKey as KeyLike;
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('a configured token is accepted and named by its position; anything else is refused', async () => {
    const auth = codecAuthenticator({ tokens: TOKENS });
    expect(await auth(`Bearer ${TOKENS[1]}`)).toBe('codec token #2');
    expect(await auth(`bearer ${TOKENS[0]}`)).toBe('codec token #1');
    for (const header of [undefined, '', TOKENS[0], `Bearer ${TOKENS[0].slice(1)}`, `Bearer ${TOKENS[0]}x`, `Basic ${TOKENS[0]}`, 'Bearer ']) {
      expect({ header, caller: await auth(header) }).toEqual({ header, caller: null });
    }
  });

  test('a JWT signed by a key of the JWKS file, with the issuer and audience, unexpired, is accepted and named by its subject', async () => {
    const auth = codecAuthenticator({ tokens: TOKENS, jwt: { jwksFile, issuer: ISSUER, audience: AUDIENCE } });
    expect(await auth(`Bearer ${await sign({ iss: ISSUER, aud: AUDIENCE })}`)).toBe('jwt ops@example.com');
    const refused = {
      'another audience': await sign({ iss: ISSUER, aud: 'another-app' }),
      'another issuer': await sign({ iss: 'https://evil.example/', aud: AUDIENCE }),
      expired: await sign({ iss: ISSUER, aud: AUDIENCE, exp: '-1m' }),
      'a key not in the set': await sign({ iss: ISSUER, aud: AUDIENCE }, stranger),
      'an unknown key id': await sign({ iss: ISSUER, aud: AUDIENCE }, signer, 'k2'),
      'a shared-secret algorithm': await new SignJWT({ sub: 'x' })
        .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setExpirationTime('5m')
        .sign(new TextEncoder().encode('s'.repeat(32))),
    };
    for (const [why, jwt] of Object.entries(refused)) expect({ why, caller: await auth(`Bearer ${jwt}`) }).toEqual({ why, caller: null });
    // Without JWT settings a valid JWT is just an unknown token.
    expect(await codecAuthenticator({ tokens: TOKENS })(`Bearer ${await sign({ iss: ISSUER, aud: AUDIENCE })}`)).toBeNull();
  });

  test('configuration: no way to authenticate, half the JWT settings, an unreadable JWKS file each stop the start with a code', () => {
    expect(refusal(() => codecAuthenticator({ tokens: [] })).code).toBe('codec_endpoint_without_auth');
    const none = {
      WEFT_CODEC_ENDPOINT_TOKENS: TOKENS,
      WEFT_CODEC_ENDPOINT_JWKS_FILE: undefined,
      WEFT_CODEC_ENDPOINT_JWT_ISSUER: undefined,
      WEFT_CODEC_ENDPOINT_JWT_AUDIENCE: undefined,
    };
    expect(codecAuthSettings(none)).toEqual({ tokens: TOKENS });
    expect(refusal(() => codecAuthSettings({ ...none, WEFT_CODEC_ENDPOINT_JWKS_FILE: jwksFile, WEFT_CODEC_ENDPOINT_JWT_ISSUER: ISSUER })).code).toBe(
      'codec_endpoint_jwt_incomplete',
    );
    const missing = path.join(dir, 'missing.json');
    expect(refusal(() => codecAuthenticator({ tokens: [], jwt: { jwksFile: missing, issuer: ISSUER, audience: AUDIENCE } })).code).toBe(
      'codec_endpoint_jwks_unreadable',
    );
  });
});
