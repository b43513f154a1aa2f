import type { Db } from 'mongodb';

/**
 * What the MongoDB-wire server behind `db` can do fast. FerretDB 1.x evaluates every
 * filter itself after reading the whole collection, except filters on `_id` alone: an
 * equality, and (with the patches of scripts/infra/binaries.ts) `{_id: {$in: [...]}}`,
 * which read and delete through its `_id` index. Secondary indexes are never used for its
 * reads, only maintained on every write. MongoDB uses all of them.
 */
export interface ServerTraits {
  /** Only `_id` filters are indexed: secondary indexes would cost every write and serve no read. */
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
