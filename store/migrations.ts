import type { Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';

interface MigrationDoc {
  _id: string;
  done_at: Date;
}

/**
 * Runs a start-up migration unless a process has already finished it (a marker document
 * in `store_migrations`, by `_id`). Every migration is idempotent: several processes
 * starting together may each run it, and one that stops half-way is completed by the next
 * start. Only a finished run writes the marker.
 */
export async function runOnce(db: Db, name: string, migrate: () => Promise<void>): Promise<void> {
  const markers = db.collection<MigrationDoc>('store_migrations');
  if (await markers.findOne({ _id: name })) return;
  await migrate();
  try {
    await markers.insertOne({ _id: name, done_at: new Date() });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err; // another process finished it too
  }
}

/** insertMany that treats "already there" as done (ordered: false, duplicate keys ignored). */
export async function insertMissing<T extends { _id: string }>(db: Db, collection: string, docs: T[]): Promise<void> {
  for (let i = 0; i < docs.length; i += 1000) {
    const chunk = docs.slice(i, i + 1000);
    try {
      await db.collection<T>(collection).insertMany(chunk as never[], { ordered: false });
    } catch (err) {
      const reported = (err as { writeErrors?: { code?: number }[] | { code?: number } }).writeErrors;
      const errors = Array.isArray(reported) ? reported : reported ? [reported] : [];
      const onlyDuplicates = errors.length > 0 ? errors.every((e) => e.code === 11000) : isDuplicateKey(err);
      if (!onlyDuplicates) throw err;
    }
  }
}
