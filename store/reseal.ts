import type { Db } from 'mongodb';
import { CredentialsUnreadableError } from '../common/errors';
import { isDuplicateKey } from './duplicate-key';

/**
 * What re-sealing needs of the credential cipher (auth/credential-cipher.ts satisfies it):
 * where sealed values are stored, and how to tell, open and seal one. The store walks its
 * documents; the cipher alone knows keys, formats and bindings.
 */
export interface Sealer<Place = unknown> {
  /** `bindingOf` is given the document's `_id` and `environment`. */
  readonly sealedFields: ReadonlyArray<{ collection: string; field: string; bindingOf(doc: { _id: unknown; environment?: unknown }): Place }>;
  needsReseal(sealed: string): boolean;
  open(sealed: string, place: Place): unknown;
  seal(value: unknown, place: Place): string;
  /** Called once no value of the unbound format is left: from then on the sealer refuses it. */
  refuseUnbound(): void;
}

/**
 * Written when a re-seal pass left no value in an older format: from then on every process
 * refuses the format bound to no place (`refuseUnboundIfRetired`), so a copy of such a value
 * kept from before (a backup) cannot be planted in any document.
 */
const UNBOUND_RETIRED = { collection: 'store_migrations', _id: 'sealed-values-bound' } as const;

/**
 * Brings every sealed value to the current format and key: after WEFT_ENCRYPTION_KEY gained
 * a new first key (the old one still listed after it), and for values of an older format,
 * which are sealed again for the place they are found in (the document's field and
 * environment). Afterwards the old key can be removed, and the unbound format is refused
 * from then on (by this process now, by every process at its start). Each value is swapped only if
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
    const projection = { environment: 1, ...Object.fromEntries(fields.map((f) => [f.field, 1])) };
    for await (const doc of col.find({}, { projection })) {
      for (const { field, bindingOf } of fields) {
        const sealed = doc[field];
        if (typeof sealed !== 'string' || !sealer.needsReseal(sealed)) continue;
        const binding = bindingOf(doc);
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
  await retireUnbound(db);
  sealer.refuseUnbound();
  return resealed;
}

/** At start: a process refuses unbound values at once when an earlier re-seal already retired them. */
export async function refuseUnboundIfRetired(db: Db, sealer: Pick<Sealer, 'refuseUnbound'>): Promise<void> {
  if (await db.collection<{ _id: string }>(UNBOUND_RETIRED.collection).findOne({ _id: UNBOUND_RETIRED._id })) sealer.refuseUnbound();
}

async function retireUnbound(db: Db): Promise<void> {
  try {
    await db.collection<{ _id: string; done_at: Date }>(UNBOUND_RETIRED.collection).insertOne({ _id: UNBOUND_RETIRED._id, done_at: new Date() });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err; // retired by an earlier pass or another process
  }
}

/** One pass over each collection, however many of its fields are sealed. */
function byCollection<F extends { collection: string }>(fields: readonly F[]): Map<string, F[]> {
  const grouped = new Map<string, F[]>();
  for (const f of fields) grouped.set(f.collection, [...(grouped.get(f.collection) ?? []), f]);
  return grouped;
}
