import { CredentialCipher, sealedAt } from '../../auth/credential-cipher';
import { WeftError } from '../../common/errors';
import { sealV1, sealV2 } from './legacy-seal';

/** AES-256-GCM at rest: the full tag, and each value bound to the place it is stored in. */
describe('CredentialCipher', () => {
  const key = CredentialCipher.generateKey();
  const cipher = new CredentialCipher(key);
  const secret = { type: 'API_KEY', apiKey: 'k-123' };
  const atA = sealedAt.connectionCredentials({ _id: 'conn-a', environment: 'dev' });
  const atB = sealedAt.connectionCredentials({ _id: 'conn-b', environment: 'dev' });

  function withTag(sealed: string, change: (tag: Buffer) => Buffer): string {
    const parts = sealed.split('.');
    parts[3] = change(Buffer.from(parts[3], 'base64url')).toString('base64url');
    return parts.join('.');
  }

  function refusal(fn: () => unknown): WeftError {
    try {
      fn();
    } catch (err) {
      return err as WeftError;
    }
    throw new Error('it opened');
  }

  test('opens a value where it was sealed', () => {
    const sealed = cipher.seal(secret, atA);
    expect(sealed).toMatch(/^v3\./);
    expect(cipher.open(sealed, atA)).toEqual(secret);
    expect(cipher.needsReseal(sealed)).toBe(false);
  });

  test('a value copied to another place does not open there', () => {
    const sealed = cipher.seal(secret, atA);
    for (const elsewhere of [
      atB,
      sealedAt.integrationCredentials({ _id: 'conn-a', environment: 'dev' }),
      sealedAt.webhookSigningKey('conn-a'),
      sealedAt.codeVerifier({ _id: 'conn-a', environment: 'dev' }),
    ]) {
      const err = refusal(() => cipher.open(sealed, elsewhere));
      expect(err).toBeInstanceOf(WeftError);
      expect(err.code).toBe('credentials_unreadable');
      expect(err.message).not.toContain('k-123');
    }
  });

  test('a shortened tag is refused (GCM would otherwise check only the bytes given)', () => {
    const sealed = cipher.seal(secret, atA);
    for (const length of [15, 12, 8, 4, 0]) {
      expect(
        refusal(() =>
          cipher.open(
            withTag(sealed, (t) => t.subarray(0, length)),
            atA,
          ),
        ).code,
      ).toBe('credentials_unreadable');
    }
    // The same holds for values in the old format.
    const legacy = sealV1(key, secret);
    expect(cipher.open(legacy, atA)).toEqual(secret);
    expect(
      refusal(() =>
        cipher.open(
          withTag(legacy, (t) => t.subarray(0, 4)),
          atA,
        ),
      ).code,
    ).toBe('credentials_unreadable');
  });

  test('a damaged value, a wrong key or another format is credentials_unreadable, never a raw crypto error', () => {
    const sealed = cipher.seal(secret, atA);
    const flipped = withTag(sealed, (t) => Buffer.from(t.map((b, i) => (i === 0 ? b ^ 1 : b))));
    const other = new CredentialCipher(CredentialCipher.generateKey());
    for (const attempt of [
      () => cipher.open(flipped, atA),
      () => other.open(sealed, atA),
      () => cipher.open(`v4${sealed.slice(2)}`, atA),
      () => cipher.open(`v2${sealed.slice(2)}`, atA),
      () => cipher.open(`${sealed}.x`, atA),
      () => cipher.open('', atA),
    ]) {
      expect(refusal(attempt)).toMatchObject({ code: 'credentials_unreadable' });
    }
  });

  test('v1 values (no binding) still open until re-sealed; re-sealing is due for them and for an older key', () => {
    const legacy = sealV1(key, secret);
    expect(cipher.open(legacy, atB)).toEqual(secret);
    expect(cipher.needsReseal(legacy)).toBe(true);

    const newKey = CredentialCipher.generateKey();
    const rotating = new CredentialCipher(`${newKey},${key}`);
    const sealedWithOld = cipher.seal(secret, atA);
    expect(rotating.open(sealedWithOld, atA)).toEqual(secret);
    expect(rotating.needsReseal(sealedWithOld)).toBe(true);
    expect(rotating.needsReseal(rotating.seal(secret, atA))).toBe(false);
  });

  test('the environment is part of the binding: a document moved to another environment no longer opens its value', () => {
    const sealed = cipher.seal(secret, atA);
    const moved = sealedAt.connectionCredentials({ _id: 'conn-a', environment: 'prod' });
    expect(refusal(() => cipher.open(sealed, moved)).code).toBe('credentials_unreadable');
    // The webhook signing key of one environment does not open as another's either.
    const signingKey = cipher.seal('whsec_1', sealedAt.webhookSigningKey('dev'));
    expect(refusal(() => cipher.open(signingKey, sealedAt.webhookSigningKey('prod'))).code).toBe('credentials_unreadable');
  });

  test('v2 values (bound to the field, written before the environment was) open in their field until re-sealed', () => {
    const v2 = sealV2(key, secret, atA);
    expect(cipher.open(v2, atA)).toEqual(secret);
    expect(cipher.needsReseal(v2)).toBe(true);
    expect(refusal(() => cipher.open(v2, atB)).code).toBe('credentials_unreadable');
  });

  test('once the re-seal has retired them, v1 values are refused; v2 and v3 still open', () => {
    const retiring = new CredentialCipher(key);
    const legacy = sealV1(key, secret);
    const v2 = sealV2(key, secret, atA);
    const v3 = retiring.seal(secret, atA);
    expect(retiring.open(legacy, atA)).toEqual(secret);
    retiring.refuseUnbound();
    const err = refusal(() => retiring.open(legacy, atA));
    expect(err.code).toBe('credentials_unreadable');
    expect(err.message).not.toContain('k-123');
    expect(retiring.open(v2, atA)).toEqual(secret);
    expect(retiring.open(v3, atA)).toEqual(secret);
  });
});
