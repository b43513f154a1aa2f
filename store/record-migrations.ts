import type { Db } from 'mongodb';
import { runOnce } from './migrations';
import type { RecordScope } from './record-doc';
import { indexedStateOf } from './record-index';
import { scopeKey } from './record-keys';
import type { RecordParts } from './record-parts';

/**
 * What a version of Weft before the feed, the index or keyed batches left: brought up to
 * date once, batches at start, a scope's feed and index by its first reader or writer.
 */
export class RecordMigrations {
  /** Feed backfills under way in this process, by scope: concurrent first reads wait for one scan instead of each making one. */
  private readonly feedBuilds = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly parts: RecordParts,
  ) {}

  async atStart(): Promise<void> {
    await runOnce(this.db, 'record_run_batches_by_key', () => this.parts.batches.moveToKeyedIds());
  }

  /**
   * Writes the feed of a scope stored before the feed existed (one scan), then flags it.
   * Safe beside a running writer and another builder: entries already there are kept, and
   * an entry for a version the writer has replaced meanwhile is merely superseded.
   */
  buildFeed(scope: RecordScope): Promise<void> {
    const key = scopeKey(scope);
    let build = this.feedBuilds.get(key);
    if (!build) {
      build = this.scanIntoFeed(scope).finally(() => this.feedBuilds.delete(key));
      this.feedBuilds.set(key, build);
    }
    return build;
  }

  private async scanIntoFeed(scope: RecordScope): Promise<void> {
    const { counters, feed, versions } = this.parts;
    // Only below what the feed already has and what was committed when the build began: the
    // feed's packs must not overlap, and any version at or above either was appended by the
    // writer that wrote it (this version of Weft appends before it commits).
    const committed = (await counters.get(scope))?.committed ?? 0;
    const firstInFeed = (await feed.firstSeq(scopeKey(scope))) ?? Infinity;
    const docs = (await versions.scan(scope, ['id', 'seq', 'last_modified_at']).toArray()).filter((d) => d.seq <= committed && d.seq < firstInFeed);
    docs.sort((a, b) => a.seq - b.seq);
    // `at` must not decrease with seq: a running maximum of the stored times.
    let at = 0;
    const changes = docs.map((d) => ({ id: d.id, seq: d.seq, at: (at = Math.max(at, d.last_modified_at.getTime())) }));
    // One entry per pack: a backfill racing another one (another process) makes the same packs.
    await feed.append(scopeKey(scope), changes, { single: true });
    await counters.markFed(scope, at);
  }

  /** Indexes a scope written before the index existed (one scan), and lists the chunks on its counter. */
  async buildIndex(scope: RecordScope): Promise<string[]> {
    const { counters, index, versions } = this.parts;
    const states = async function* (cursor: AsyncIterable<Parameters<typeof indexedStateOf>[0] & { id: string }>) {
      for await (const doc of cursor) yield [doc.id, indexedStateOf(doc)] as const;
    };
    const cursor = versions.scan(scope, ['id', 'hash', 'first_seen_at', 'deleted_at']);
    const ids: string[] = [];
    for await (const id of index.writeChunksFrom(scopeKey(scope), scope, states(cursor))) ids.push(id);
    if (await counters.listBuiltIndex(scope, ids)) return ids;
    await index.deleteChunks(ids); // another writer indexed it first
    return (await counters.get(scope))?.index ?? [];
  }
}
