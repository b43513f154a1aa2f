import type { Db } from 'mongodb';
import { insertManyIgnoringDuplicates, isDuplicateKey } from './duplicate-key';

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

/** insertMany of any size that treats "already there" as done (see insertManyIgnoringDuplicates). */
export async function insertMissing<T extends { _id: string }>(db: Db, collection: string, docs: T[]): Promise<void> {
  for (let i = 0; i < docs.length; i += 1000) await insertManyIgnoringDuplicates(db.collection<T>(collection), docs.slice(i, i + 1000) as never[]);
}
