import type { Db } from 'mongodb';
import { CredentialsUnreadableError } from '../common/errors';

/**
 * What re-sealing needs of the credential cipher (auth/credential-cipher.ts satisfies it):
 * where sealed values are stored, and how to tell, open and seal one. The store walks its
 * documents; the cipher alone knows keys, formats and bindings.
 */
export interface Sealer {
  readonly sealedFields: ReadonlyArray<{ collection: string; field: string; bindingOf(docId: string): string }>;
  needsReseal(sealed: string): boolean;
  open(sealed: string, binding: string): unknown;
  seal(value: unknown, binding: string): string;
}

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
export async function resealWithCurrentKey(db: Db, sealer: Sealer): Promise<number> {
  let resealed = 0;
  const unreadable: string[] = [];
  for (const [name, fields] of byCollection(sealer.sealedFields)) {
    const col = db.collection<Record<string, unknown>>(name);
    const projection = Object.fromEntries(fields.map((f) => [f.field, 1]));
    for await (const doc of col.find({}, { projection })) {
      for (const { field, bindingOf } of fields) {
        const sealed = doc[field];
        if (typeof sealed !== 'string' || !sealer.needsReseal(sealed)) continue;
        const binding = bindingOf(String(doc._id));
        let value: unknown;
        try {
          value = sealer.open(sealed, binding);
        } catch {
          unreadable.push(`${name}/${String(doc._id)}/${field}`);
          continue;
        }
        const res = await col.updateOne({ _id: doc._id, [field]: sealed }, { $set: { [field]: sealer.seal(value, binding) } });
        resealed += res.modifiedCount;
      }
    }
  }
  if (unreadable.length > 0) {
    const shown = unreadable.slice(0, 10).join(', ') + (unreadable.length > 10 ? `, and ${unreadable.length - 10} more` : '');
    throw new CredentialsUnreadableError(
      `Re-sealed ${resealed} value(s); ${unreadable.length} could not be opened with WEFT_ENCRYPTION_KEY and were left as they are: ${shown}.`,
    );
  }
  return resealed;
}

/** One pass over each collection, however many of its fields are sealed. */
function byCollection<F extends { collection: string }>(fields: readonly F[]): Map<string, F[]> {
  const grouped = new Map<string, F[]>();
  for (const f of fields) grouped.set(f.collection, [...(grouped.get(f.collection) ?? []), f]);
  return grouped;
}
