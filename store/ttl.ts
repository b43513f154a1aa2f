import type { Collection, Document } from 'mongodb';

/**
 * TTL indexes where the server has them (MongoDB); FerretDB 1.24's SQLite backend does
 * not, so there the field gets a plain index and `sweepExpired` deletes old documents
 * (the worker runs it periodically). Both paths give the same retention.
 */
export interface ExpiryRule {
  collection: Collection<any>;
  field: string;
  seconds: number;
  native: boolean;
}

export async function ensureExpiry<T extends Document>(collection: Collection<T>, field: string, seconds: number): Promise<ExpiryRule> {
  try {
    await collection.createIndex({ [field]: 1 } as never, { expireAfterSeconds: seconds });
    return { collection, field, seconds, native: true };
  } catch (err) {
    if (!/expireAfterSeconds|not implemented/i.test((err as Error).message)) throw err;
    await collection.createIndex({ [field]: 1 } as never);
    return { collection, field, seconds, native: false };
  }
}

export async function sweepExpired(rules: ExpiryRule[], now = Date.now()): Promise<number> {
  let removed = 0;
  for (const rule of rules) {
    if (rule.native) continue;
    const res = await rule.collection.deleteMany({ [rule.field]: { $lt: new Date(now - rule.seconds * 1000) } });
    removed += res.deletedCount;
  }
  return removed;
}
