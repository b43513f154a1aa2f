import type { Db } from 'mongodb';
import type { CredentialCipher } from '../auth/credential-cipher';

/** Every field Weft stores sealed with the credential cipher, by collection. */
const SEALED_FIELDS: Record<string, string[]> = {
  connections: ['credentials_encrypted'],
  integrations: ['credentials_encrypted'],
  environments: ['webhook_signing_key_encrypted', 'previous_webhook_signing_key_encrypted'],
};

/**
 * Key rotation, second half: after WEFT_ENCRYPTION_KEY gained a new first key (the old one
 * still listed after it), re-seal every secret sealed with an older key, so the old key
 * can then be removed. Each value is swapped only if unchanged since it was read (a token
 * refreshed meanwhile is already sealed with the new key). Safe to run repeatedly and
 * from several processes; returns how many values it re-sealed.
 */
export async function resealWithCurrentKey(db: Db, cipher: CredentialCipher): Promise<number> {
  let resealed = 0;
  for (const [name, fields] of Object.entries(SEALED_FIELDS)) {
    const col = db.collection<Record<string, unknown>>(name);
    const projection = Object.fromEntries(fields.map((f) => [f, 1]));
    for await (const doc of col.find({}, { projection })) {
      for (const field of fields) {
        const sealed = doc[field];
        if (typeof sealed !== 'string' || !cipher.needsRotation(sealed)) continue;
        const res = await col.updateOne({ _id: doc._id, [field]: sealed }, { $set: { [field]: cipher.seal(cipher.open(sealed)) } });
        resealed += res.modifiedCount;
      }
    }
  }
  return resealed;
}
