import type { Collection, Document } from 'mongodb';

/**
 * TTL indexes where the server has them (MongoDB); FerretDB 1.24's SQLite backend does
 * not, so there the field gets a plain index and `sweepExpired` deletes old documents
 * (the worker runs it periodically). Both paths give the same retention.
 */
export interface ExpiryRule {
  // Rules of differently typed collections share one list; the sweep only reads the named date field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  collection: Collection<any>;
  field: string;
  seconds: number;
  native: boolean;
  /**
   * Deletes what expired before `cutoff` without a filter on `field` (which FerretDB answers
   * by reading the whole collection): e.g. through time-ordered `_id` keys. Returns the count.
   */
  sweep?: (cutoff: Date) => Promise<number>;
}

export async function ensureExpiry<T extends Document>(
  collection: Collection<T>,
  field: string,
  seconds: number,
  opts: { sweep?: ExpiryRule['sweep'] } = {},
): Promise<ExpiryRule> {
  try {
    await collection.createIndex({ [field]: 1 } as never, { expireAfterSeconds: seconds });
    return { collection, field, seconds, native: true };
  } catch (err) {
    if (!/expireAfterSeconds|not implemented/i.test((err as Error).message)) throw err;
    // A sweep of its own needs no index on the field (which would cost every write, unread).
    if (opts.sweep) return { collection, field, seconds, native: false, sweep: opts.sweep };
    await collection.createIndex({ [field]: 1 } as never);
    return { collection, field, seconds, native: false };
  }
}

export async function sweepExpired(rules: ExpiryRule[], now = Date.now()): Promise<number> {
  let removed = 0;
  for (const rule of rules) {
    if (rule.native) continue;
    const cutoff = new Date(now - rule.seconds * 1000);
    if (rule.sweep) {
      removed += await rule.sweep(cutoff);
      continue;
    }
    const res = await rule.collection.deleteMany({ [rule.field]: { $lt: cutoff } });
    removed += res.deletedCount;
  }
  return removed;
}
