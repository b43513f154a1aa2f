import { CredentialCipher } from '../../auth/credential-cipher';
import { resealWithCurrentKey } from '../../store/reseal';
import { useTestDatabase } from '../support/test-database';

/** Rotating WEFT_ENCRYPTION_KEY: new key first, re-seal, then the old key can go. */
describe('resealWithCurrentKey', () => {
  const testDb = useTestDatabase('weft_reseal');


  test('moves every secret to the new key; afterwards the old key is no longer needed', async () => {
    const oldKey = CredentialCipher.generateKey();
    const newKey = CredentialCipher.generateKey();
    const before = new CredentialCipher(oldKey);
    const db = testDb.db();
    const secret = { type: 'API_KEY', apiKey: 'k-123' };
    await db.collection<any>('connections').insertMany([
      { _id: 'c1', credentials_encrypted: before.seal(secret) },
      { _id: 'c2', credentials_encrypted: before.seal({ ...secret, apiKey: 'k-456' }) },
    ]);
    await db.collection<any>('integrations').insertOne({ _id: 'i1', credentials_encrypted: before.seal({ type: 'OAUTH2', client_id: 'a', client_secret: 's' }), unique_key: 'x' });
    await db.collection<any>('environments').insertOne({ _id: 'dev', webhook_signing_key_encrypted: before.seal('whsec_abc'), previous_webhook_signing_key_encrypted: null });

    const rotating = new CredentialCipher(`${newKey},${oldKey}`);
    expect(await resealWithCurrentKey(db, rotating)).toBe(4);
    expect(await resealWithCurrentKey(db, rotating)).toBe(0); // nothing left on the old key

    const after = new CredentialCipher(newKey);
    const c1 = await db.collection<any>('connections').findOne({ _id: 'c1' });
    expect(after.open(c1!.credentials_encrypted)).toEqual(secret);
    const env = await db.collection<any>('environments').findOne({ _id: 'dev' });
    expect(after.open(env!.webhook_signing_key_encrypted)).toBe('whsec_abc');
    expect(() => before.open(c1!.credentials_encrypted)).toThrow(/cannot be decrypted/);
  });
});
