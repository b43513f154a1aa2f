import type { Collection, Db, Document, ObjectId, OptionalUnlessRequiredId } from 'mongodb';
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

/**
 * Rewrites documents an earlier version stored under ObjectId `_id`s into a keyed layout:
 * `rewrite` gives the new documents of one (from its fields and its ObjectId as a stable
 * suffix, so processes starting together write the same keys and the duplicates are
 * refused), then the originals go. `accept` skips what is not such a document. One scan.
 */
export async function rekeyEarlierDocuments<Old extends Document, New extends Document>(
  col: Collection<New>,
  accept: (doc: Old) => boolean,
  rewrite: (doc: Omit<Old, '_id'>, suffix: string) => Array<OptionalUnlessRequiredId<New>>,
): Promise<void> {
  const earlier = col.find({ _id: { $type: 'objectId' } } as never) as unknown as AsyncIterable<Old & { _id: ObjectId }>;
  let chunk: Array<Old & { _id: ObjectId }> = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    await insertManyIgnoringDuplicates(
      col,
      chunk.flatMap(({ _id, ...rest }) => rewrite(rest as Omit<Old, '_id'>, _id.toHexString())),
    );
    await col.deleteMany({ _id: { $in: chunk.map((d) => d._id) } } as never);
    chunk = [];
  };
  for await (const doc of earlier) {
    if (!accept(doc)) continue;
    chunk.push(doc);
    if (chunk.length === 500) await flush();
  }
  await flush();
}
