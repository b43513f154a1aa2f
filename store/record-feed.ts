import { MongoBulkWriteError, MongoServerError, type Collection, type Db } from 'mongodb';

/**
 * One change of one record: the record `id` got version `seq` of its scope at `at`.
 *
 * `_id` is `<scope key><seq, 12 digits>|<URI-encoded id>` (the scope key is the scope's
 * counter id, `conn|model|variant|`), so a scope's changes in sequence order are one `_id`
 * range: the only kind of read FerretDB's SQLite backend answers from an index (with the
 * project's patch) and one the `_id` index serves on MongoDB. Ties (a delete detection
 * gives one seq to many records) are ordered by the encoded id.
 */
export interface FeedEntry {
  /** The change: seq and record id, read back with positionOf. Nothing else is stored twice: the feed's write cost follows its size. */
  _id: string;
  /**
   * Epoch ms, never less than the record's `last_modified_at` and never less than the
   * entry before it in the scope: monotonic in `seq`, so `modified_after` finds its start
   * by a binary search instead of a scan (see RecordStore.reserveSeq).
   */
  at: number;
}

/** Digits of a padded seq: 10^12 changes per scope. */
const SEQ_DIGITS = 12;
/** Entries per insert or delete statement. */
const CHUNK = 1_000;

export function feedKey(scopeKey: string, seq: number, id: string): string {
  return `${seqPrefix(scopeKey, seq)}|${encodeURIComponent(id)}`;
}

/**
 * A position that sorts before every entry of `seq` and after every entry of smaller seqs
 * (the prefix of the keys of `seq`): `$gt` it starts at `seq`, `$lt` it stops before.
 */
export function seqPrefix(scopeKey: string, seq: number): string {
  return scopeKey + String(seq).padStart(SEQ_DIGITS, '0');
}

/** The change a key stands for (the reverse of feedKey). */
export function positionOf(scopeKey: string, key: string): { seq: number; id: string } {
  const rest = key.slice(scopeKey.length);
  return { seq: Number(rest.slice(0, SEQ_DIGITS)), id: decodeURIComponent(rest.slice(SEQ_DIGITS + 1)) };
}

/**
 * The per-scope change feed (`record_feed`). Writers append an entry for every record
 * version before writing the version and before committing its seq; readers page by `_id`
 * ranges up to the committed mark and read the records by `_id $in`. An entry whose record
 * has moved on to a later seq is superseded: readers skip it (the later change has its own
 * entry) and delete it when they meet it.
 */
export class RecordFeed {
  private readonly col: Collection<FeedEntry>;

  constructor(db: Db) {
    this.col = db.collection<FeedEntry>('record_feed');
  }

  /** Writes entries; an entry already there (a retried or repaired batch, a backfill racing a writer) is left as it is. */
  async append(scopeKey: string, changes: Array<{ id: string; seq: number; at: number }>): Promise<void> {
    const entries = changes.map((c): FeedEntry => ({ _id: feedKey(scopeKey, c.seq, c.id), at: c.at }));
    for (let i = 0; i < entries.length; i += CHUNK) await insertIgnoringDuplicates(this.col, entries.slice(i, i + CHUNK));
  }

  /**
   * Up to `limit` entries after position `after` and before seq `until`, in order. The
   * query is exactly `_id` range + sort `{_id: 1}` + limit: the shape FerretDB (patched)
   * and MongoDB read from the `_id` index.
   */
  async window(after: string, until: string, limit: number): Promise<FeedEntry[]> {
    return this.col.find({ _id: { $gt: after, $lt: until } }).sort({ _id: 1 }).limit(limit).toArray();
  }

  /** The first entry after position `after` and before `until`, if any. */
  async first(after: string, until: string): Promise<FeedEntry | undefined> {
    return (await this.window(after, until, 1))[0];
  }

  /** Removes superseded entries. */
  async forget(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += CHUNK) await this.col.deleteMany({ _id: { $in: keys.slice(i, i + CHUNK) } });
  }

  /** Removes every entry whose key starts with `prefix` (one scope, or a whole connection). */
  async deletePrefix(prefix: string): Promise<void> {
    // '|' ends every prefix, and '}' is the character after it: [prefix, prefix-with-'}') is the whole key space under it.
    if (!prefix.endsWith('|')) throw new Error(`feed key prefix must end with '|': ${prefix}`);
    await this.col.deleteMany({ _id: { $gte: prefix, $lt: `${prefix.slice(0, -1)}}` } });
  }
}

async function insertIgnoringDuplicates(col: Collection<FeedEntry>, docs: FeedEntry[]): Promise<void> {
  try {
    await col.insertMany(docs, { ordered: false });
  } catch (err) {
    if (err instanceof MongoBulkWriteError) {
      const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
      if (errors.length > 0 && errors.every((e) => e.code === 11000)) return;
    } else if (err instanceof MongoServerError && err.code === 11000) return;
    throw err;
  }
}
