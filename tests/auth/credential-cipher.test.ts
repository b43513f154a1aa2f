import { CredentialCipher, sealedAt } from '../../auth/credential-cipher';
import { WeftError } from '../../common/errors';
import { sealV1 } from './legacy-seal';

/** AES-256-GCM at rest: the full tag, and each value bound to the place it is stored in. */
describe('CredentialCipher', () => {
  const key = CredentialCipher.generateKey();
  const cipher = new CredentialCipher(key);
  const secret = { type: 'API_KEY', apiKey: 'k-123' };
  const atA = sealedAt.connectionCredentials('conn-a');
  const atB = sealedAt.connectionCredentials('conn-b');

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
    expect(sealed).toMatch(/^v2\./);
    expect(cipher.open(sealed, atA)).toEqual(secret);
    expect(cipher.needsReseal(sealed)).toBe(false);
  });

  test('a value copied to another place does not open there', () => {
    const sealed = cipher.seal(secret, atA);
    for (const elsewhere of [atB, sealedAt.integrationCredentials('conn-a'), sealedAt.webhookSigningKey('conn-a'), sealedAt.codeVerifier('conn-a')]) {
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
      () => cipher.open(`v3${sealed.slice(2)}`, atA),
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
});
