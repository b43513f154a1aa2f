import { decodeIds, mergeBatches, type RunBatchDoc } from './record-batches';
import { liveIsKnown, type CounterDoc, type ScopeCounts } from './record-counters';
import type { RecordScope } from './record-doc';
import { encodeEntries, indexedStateOf, type IndexedState } from './record-index';
import { scopeKey } from './record-keys';
import type { RecordParts } from './record-parts';

/**
 * Closes a run's scope: marks as deleted every live record a complete full run did not
 * see (only call with detectDeletes after a complete run), and returns what the run
 * changed and how many records are live. Safe to repeat. `runStartedAt`: what another
 * writer (an action's save) stored since then is not deleted for being unseen.
 */
export async function finishScope(
  parts: RecordParts,
  scope: RecordScope,
  runId: string,
  detectDeletes: boolean,
  now = new Date(),
  runStartedAt?: Date,
): Promise<ScopeCounts> {
  const counter = await parts.counters.get(scope);
  if (counter?.last_run?.id === runId && counter.live !== undefined) return { ...counter.last_run.counts, live: counter.live };

  const batches = await parts.batches.ofRun(scope, runId);
  const liveKnown = liveIsKnown(counter, runId);
  // Nothing live before the run means nothing for delete detection to find.
  const needsScan = detectDeletes && !(liveKnown && counter?.live === 0);
  const counts = needsScan
    ? await deleteUnseen(parts, scope, runId, batches, counter?.indexed === true, now, runStartedAt)
    : await countFromBatches(parts, scope, liveKnown ? counter : null, batches);

  // The live count is exact again (carried, counted or scanned): no stale writers remain.
  await parts.counters.finishRun(scope, runId, counts);
  await parts.batches.dropRun(scope, runId);
  await compactIndex(parts, scope);
  return counts;
}

/**
 * Rewrites the scope's index as one entry per record once its chunk list has grown past
 * twice its size after the last rewrite (each batch adds a chunk), so loading it stays
 * proportional to the scope. Gives way if a writer added a chunk meanwhile.
 */
async function compactIndex(parts: RecordParts, scope: RecordScope): Promise<void> {
  const { counters, index } = parts;
  const counter = await counters.get(scope);
  if (!counter?.indexed) return;
  const chunkIds = counter.index ?? [];
  if (counter.index_base === undefined) {
    await counters.setIndexBase(counter, chunkIds.length);
    return;
  }
  if (chunkIds.length <= 2 * counter.index_base + 8) return;
  const states = await index.load(chunkIds);
  const rewritten: string[] = [];
  for await (const id of index.writeChunksFrom(counter._id, scope, states.entries())) rewritten.push(id);
  const swapped = await counters.swapIndex(counter, rewritten);
  await index.deleteChunks(swapped ? chunkIds : rewritten);
}

/** The run's changes from its own batch log; the live count carried from the last run (when `known`). */
async function countFromBatches(parts: RecordParts, scope: RecordScope, known: CounterDoc | null, batches: RunBatchDoc[]): Promise<ScopeCounts> {
  const counts = { added: 0, updated: 0, deleted: 0, live: 0 };
  let delta = 0;
  for (const c of mergeBatches(batches).values()) {
    if (c.action === 'ADDED') counts.added += 1;
    else if (c.action === 'UPDATED') counts.updated += 1;
    else counts.deleted += 1;
    delta += (c.action === 'DELETED' ? 0 : 1) - (c.live_before ? 1 : 0);
  }
  if (known?.live !== undefined) counts.live = known.live + delta;
  else {
    // Unknown: counted once, over the scope's `_id` range (a filter on deleted_at too would read the whole collection on FerretDB).
    for await (const doc of parts.versions.scan(scope, ['deleted_at'])) if (doc.deleted_at === null) counts.live += 1;
  }
  return counts;
}

/** One pass over the scope: marks the unseen live records deleted and counts exactly. */
async function deleteUnseen(
  parts: RecordParts,
  scope: RecordScope,
  runId: string,
  batches: RunBatchDoc[],
  indexed: boolean,
  now: Date,
  runStartedAt: Date | undefined,
): Promise<ScopeCounts> {
  const { counters, feed, index, versions } = parts;
  const seen = new Set<string>();
  for (const b of batches) for (const id of decodeIds(b.seen)) seen.add(id);
  // A record another writer (an action's save) stored after this run began may be newer
  // than the listing the run saw: not this run's to call gone. (Without the run's start,
  // its first batch is the bound.)
  const began = Math.min(runStartedAt?.getTime() ?? Infinity, batches[0]?.created_at.getTime() ?? Infinity);
  const counts = { added: 0, updated: 0, deleted: 0, live: 0 };
  const missing: Array<{ _id: string; id: string; state: IndexedState; live_before_run: boolean }> = [];
  const cursor = versions.scan(scope, ['_id', 'id', 'hash', 'first_seen_at', 'deleted_at', 'run_id', 'last_action', 'last_modified_at']);
  for await (const doc of cursor) {
    if (doc.run_id === runId) {
      if (doc.last_action === 'ADDED') counts.added += 1;
      else if (doc.last_action === 'UPDATED') counts.updated += 1;
      else counts.deleted += 1;
    }
    if (doc.deleted_at !== null) continue;
    // A record this run wrote was seen by it, even where its batch log omits seen ids.
    if (!seen.has(doc.id) && doc.run_id !== runId && doc.last_modified_at.getTime() < began)
      missing.push({ _id: doc._id, id: doc.id, state: { ...indexedStateOf(doc), deleted: true }, live_before_run: true });
    else counts.live += 1;
  }
  if (missing.length) {
    // A scope not indexed yet (written before the index existed) is indexed by its next writer.
    const chunkId = indexed ? index.newChunkId(scopeKey(scope)) : undefined;
    const { first: seq, at } = await counters.reserveSeq(scope, 1, chunkId, now);
    // The whole set shares one seq; the cursor breaks ties by id.
    await feed.append(
      scopeKey(scope),
      missing.map((m) => ({ id: m.id, seq, at })),
    );
    await versions.markDeleted(missing, runId, seq, now);
    if (chunkId) await index.writeChunk(chunkId, scope, encodeEntries(missing.map((m) => [m.id, m.state] as const)));
    await counters.commitSeq(scope, seq);
    counts.deleted += missing.length;
  }
  return counts;
}
