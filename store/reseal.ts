import type { Db } from 'mongodb';
import { sealedAt, type CredentialCipher } from '../auth/credential-cipher';
import { WeftError } from '../common/errors';

/** Every field Weft stores sealed with the credential cipher, by collection, with the place each is bound to. */
const SEALED_FIELDS: Record<string, Record<string, (docId: string) => string>> = {
  connections: { credentials_encrypted: sealedAt.connectionCredentials },
  integrations: { credentials_encrypted: sealedAt.integrationCredentials },
  environments: {
    webhook_signing_key_encrypted: sealedAt.webhookSigningKey,
    previous_webhook_signing_key_encrypted: sealedAt.webhookSigningKey,
  },
  // Short-lived, but a flow in progress must survive the old key being removed.
  auth_states: { code_verifier_sealed: sealedAt.codeVerifier },
};

/**
 * Brings every sealed value to the current format and key: after WEFT_ENCRYPTION_KEY gained
 * a new first key (the old one still listed after it), and for values written before
 * sealed values were bound to their place (v1, no AAD), which are sealed again for the place
 * they are found in. Afterwards the old key can be removed. Each value is swapped only if
 * unchanged since it was read (a token refreshed meanwhile is already current). Safe to
 * run repeatedly and from several processes; returns how many values it re-sealed. A value
 * that does not open (sealed with a key no longer configured, or damaged) is left as it is
 * and named in the `credentials_unreadable` error thrown once everything else is done.
 */
export async function resealWithCurrentKey(db: Db, cipher: CredentialCipher): Promise<number> {
  let resealed = 0;
  const unreadable: string[] = [];
  for (const [name, fields] of Object.entries(SEALED_FIELDS)) {
    const col = db.collection<Record<string, unknown>>(name);
    const projection = Object.fromEntries(Object.keys(fields).map((f) => [f, 1]));
    for await (const doc of col.find({}, { projection })) {
      for (const [field, bindingOf] of Object.entries(fields)) {
        const sealed = doc[field];
        if (typeof sealed !== 'string' || !cipher.needsReseal(sealed)) continue;
        const binding = bindingOf(String(doc._id));
        let value: unknown;
        try {
          value = cipher.open(sealed, binding);
        } catch {
          unreadable.push(`${name}/${String(doc._id)}/${field}`);
          continue;
        }
        const res = await col.updateOne({ _id: doc._id, [field]: sealed }, { $set: { [field]: cipher.seal(value, binding) } });
        resealed += res.modifiedCount;
      }
    }
  }
  if (unreadable.length > 0) {
    const shown = unreadable.slice(0, 10).join(', ') + (unreadable.length > 10 ? `, and ${unreadable.length - 10} more` : '');
    throw new WeftError('credentials_unreadable', `Re-sealed ${resealed} value(s); ${unreadable.length} could not be opened with WEFT_ENCRYPTION_KEY and were left as they are: ${shown}.`);
  }
  return resealed;
}
