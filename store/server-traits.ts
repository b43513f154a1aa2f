import type { Db } from 'mongodb';

/**
 * What the MongoDB-wire server behind `db` can do fast. FerretDB 1.x evaluates every
 * filter itself after reading the whole collection, except a filter that is exactly
 * `{ _id: <string | ObjectId> }`, which it pushes down to an indexed lookup (with the
 * `_id` index fix applied by scripts/infra/binaries.ts). Secondary indexes are never used
 * for its reads, only maintained on every write. MongoDB uses all of them.
 */
export interface ServerTraits {
  /** Only single `{_id}` filters are indexed: read and write many ids one by one, never with `$in`. */
  indexedByIdOnly: boolean;
}

const cache = new WeakMap<Db, Promise<ServerTraits>>();

export function serverTraits(db: Db): Promise<ServerTraits> {
  let traits = cache.get(db);
  if (!traits) {
    traits = detect(db);
    cache.set(db, traits);
    // A failed probe (server not up yet) is retried by the next caller instead of cached.
    traits.catch(() => cache.delete(db));
  }
  return traits;
}

async function detect(db: Db): Promise<ServerTraits> {
  const info = await db.admin().command({ buildInfo: 1 });
  if (typeof info.ferretdbVersion === 'string') return { indexedByIdOnly: true };
  return { indexedByIdOnly: false };
}
