import type { Collection, Document } from 'mongodb';

/**
 * How long a cached read is served (the hot path of `ANY /proxy` and of every API request's
 * secret-key check). A change made by another process (a deleted connection, a replaced
 * secret key, an edited integration) is seen by this one at most this late; a change made
 * through this process's own stores is seen at once (every write drops the cache).
 */
export const READ_CACHE_TTL_MS = 3_000;
const MAX_ENTRIES = 10_000;

/**
 * A short-lived, bounded in-process cache of found documents. Misses are not cached (a
 * connection created a moment ago is found at once), and a read that was under way while
 * this process wrote is not stored (it may predate the write).
 *
 * Concurrent reads of a key share one load: when an entry expires under load, the requests
 * of that moment (32 at once in the proxy bench) make one database read, not one each. A
 * read started after a write does not join a load started before it.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private readonly loading = new Map<string, Promise<V | null>>();
  private generation = 0;

  constructor(private readonly ttlMs = READ_CACHE_TTL_MS) {}

  get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const hit = this.entries.get(key);
    if (hit && hit.until > Date.now()) return Promise.resolve(hit.value);
    if (hit) this.entries.delete(key);
    const under = this.loading.get(key);
    if (under) return under;
    const generation = this.generation;
    const loaded = load()
      .then((value) => {
        if (value !== null && generation === this.generation && this.ttlMs > 0) {
          // Oldest first in a Map: past the bound, the oldest entry goes.
          if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
          this.entries.set(key, { value, until: Date.now() + this.ttlMs });
        }
        return value;
      })
      .finally(() => {
        if (this.loading.get(key) === loaded) this.loading.delete(key);
      });
    this.loading.set(key, loaded);
    return loaded;
  }

  /** Whether `key` is cached now (nothing is loaded). */
  has(key: string): boolean {
    const hit = this.entries.get(key);
    return hit !== undefined && hit.until > Date.now();
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
    // Loads under way may predate the write: later reads start their own.
    this.loading.clear();
  }
}

const WRITES = new Set([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'bulkWrite',
  'drop',
]);

/**
 * The collection as it is, except that every write through it drops `caches` (before it
 * is sent, and again once it is done, so no read overlapping it is kept).
 */
export function droppingCachesOnWrite<T extends Document>(col: Collection<T>, ...caches: Array<{ clear(): void }>): Collection<T> {
  const clearAll = () => caches.forEach((c) => c.clear());
  return new Proxy(col, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof prop !== 'string' || !WRITES.has(prop) || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        clearAll();
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) return result.finally(clearAll);
        return result;
      };
    },
  });
}
