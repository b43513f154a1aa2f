import { CredentialCipher, sealedAt } from '../../auth/credential-cipher';
import { refuseUnboundIfRetired, resealWithCurrentKey } from '../../store/reseal';
import { sealV1, sealV2 } from '../auth/legacy-seal';
import { useTestDatabase } from '../support/test-database';

/** Rotating WEFT_ENCRYPTION_KEY: new key first, re-seal, then the old key can go. */
describe('resealWithCurrentKey', () => {
  const testDb = useTestDatabase('weft_reseal');
  // Each test's secrets are sealed with keys of its own: it starts from an empty database.
  beforeEach(async () => {
    await testDb.db().dropDatabase();
  });

  test('moves every secret to the new key; afterwards the old key is no longer needed', async () => {
    const oldKey = CredentialCipher.generateKey();
    const newKey = CredentialCipher.generateKey();
    const before = new CredentialCipher(oldKey);
    const db = testDb.db();
    const secret = { type: 'API_KEY', apiKey: 'k-123' };
    await db.collection<any>('connections').insertMany([
      { _id: 'c1', environment: 'dev', credentials_encrypted: before.seal(secret, sealedAt.connectionCredentials({ _id: 'c1', environment: 'dev' })) },
      {
        _id: 'c2',
        environment: 'dev',
        credentials_encrypted: before.seal({ ...secret, apiKey: 'k-456' }, sealedAt.connectionCredentials({ _id: 'c2', environment: 'dev' })),
      },
    ]);
    await db.collection<any>('integrations').insertOne({
      _id: 'i1',
      environment: 'dev',
      credentials_encrypted: before.seal(
        { type: 'OAUTH2', client_id: 'a', client_secret: 's' },
        sealedAt.integrationCredentials({ _id: 'i1', environment: 'dev' }),
      ),
      unique_key: 'x',
    });
    await db.collection<any>('environments').insertOne({
      _id: 'dev',
      webhook_signing_key_encrypted: before.seal('whsec_abc', sealedAt.webhookSigningKey('dev')),
      previous_webhook_signing_key_encrypted: null,
    });

    const rotating = new CredentialCipher(`${newKey},${oldKey}`);
    expect(await resealWithCurrentKey(db, rotating)).toBe(4);
    expect(await resealWithCurrentKey(db, rotating)).toBe(0); // nothing left on the old key

    const after = new CredentialCipher(newKey);
    const c1 = await db.collection<any>('connections').findOne({ _id: 'c1' });
    expect(after.open(c1!.credentials_encrypted, sealedAt.connectionCredentials({ _id: 'c1', environment: 'dev' }))).toEqual(secret);
    const env = await db.collection<any>('environments').findOne({ _id: 'dev' });
    expect(after.open(env!.webhook_signing_key_encrypted, sealedAt.webhookSigningKey('dev'))).toBe('whsec_abc');
    expect(() => before.open(c1!.credentials_encrypted, sealedAt.connectionCredentials({ _id: 'c1', environment: 'dev' }))).toThrow(/cannot be decrypted/);
  });

  test('values of an older Weft (v1, not bound to their place) are bound where they are found, and still open', async () => {
    const key = CredentialCipher.generateKey();
    const cipher = new CredentialCipher(key);
    const db = testDb.db();
    const apiKey = { type: 'API_KEY', apiKey: 'legacy-key' };
    const client = { type: 'OAUTH2', client_id: 'legacy', client_secret: 'legacy-secret' };
    await db.collection<any>('connections').insertOne({ _id: 'legacy-c', environment: 'dev', credentials_encrypted: sealV1(key, apiKey) });
    await db
      .collection<any>('integrations')
      .insertOne({ _id: 'legacy-i', environment: 'dev', credentials_encrypted: sealV1(key, client), unique_key: 'legacy' });
    await db.collection<any>('environments').insertOne({
      _id: 'legacy-env',
      webhook_signing_key_encrypted: sealV1(key, 'whsec_new'),
      previous_webhook_signing_key_encrypted: sealV1(key, 'whsec_old'),
    });
    await db.collection<any>('auth_states').insertOne({ _id: 'state-1', environment: 'dev', code_verifier_sealed: sealV1(key, 'verifier-1') });

    // Before the re-seal, the old values are read as they are (an upgrade does not lock anyone out).
    expect(
      cipher.open(
        (await db.collection<any>('connections').findOne({ _id: 'legacy-c' }))!.credentials_encrypted,
        sealedAt.connectionCredentials({ _id: 'legacy-c', environment: 'dev' }),
      ),
    ).toEqual(apiKey);

    expect(await resealWithCurrentKey(db, cipher)).toBe(5);
    expect(await resealWithCurrentKey(db, cipher)).toBe(0);

    const c = await db.collection<any>('connections').findOne({ _id: 'legacy-c' });
    const i = await db.collection<any>('integrations').findOne({ _id: 'legacy-i' });
    const e = await db.collection<any>('environments').findOne({ _id: 'legacy-env' });
    const s = await db.collection<any>('auth_states').findOne({ _id: 'state-1' });
    for (const sealed of [
      c!.credentials_encrypted,
      i!.credentials_encrypted,
      e!.webhook_signing_key_encrypted,
      e!.previous_webhook_signing_key_encrypted,
      s!.code_verifier_sealed,
    ]) {
      expect(sealed).toMatch(/^v3\./);
    }
    expect(cipher.open(c!.credentials_encrypted, sealedAt.connectionCredentials({ _id: 'legacy-c', environment: 'dev' }))).toEqual(apiKey);
    expect(cipher.open(i!.credentials_encrypted, sealedAt.integrationCredentials({ _id: 'legacy-i', environment: 'dev' }))).toEqual(client);
    expect(cipher.open(e!.webhook_signing_key_encrypted, sealedAt.webhookSigningKey('legacy-env'))).toBe('whsec_new');
    expect(cipher.open(e!.previous_webhook_signing_key_encrypted, sealedAt.webhookSigningKey('legacy-env'))).toBe('whsec_old');
    expect(cipher.open(s!.code_verifier_sealed, sealedAt.codeVerifier({ _id: 'state-1', environment: 'dev' }))).toBe('verifier-1');
    // Now bound: the connection's value no longer opens anywhere else.
    expect(() => cipher.open(c!.credentials_encrypted, sealedAt.connectionCredentials({ _id: 'other', environment: 'dev' }))).toThrow(/cannot be decrypted/);
  });

  test('a value that does not open is left alone and named; everything else is still re-sealed', async () => {
    const key = CredentialCipher.generateKey();
    const cipher = new CredentialCipher(key);
    const db = testDb.db();
    const lostKey = CredentialCipher.generateKey(); // a key no longer in WEFT_ENCRYPTION_KEY
    const orphan = sealV1(lostKey, { type: 'API_KEY', apiKey: 'orphan' });
    await db.collection<any>('connections').insertMany([
      { _id: 'orphan', environment: 'dev', credentials_encrypted: orphan },
      { _id: 'fine', environment: 'dev', credentials_encrypted: sealV1(key, { type: 'API_KEY', apiKey: 'fine' }) },
    ]);
    await expect(resealWithCurrentKey(db, cipher)).rejects.toMatchObject({
      code: 'credentials_unreadable',
      message: expect.stringContaining('connections/orphan/credentials_encrypted'),
    });
    expect((await db.collection<any>('connections').findOne({ _id: 'orphan' }))!.credentials_encrypted).toBe(orphan);
    const fine = await db.collection<any>('connections').findOne({ _id: 'fine' });
    expect(cipher.open(fine!.credentials_encrypted, sealedAt.connectionCredentials({ _id: 'fine', environment: 'dev' }))).toEqual({
      type: 'API_KEY',
      apiKey: 'fine',
    });
    expect(fine!.credentials_encrypted).toMatch(/^v3\./);
  });

  test('v2 values are bound to their environment too; after a complete pass v1 is refused, here and in a process that starts later', async () => {
    const key = CredentialCipher.generateKey();
    const cipher = new CredentialCipher(key);
    const db = testDb.db();
    const place = sealedAt.connectionCredentials({ _id: 'c-v2', environment: 'prod' });
    const oldBackup = sealV1(key, { type: 'API_KEY', apiKey: 'from-a-backup' });
    await db.collection<any>('connections').insertMany([
      { _id: 'c-v2', environment: 'prod', credentials_encrypted: sealV2(key, { type: 'API_KEY', apiKey: 'v2' }, place) },
      { _id: 'c-v1', environment: 'prod', credentials_encrypted: sealV1(key, { type: 'API_KEY', apiKey: 'v1' }) },
    ]);
    await refuseUnboundIfRetired(db, cipher); // nothing retired yet: v1 still opens
    expect(cipher.open(oldBackup, place)).toEqual({ type: 'API_KEY', apiKey: 'from-a-backup' });

    expect(await resealWithCurrentKey(db, cipher)).toBe(2);
    const v2 = await db.collection<any>('connections').findOne({ _id: 'c-v2' });
    expect(v2!.credentials_encrypted).toMatch(/^v3\./);
    expect(cipher.open(v2!.credentials_encrypted, place)).toEqual({ type: 'API_KEY', apiKey: 'v2' });
    // Bound to prod: the same document claimed by dev does not open.
    expect(() => cipher.open(v2!.credentials_encrypted, sealedAt.connectionCredentials({ _id: 'c-v2', environment: 'dev' }))).toThrow(/cannot be decrypted/);

    // A v1 value kept from before (a backup) and planted now is refused by this process...
    await db.collection<any>('connections').updateOne({ _id: 'c-v2' }, { $set: { credentials_encrypted: oldBackup } });
    expect(() => cipher.open(oldBackup, place)).toThrow(/cannot be decrypted/);
    // ...by a process that starts later...
    const later = new CredentialCipher(key);
    await refuseUnboundIfRetired(db, later);
    expect(() => later.open(oldBackup, place)).toThrow(/cannot be decrypted/);
    // ...and the re-seal does not bind it to the place it was planted in.
    await expect(resealWithCurrentKey(db, later)).rejects.toMatchObject({ code: 'credentials_unreadable' });
    expect((await db.collection<any>('connections').findOne({ _id: 'c-v2' }))!.credentials_encrypted).toBe(oldBackup);
  });
});
