import { feedKey, positionOf, seqPrefix } from './record-feed';
import { visibleSeq } from './record-counters';
import type { RecordDoc, RecordScope } from './record-doc';
import { recordKey, scopeKey } from './record-keys';
import type { RecordMigrations } from './record-migrations';
import type { RecordPosition } from './record-pages';
import type { RecordParts } from './record-parts';

/** Feed entries one prune step reads. */
const PRUNE_WINDOW = 1_000;

export interface PruneResult {
  /** Records whose payload this call dropped. */
  count: number;
  /** Whether records up to the position may remain unpruned (the call stopped at its limit). */
  hasMore: boolean;
}

/**
 * Drops the payloads of the scope's records up to `until` (inclusive) in change order, the
 * order `GET /records` pages in: their ids, hash and metadata stay. At most `limit` records
 * per call. Reads the feed by `_id` ranges from where the last prune stopped and the
 * records by `_id $in`; each write is by `_id` and the seq read, so a version a sync
 * writes meanwhile (a later seq, past `until`) keeps its payload. Pruned records are
 * skipped, so calling it again changes nothing.
 */
export async function pruneRecords(
  parts: RecordParts,
  migrations: RecordMigrations,
  scope: RecordScope,
  until: RecordPosition,
  limit: number,
  now = new Date(),
): Promise<PruneResult> {
  const { counters, feed, versions } = parts;
  const counter = await counters.get(scope);
  if (!counter) return { count: 0, hasMore: false };
  if (!counter.feed) await migrations.buildFeed(scope);
  const key = scopeKey(scope);
  // Inclusive: every key of `until` itself sorts before it with a NUL appended.
  const untilKey = feedKey(key, until.seq, until.id) + '\u0000';
  const committedEnd = seqPrefix(key, visibleSeq(counter) + 1);
  const end = untilKey < committedEnd ? untilKey : committedEnd;
  let pos = counter.pruned_to && counter.pruned_to > seqPrefix(key, 0) ? counter.pruned_to : seqPrefix(key, 0);
  let count = 0;
  for (;;) {
    const entries = await feed.window(key, pos, end, PRUNE_WINDOW);
    const changes = entries.map((e) => ({ key: e._id, ...positionOf(key, e._id) }));
    const records = await versions.fetchByKeys(changes.map((c) => recordKey(scope, c.id)));
    const targets: RecordDoc[] = [];
    for (const change of changes) {
      if (count + targets.length >= limit) break;
      pos = change.key;
      const record = records.get(recordKey(scope, change.id));
      // Another seq: a superseded entry (the record's current change has its own) or one not written.
      if (record?.seq === change.seq && record.environment === scope.environment && !record.pruned_at) targets.push(record);
    }
    count += await versions.dropPayloads(targets, now);
    await counters.markPrunedTo(key, pos, counter.pruned_to);
    if (count >= limit) return { count, hasMore: (await feed.first(key, pos, end)) !== undefined };
    if (entries.length < PRUNE_WINDOW) return { count, hasMore: false };
  }
}
