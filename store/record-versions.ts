import { MongoBulkWriteError, type Collection, type Db, type FindCursor } from 'mongodb';
import { prefixRange } from './key-range';
import type { RecordDoc, RecordScope, StoredRecord } from './record-doc';
import { recordKey, scopeRange } from './record-keys';
import { serverTraits } from './server-traits';

/** A stored record, as much of it as classifying a new version needs. */
export type Existing = Pick<RecordDoc, '_id' | 'id' | 'hash' | 'deleted_at' | 'run_id' | 'last_action' | 'first_seen_at' | 'live_before_run'>;
const EXISTING_PROJECTION = { _id: 1, id: 1, hash: 1, deleted_at: 1, run_id: 1, last_action: 1, first_seen_at: 1, live_before_run: 1 } as const;

/**
 * A record in its stored layout (see StoredRecord). `undefined` values in objects become
 * null, as the driver stores them in a document.
 */
function toStored(doc: RecordDoc): StoredRecord {
  const { data, ...rest } = doc;
  return { ...rest, data_json: JSON.stringify(data, (_key, value: unknown) => (value === undefined ? null : value)) };
}

/** A stored record as the engine hands it out, from either layout. */
function fromStored(doc: StoredRecord): RecordDoc {
  if (doc.data_json === undefined) return doc as RecordDoc;
  const { data_json: json, ...rest } = doc;
  return { ...rest, data: JSON.parse(json) as Record<string, unknown> };
}

/** Ids per `$in` query or delete, documents per insertMany. */
const CHUNK = 1_000;

/**
 * The stored versions (`records`): one document per record, keyed by recordKey, read and
 * written by `_id` only (`$in`, or the scope's `_id` range), the one key FerretDB indexes.
 */
export class RecordVersions {
  private readonly col: Collection<StoredRecord>;

  constructor(private readonly db: Db) {
    this.col = db.collection<StoredRecord>('records');
  }

  /** Whether the server reads through secondary indexes (not FerretDB); drops the ones earlier versions made there. */
  async ensureIndexes(): Promise<boolean> {
    // FerretDB never reads through secondary indexes, only pays for them on every insert.
    const secondary = !(await serverTraits(this.db)).indexedByIdOnly;
    if (secondary) {
      // Pages are read through record_feed now; this index served only the old scan.
      await this.col.dropIndex('connection_1_model_1_variant_1_seq_1_id_1').catch(() => undefined);
      // A scope's records, a run's batches and a scope's swaps are `_id` ranges now: these only cost writes.
      await this.col.dropIndex('connection_1_model_1_variant_1_deleted_at_1').catch(() => undefined);
    }
    return secondary;
  }

  /** The stored versions of `ids` in `scope`, by id. */
  async fetchExisting(scope: RecordScope, ids: string[]): Promise<Map<string, Existing>> {
    const out = new Map<string, Existing>();
    const keys = ids.map((id) => recordKey(scope, id));
    for (let i = 0; i < keys.length; i += CHUNK) {
      for await (const doc of this.col.find({ _id: { $in: keys.slice(i, i + CHUNK) } }, { projection: EXISTING_PROJECTION })) out.set(doc.id, doc as Existing);
    }
    return out;
  }

  /** Records by `_id`, read with nothing but `{_id: {$in}}` (what FerretDB reads through its index). */
  async fetchByKeys(keys: string[]): Promise<Map<string, RecordDoc>> {
    const out = new Map<string, RecordDoc>();
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += CHUNK) {
      const chunk = unique.slice(i, i + CHUNK);
      // At most one document per key: with that as the limit and the batch size, the server
      // answers in one reply and closes the cursor (no getMore round trip to learn the end).
      for (const doc of await this.col
        .find({ _id: { $in: chunk } })
        .limit(chunk.length)
        .batchSize(chunk.length)
        .toArray())
        out.set(doc._id, fromStored(doc));
    }
    return out;
  }

  /** Every record of the scope, with the fields projected (one `_id` range: never other scopes' records). */
  scan<K extends keyof RecordDoc>(scope: RecordScope, fields: readonly K[]): FindCursor<Pick<RecordDoc, K>> {
    const projection: Record<string, 0 | 1> = Object.fromEntries(fields.map((f) => [f, 1]));
    if (!fields.includes('_id' as K)) projection._id = 0;
    return this.col.find(scopeRange(scope), { projection }) as unknown as FindCursor<Pick<RecordDoc, K>>;
  }

  /** Inserts new records; returns the ids that already existed (duplicate `_id`), which the caller handles as updates. */
  async insertNew(docs: RecordDoc[]): Promise<Set<string>> {
    const duplicates = new Set<string>();
    for (let i = 0; i < docs.length; i += CHUNK) {
      const chunk = docs.slice(i, i + CHUNK);
      try {
        await this.col.insertMany(chunk.map(toStored), { ordered: false });
      } catch (err) {
        if (!(err instanceof MongoBulkWriteError)) throw err;
        const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
        for (const e of errors) {
          if (e.code !== 11000) throw err;
          duplicates.add(chunk[e.index].id);
        }
      }
    }
    return duplicates;
  }

  async deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += CHUNK) await this.col.deleteMany({ _id: { $in: keys.slice(i, i + CHUNK) } });
  }

  /** Marks records deleted by `_id`. */
  async markDeleted(targets: Array<{ _id: string; live_before_run: boolean }>, runId: string, seq: number, now: Date): Promise<void> {
    for (const liveBefore of [true, false]) {
      const keys = targets.filter((t) => t.live_before_run === liveBefore).map((t) => t._id);
      for (let i = 0; i < keys.length; i += CHUNK) {
        await this.col.updateMany(
          { _id: { $in: keys.slice(i, i + CHUNK) } },
          { $set: { deleted_at: now, last_modified_at: now, last_action: 'DELETED' as const, seq, run_id: runId, live_before_run: liveBefore } },
        );
      }
    }
  }

  /** Drops the payloads of these versions, each only if it is still at the seq read; how many were dropped. */
  async dropPayloads(targets: RecordDoc[], now: Date): Promise<number> {
    if (targets.length === 0) return 0;
    const written = await this.col.bulkWrite(
      targets.map((r) => ({
        updateOne: { filter: { _id: r._id, seq: r.seq }, update: { $set: { data_json: '{}', pruned_at: now }, $unset: { data: '' as const } } },
      })),
      { ordered: false },
    );
    return written.modifiedCount;
  }

  /** Removes every record whose key starts with `prefix` (a connection's, a model's or one scope's key). */
  async deletePrefix(prefix: string): Promise<void> {
    await this.col.deleteMany({ _id: prefixRange(prefix) });
  }
}
