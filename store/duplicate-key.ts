import { MongoBulkWriteError, type Collection, type Document, type OptionalUnlessRequiredId } from 'mongodb';

/** E11000: the insert or update hit a unique key (on MongoDB and FerretDB alike). */
export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}

/**
 * insertMany that takes "already there" as done: unordered, so every new document is written,
 * and an error made only of duplicate keys is no error (a retried batch, a backfill or a
 * migration racing a writer or another process).
 */
export async function insertManyIgnoringDuplicates<T extends Document>(col: Collection<T>, docs: Array<OptionalUnlessRequiredId<T>>): Promise<void> {
  if (docs.length === 0) return;
  try {
    await col.insertMany(docs, { ordered: false });
  } catch (err) {
    if (err instanceof MongoBulkWriteError) {
      const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
      if (errors.length > 0 && errors.every((e) => e.code === 11000)) return;
    } else if (isDuplicateKey(err)) return;
    throw err;
  }
}
