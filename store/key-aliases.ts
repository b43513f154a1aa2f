import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { insertMissing } from './migrations';

/** A natural key (its keyId) naming one document: read by `_id`, the only index FerretDB's SQLite backend reads through. */
export interface AliasDoc {
  _id: string;
  /** The `_id` of the document the key names. */
  target: string;
  created_at: Date;
}

/**
 * An alias younger than this whose document does not exist (yet) is a create in flight;
 * an older one was left by a create or delete that stopped half-way, and is taken over.
 */
export const ALIAS_IN_FLIGHT_MS = 30_000;

export type AliasClaim = { claimed: true } | { claimed: false; holder: string };

/**
 * A lookup table from a document's natural key (environment + connection id, unique key,
 * secret key hash, ...) to its `_id`, for documents whose `_id` cannot be the key itself
 * (it is random and already bound into sealed credentials, or it is a public id).
 *
 * The table also enforces uniqueness: claiming a key is inserting its `_id`, which only one
 * process can win on MongoDB and FerretDB alike (FerretDB's SQLite backend evaluates any
 * other filter by reading the whole collection). Writers claim the key before they insert
 * the document and release it after they delete the document, so a key never names two
 * documents; a process that stops in between leaves an alias without a document, which
 * readers treat as absent and the next create of that key takes over.
 */
export class KeyAliases {
  private readonly col: Collection<AliasDoc>;
  constructor(
    private readonly db: Db,
    readonly collectionName: string,
  ) {
    this.col = db.collection<AliasDoc>(collectionName);
  }

  async resolve(key: string): Promise<string | null> {
    return (await this.col.findOne({ _id: key }))?.target ?? null;
  }

  /** key → target for the keys that exist, one `_id $in` read. */
  async resolveMany(keys: string[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const docs = await this.col.find({ _id: { $in: [...new Set(keys)] } }).toArray();
    return new Map(docs.map((d) => [d._id, d.target]));
  }

  /** Every alias in an `_id` range (keyPrefixRange), in key order. */
  async inRange(range: { $gte: string; $lt: string }): Promise<AliasDoc[]> {
    return this.col.find({ _id: range }).sort({ _id: 1 }).toArray();
  }

  /** Up to `limit` aliases of an `_id` range after `after` (exclusive), in key order: a cursor for long lists. */
  async pageInRange(range: { $gte: string; $lt: string }, after: string | null, limit: number): Promise<AliasDoc[]> {
    const lower = after !== null && after >= range.$gte ? { $gt: after } : { $gte: range.$gte };
    return this.col
      .find({ _id: { ...lower, $lt: range.$lt } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
  }

  /**
   * Claims `key` for `target`. Taken when another live document holds it; `isLive` says
   * whether the holder still exists (and still has this key).
   */
  async claim(key: string, target: string, isLive: (holder: string) => Promise<boolean>, now = new Date()): Promise<AliasClaim> {
    for (let round = 0; round < 3; round += 1) {
      try {
        await this.col.insertOne({ _id: key, target, created_at: now });
        return { claimed: true };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const held = await this.col.findOne({ _id: key });
      if (!held) continue; // released meanwhile: try again
      if (held.target === target) return { claimed: true };
      const inFlight = now.getTime() - held.created_at.getTime() < ALIAS_IN_FLIGHT_MS;
      if (inFlight || (await isLive(held.target))) return { claimed: false, holder: held.target };
      // Left behind by a writer that stopped half-way: take it over.
      await this.col.deleteOne({ _id: key, target: held.target });
    }
    return { claimed: false, holder: (await this.resolve(key)) ?? '' };
  }

  /**
   * Whether `key` still names `target`. A take-over of a left-behind alias and a create
   * that was slow rather than dead can race (FerretDB deletes by a filter in two steps); the
   * creator checks after writing its document and backs out if it lost.
   */
  async holds(key: string, target: string): Promise<boolean> {
    return (await this.resolve(key)) === target;
  }

  async release(key: string, target: string): Promise<void> {
    await this.col.deleteOne({ _id: key, target });
  }

  /** Aliases for documents written before the table existed (idempotent; existing aliases win). */
  async backfill(entries: Array<{ key: string; target: string }>): Promise<void> {
    // Epoch: never mistaken for a create in flight.
    await insertMissing<AliasDoc>(
      this.db,
      this.collectionName,
      entries.map((e) => ({ _id: e.key, target: e.target, created_at: new Date(0) })),
    );
  }
}
