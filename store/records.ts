import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import { canonicalHash } from './canonical-hash';
import { RecordFeed, feedKey, positionOf, seqPrefix } from './record-feed';
import { RecordIndex, encodeEntries, fingerprintOf, indexedStateOf, type IndexedState, type IndexedStates } from './record-index';
import { readPage, type PageQuery, type RecordPage, type RecordPosition } from './record-pages';
import { serverTraits } from './server-traits';
import { ensureExpiry, type ExpiryRule } from './ttl';
import { prefixRange, timeKey, uniqueSuffix } from './key-range';
import { runOnce } from './migrations';
import type { RecordAction, RecordDoc, RecordScope } from './record-doc';

export type { RecordAction, RecordDoc, RecordScope } from './record-doc';

interface CounterDoc {
  _id: string;
  connection: string;
  model: string;
  variant: string;
  next: number;
  /** Every change with seq <= committed has been written: readers never look past it (nor past a hold). */
  committed: number;
  /**
   * Seqs an action's writer may be writing beside a sync's (RecordStore.saveNow), by hold
   * key: readers stop before the lowest `first` until the hold is released or expires
   * (`until`, epoch ms), since a sync's commit may pass seqs the action has not written yet.
   */
  holds?: Record<string, { first: number; until: number }>;
  /** Live records after the last finished run; absent when unknown (counted once then). */
  live?: number;
  /**
   * Runs that opened a writer since the last finish. Another run than the finishing one in
   * here (one that failed or was terminated after writing) means `live` is stale.
   */
  writers?: string[];
  /** The last finished run and what it changed, so a retried finish answers the same. */
  last_run?: { id: string; counts: Omit<ScopeCounts, 'live'> };
  /** Whether `index` lists every chunk of the scope's index; absent for a scope stored before the index existed. */
  indexed?: boolean;
  /**
   * The scope's index chunks in order (store/record-index.ts); absent means none. (Not
   * created empty: FerretDB 1.24 drops an empty array given to `$setOnInsert`.)
   */
  index?: string[];
  /** Chunks in the list after its last rewrite; the next rewrite is due at twice as many. */
  index_base?: number;
  /** Whether `record_feed` has an entry for every stored version; absent for a scope stored before the feed existed. */
  feed?: boolean;
  /** The `at` (epoch ms) of the scope's latest change: feed entries' `at` never decreases with seq. */
  last_at?: number;
  /**
   * A feed position every record whose current change is at or before it has been pruned:
   * the next prune reads on from there. (A record changed since has a later seq.)
   */
  pruned_to?: string;
}

/**
 * One batch of a run: the ids it saved (delete detection of a full run) and what it
 * changed, in order. A run's finish reads its own batches instead of scanning `records`.
 */
interface RunBatchDoc {
  /** batchKey(scope, run, time): a run's batches of a scope are one `_id` range, in the order they were logged. */
  _id: string;
  run_id: string;
  connection: string;
  model: string;
  variant: string;
  /** Omitted while the scope held nothing before the run: there is nothing to detect then. */
  seen?: string[];
  /** Ids by what the batch did to them (an id is in one list at most), plain ids to keep the log small. */
  added: string[];
  updated: string[];
  deleted: string[];
  /** Which of those ids were live before this run first changed them. */
  was_live: string[];
  created_at: Date;
}

interface RunChange {
  id: string;
  action: RecordAction;
  /** Whether the record was live before this run first changed it. */
  live_before: boolean;
}

export interface ScopeCounts {
  added: number;
  updated: number;
  deleted: number;
  live: number;
}

export interface IncomingRecord {
  id: string;
  data: Record<string, unknown>;
}

export type ListRecordsQuery = PageQuery;

/** A record's `_id`: unique per scope and id, and unambiguous (each part is encoded). */
export function recordKey(scope: Pick<RecordScope, 'connection' | 'model' | 'variant'>, id: string): string {
  return [scope.connection, scope.model, scope.variant, id].map(encodeURIComponent).join('|');
}

/** A stored record, as much of it as classifying a new version needs. */
type Existing = Pick<RecordDoc, '_id' | 'id' | 'hash' | 'deleted_at' | 'run_id' | 'last_action' | 'first_seen_at' | 'live_before_run'>;
const EXISTING_PROJECTION = { _id: 1, id: 1, hash: 1, deleted_at: 1, run_id: 1, last_action: 1, first_seen_at: 1, live_before_run: 1 } as const;

/** Ids per `$in` query or delete, documents per insertMany. */
const CHUNK = 1_000;
/** Feed entries one prune step reads. */
const PRUNE_WINDOW = 1_000;
/** How long a hold of an action's writer counts: one that outlives its writer (a crash) stops clamping then. */
const HOLD_MS = 30_000;
/** How long an action's writer waits for the writes reserved before its own to be committed; past it they count as a dead writer's gap. */
const HOLD_COMMIT_WAIT_MS = 5_000;

export interface PruneResult {
  /** Records whose payload this call dropped. */
  count: number;
  /** Whether records up to the position may remain unpruned (the call stopped at its limit). */
  hasMore: boolean;
}

/**
 * The records engine. Writes only what changed (by canonical hash), so a run over
 * unchanged data writes nothing to `records`; detects deletions at the end of a complete
 * full run from the ids that run saw; and pages by a per-scope sequence with a committed
 * high-water mark, so a reader paging while a sync writes never skips a record.
 *
 * It reads no record on the way of a run. What a writer must know of the stored versions
 * (content fingerprint, first seen, deleted) is kept per scope in a compact index of
 * chunks (store/record-index.ts) that a writer loads once; what a run changed is logged
 * per batch in `record_run_batches`; the live count is carried from run to run. A new
 * version of a stored record replaces it by delete and insert, a few statements for a
 * whole batch, with the new versions parked in `record_swaps` in between, so a crash loses
 * nothing. Only the delete detection of a full run over a non-empty scope reads the scope.
 *
 * One writer per scope at a time is assumed (Temporal never runs two attempts of one
 * sync together, barring a worker that lost its heartbeat but keeps running).
 */
export class RecordStore {
  private readonly col: Collection<RecordDoc>;
  private readonly counters: Collection<CounterDoc>;
  private readonly batches: Collection<RunBatchDoc>;
  /** @internal */
  readonly index: RecordIndex;
  /** @internal */
  readonly feed: RecordFeed;
  /** Feed backfills under way in this process, by scope: concurrent first reads wait for one scan instead of each making one. */
  private readonly feedBuilds = new Map<string, Promise<void>>();

  constructor(private readonly db: Db) {
    this.col = db.collection<RecordDoc>('records');
    this.counters = db.collection<CounterDoc>('record_counters');
    this.batches = db.collection<RunBatchDoc>('record_run_batches');
    this.index = new RecordIndex(db);
    this.feed = new RecordFeed(db);
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    // FerretDB never reads through secondary indexes, only pays for them on every insert.
    const secondary = !(await serverTraits(this.db)).indexedByIdOnly;
    if (secondary) {
      // Pages are read through record_feed now; this index served only the old scan.
      await this.col.dropIndex('connection_1_model_1_variant_1_seq_1_id_1').catch(() => undefined);
      // A scope's records, a run's batches and a scope's swaps are `_id` ranges now: these only cost writes.
      await this.col.dropIndex('connection_1_model_1_variant_1_deleted_at_1').catch(() => undefined);
      await this.batches.dropIndex('run_id_1_connection_1_model_1_variant_1').catch(() => undefined);
    }
    await runOnce(this.db, 'record_run_batches_by_key', () => this.moveBatchesToKeyedIds());
    await this.index.ensureIndexes(secondary);
    // Batches of runs that never finished are garbage after a few days.
    return [await ensureExpiry(this.batches, 'created_at', 3 * 86_400)];
  }

  /**
   * Batches logged by earlier versions had generated `_id`s and were found by a filter that
   * FerretDB answers by reading the whole collection: each moves to its batchKey (a copy
   * first, then the original goes). Batches live only while their run does, so there are few.
   */
  private async moveBatchesToKeyedIds(): Promise<void> {
    for await (const doc of this.batches.find({})) {
      if (typeof doc._id === 'string') continue;
      const key = batchKey(doc, doc.run_id, doc.created_at);
      await this.batches.insertOne({ ...doc, _id: key }).catch((err: unknown) => {
        if (!(err instanceof Error && 'code' in err && err.code === 11000)) throw err;
      });
      await this.batches.deleteOne({ _id: doc._id });
    }
  }

  /**
   * A writer for one scope and run. It puts back what a crashed writer left half swapped,
   * then loads the scope's index, unless the scope has never held a record (a first run:
   * every record is new, and nothing needs holding in memory).
   */
  async openWriter(scope: RecordScope, runId: string, options: { hold?: boolean } = {}): Promise<RecordWriter> {
    const counter = await this.counters.findOneAndUpdate(
      { _id: counterId(scope) },
      { $addToSet: { writers: runId }, $setOnInsert: { ...counterScope(scope), next: 0, committed: 0, live: 0, indexed: true, feed: true } },
      { upsert: true, returnDocument: 'after' },
    );
    await this.repairSwaps(scope);
    if (!counter?.feed) await this.buildFeed(scope);
    const chunkIds = counter?.indexed ? (counter.index ?? []) : await this.buildIndex(scope);
    const holdKey = options.hold ? `h${uniqueSuffix()}` : undefined;
    if (chunkIds.length === 0) return new RecordWriter(this, scope, runId, null, new Map(), holdKey);
    const [known, ours] = await Promise.all([this.index.load(chunkIds), this.runChanges(scope, runId)]);
    return new RecordWriter(this, scope, runId, known, ours, holdKey);
  }

  /**
   * Saves records an action wrote to the provider as one small run of their own (`runId`),
   * visible at once: same classification and hash as a sync's writer, so the sync's next
   * run finds them unchanged. Safe beside a sync run writing the same scope: the writer
   * holds its seqs (readers stop before them until they are written) and commits only once
   * every seq reserved before its own is. Its run never finishes: it stays among the
   * scope's `writers`, so the next finish counts the live records instead of carrying them.
   */
  async saveNow(scope: RecordScope, runId: string, records: IncomingRecord[]): Promise<{ added: number; updated: number; unchanged: number }> {
    const writer = await this.openWriter(scope, runId, { hold: true });
    let counts;
    try {
      counts = await writer.saveBatch(records);
    } catch (err) {
      // Failed half-way: its seqs are a dead writer's gap now, not a reason to hold readers back.
      if (writer.holdKey) await this.counters.updateOne({ _id: counterId(scope) }, { $unset: { [`holds.${writer.holdKey}`]: '' } }).catch(() => undefined);
      throw err;
    }
    // Its batch log serves only a finish, which this run never has.
    await this.batches.deleteMany(batchRange(scope, runId));
    return counts;
  }

  /** @internal Holds every seq after the scope's current `next` for an action's writer (see CounterDoc.holds). */
  async placeHold(scope: RecordScope, key: string, now = Date.now()): Promise<void> {
    // A sync may reserve and commit between the read and the hold: readers then stop short
    // of seqs they could see for a moment, which delays, never skips.
    const counter = await this.counters.findOne({ _id: counterId(scope) }, { projection: { next: 1 } });
    await this.counters.updateOne({ _id: counterId(scope) }, { $set: { [`holds.${key}`]: { first: (counter?.next ?? 0) + 1, until: now + HOLD_MS } } });
  }

  /**
   * @internal Commits an action writer's seqs `first..upTo` and releases its hold, once every
   * seq before `first` is committed (a sync's batch in flight below it is not exposed unwritten).
   */
  async commitHeld(scope: RecordScope, key: string, first: number, upTo: number): Promise<void> {
    const release = { $max: { committed: upTo }, $unset: { [`holds.${key}`]: '' as const } };
    const deadline = Date.now() + HOLD_COMMIT_WAIT_MS;
    while (Date.now() < deadline) {
      const done = await this.counters.updateOne({ _id: counterId(scope), committed: { $gte: first - 1 } }, release);
      if (done.matchedCount === 1) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await this.counters.updateOne({ _id: counterId(scope) }, release);
  }

  /** Redoes every swap of the scope a crashed writer left: the parked versions are the newest. */
  private async repairSwaps(scope: RecordScope): Promise<void> {
    for (const swap of await this.index.leftoverSwaps(counterId(scope))) {
      // Their feed entries were written before the swap began (a swap parked by a version
      // before the feed is covered by the backfill that follows in openWriter). Appending a
      // subset of a batch again would make a pack overlapping the batch's own.
      await this.replaceVersions(swap.id, scope, swap.docs, swap.entries);
    }
  }

  /**
   * Writes the feed of a scope stored before the feed existed (one scan), then flags it.
   * Safe beside a running writer and another builder: entries already there are kept, and
   * an entry for a version the writer has replaced meanwhile is merely superseded.
   */
  private buildFeed(scope: RecordScope): Promise<void> {
    const key = counterId(scope);
    let build = this.feedBuilds.get(key);
    if (!build) {
      build = this.scanIntoFeed(scope).finally(() => this.feedBuilds.delete(key));
      this.feedBuilds.set(key, build);
    }
    return build;
  }

  private async scanIntoFeed(scope: RecordScope): Promise<void> {
    // Only below what the feed already has and what was committed when the build began: the
    // feed's packs must not overlap, and any version at or above either was appended by the
    // writer that wrote it (this version of Weft appends before it commits).
    const committed = (await this.counters.findOne({ _id: counterId(scope) }))?.committed ?? 0;
    const firstInFeed = (await this.feed.firstSeq(counterId(scope))) ?? Infinity;
    const docs = (await this.col.find(scopeRange(scope), { projection: { _id: 0, id: 1, seq: 1, last_modified_at: 1 } }).toArray()).filter(
      (d) => d.seq <= committed && d.seq < firstInFeed,
    );
    docs.sort((a, b) => a.seq - b.seq);
    // `at` must not decrease with seq: a running maximum of the stored times.
    let at = 0;
    const changes = docs.map((d) => ({ id: d.id, seq: d.seq, at: (at = Math.max(at, d.last_modified_at.getTime())) }));
    // One entry per pack: a backfill racing another one (another process) makes the same packs.
    await this.feed.append(counterId(scope), changes, { single: true });
    await this.counters.updateOne({ _id: counterId(scope) }, { $set: { feed: true }, $max: { last_at: at } });
  }

  /** Indexes a scope written before the index existed (one scan), and lists the chunks on its counter. */
  private async buildIndex(scope: RecordScope): Promise<string[]> {
    const states = async function* (cursor: AsyncIterable<Pick<RecordDoc, 'id' | 'hash' | 'first_seen_at' | 'deleted_at'>>) {
      for await (const doc of cursor) yield [doc.id, indexedStateOf(doc)] as const;
    };
    const cursor = this.col.find(scopeRange(scope), { projection: { id: 1, hash: 1, first_seen_at: 1, deleted_at: 1 } });
    const ids: string[] = [];
    for await (const id of this.index.writeChunksFrom(counterId(scope), scope, states(cursor))) ids.push(id);
    const set = await this.counters.updateOne({ _id: counterId(scope), indexed: { $ne: true } }, { $set: { indexed: true, index: ids } });
    if (set.modifiedCount === 1) return ids;
    await this.index.deleteChunks(ids); // another writer indexed it first
    return (await this.counters.findOne({ _id: counterId(scope) }))?.index ?? [];
  }

  /** What this run changed in the scope so far (earlier attempts), from its batch log. */
  private async runChanges(scope: RecordScope, runId: string): Promise<Map<string, RunChange>> {
    return mergeBatches(await this.batches.find(batchRange(scope, runId)).sort({ _id: 1 }).toArray());
  }

  /** @internal The stored versions of `ids` in `scope`, by id. */
  async fetchExisting(scope: RecordScope, ids: string[]): Promise<Map<string, Existing>> {
    const out = new Map<string, Existing>();
    const keys = ids.map((id) => recordKey(scope, id));
    for (let i = 0; i < keys.length; i += CHUNK) {
      for await (const doc of this.col.find({ _id: { $in: keys.slice(i, i + CHUNK) } }, { projection: EXISTING_PROJECTION })) out.set(doc.id, doc as Existing);
    }
    return out;
  }

  /**
   * @internal Inserts new records; returns the ids that already existed (duplicate `_id`),
   * which the caller handles as updates.
   */
  async insertNew(docs: RecordDoc[]): Promise<Set<string>> {
    const duplicates = new Set<string>();
    for (let i = 0; i < docs.length; i += CHUNK) {
      const chunk = docs.slice(i, i + CHUNK);
      try {
        await this.col.insertMany(chunk, { ordered: false });
      } catch (err) {
        if (!(err instanceof MongoBulkWriteError)) throw err;
        const errors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
        for (const e of errors) {
          if (e.code !== 11000) throw err;
          duplicates.add(chunk[e.index].id);
        }
      }
    }
    return duplicates;
  }

  /**
   * @internal Replaces stored records by new versions, and writes the batch's index chunk:
   * park the new versions, delete the old, insert the new, drop the parked copy. On
   * FerretDB a delete and an insert of a whole batch cost a third of one update per record.
   */
  async replaceVersions(chunkId: string, scope: RecordScope, docs: RecordDoc[], entries: string): Promise<void> {
    await this.index.putSwap(chunkId, scope, docs, entries);
    const keys = docs.map((d) => d._id);
    for (let i = 0; i < keys.length; i += CHUNK) await this.col.deleteMany({ _id: { $in: keys.slice(i, i + CHUNK) } });
    const duplicates = await this.insertNew(docs);
    if (duplicates.size) throw new Error(`records of ${counterId(scope)} were written by another writer during a swap (${duplicates.size})`);
    await this.index.writeChunk(chunkId, scope, entries);
    await this.index.dropSwap(chunkId);
  }

  /** @internal Marks records deleted by `_id`. */
  async markDeleted(targets: Array<{ _id: string; live_before_run: boolean }>, runId: string, seq: number, now: Date): Promise<void> {
    for (const liveBefore of [true, false]) {
      const keys = targets.filter((t) => t.live_before_run === liveBefore).map((t) => t._id);
      for (let i = 0; i < keys.length; i += CHUNK) {
        await this.col.updateMany(
          { _id: { $in: keys.slice(i, i + CHUNK) } },
          { $set: { deleted_at: now, last_modified_at: now, last_action: 'DELETED' as const, seq, run_id: runId, live_before_run: liveBefore } },
        );
      }
    }
  }

  /** @internal Logs a batch of a run (see RunBatchDoc). */
  async logBatch(scope: RecordScope, runId: string, seen: string[] | undefined, changes: RunChange[]): Promise<void> {
    if (!seen?.length && changes.length === 0) return;
    const ids = (action: RecordAction) => changes.filter((c) => c.action === action).map((c) => c.id);
    const at = new Date();
    await this.batches.insertOne({
      _id: batchKey(scope, runId, at),
      run_id: runId,
      ...counterScope(scope),
      ...(seen ? { seen } : {}),
      added: ids('ADDED'),
      updated: ids('UPDATED'),
      deleted: ids('DELETED'),
      was_live: changes.filter((c) => c.live_before).map((c) => c.id),
      created_at: at,
    });
  }

  /**
   * Closes a run's scope: marks as deleted every live record a complete full run did not
   * see (only call with detectDeletes after a complete run), and returns what the run
   * changed and how many records are live. Safe to repeat. `runStartedAt`: what another
   * writer (an action's save) stored since then is not deleted for being unseen.
   */
  async finishScope(scope: RecordScope, runId: string, detectDeletes: boolean, now = new Date(), runStartedAt?: Date): Promise<ScopeCounts> {
    const counter = await this.counters.findOne({ _id: counterId(scope) });
    if (counter?.last_run?.id === runId && counter.live !== undefined) return { ...counter.last_run.counts, live: counter.live };

    const batches = await this.batches.find(batchRange(scope, runId)).sort({ _id: 1 }).toArray();
    const liveKnown = liveIsKnown(counter, runId);
    // Nothing live before the run means nothing for delete detection to find.
    const needsScan = detectDeletes && !(liveKnown && counter?.live === 0);
    const counts = needsScan
      ? await this.detectDeletes(scope, runId, batches, counter?.indexed === true, now, runStartedAt)
      : await this.countFromBatches(scope, liveKnown ? counter : null, batches);

    const { live, ...changes } = counts;
    // The live count is exact again (carried, counted or scanned): no stale writers remain.
    await this.counters.updateOne(
      { _id: counterId(scope) },
      { $set: { live, writers: [], last_run: { id: runId, counts: changes } }, $setOnInsert: { ...counterScope(scope), next: 0, committed: 0, feed: true } },
      { upsert: true },
    );
    await this.batches.deleteMany(batchRange(scope, runId));
    await this.compactIndex(scope);
    return counts;
  }

  /**
   * Rewrites the scope's index as one entry per record once its chunk list has grown past
   * twice its size after the last rewrite (each batch adds a chunk), so loading it stays
   * proportional to the scope. Gives way if a writer added a chunk meanwhile.
   */
  private async compactIndex(scope: RecordScope): Promise<void> {
    const counter = await this.counters.findOne({ _id: counterId(scope) });
    if (!counter?.indexed) return;
    const chunkIds = counter.index ?? [];
    if (counter.index_base === undefined) {
      await this.counters.updateOne({ _id: counter._id }, { $set: { index_base: chunkIds.length } });
      return;
    }
    if (chunkIds.length <= 2 * counter.index_base + 8) return;
    const states = await this.index.load(chunkIds);
    const rewritten: string[] = [];
    for await (const id of this.index.writeChunksFrom(counter._id, scope, states.entries())) rewritten.push(id);
    const swapped = await this.counters.updateOne({ _id: counter._id, next: counter.next }, { $set: { index: rewritten, index_base: rewritten.length } });
    await this.index.deleteChunks(swapped.modifiedCount === 1 ? chunkIds : rewritten);
  }

  /** The run's changes from its own batch log; the live count carried from the last run (when `known`). */
  private async countFromBatches(scope: RecordScope, known: CounterDoc | null, batches: RunBatchDoc[]): Promise<ScopeCounts> {
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
      for await (const doc of this.col.find(scopeRange(scope), { projection: { _id: 0, deleted_at: 1 } })) if (doc.deleted_at === null) counts.live += 1;
    }
    return counts;
  }

  /** One pass over the scope: marks the unseen live records deleted and counts exactly. */
  private async detectDeletes(
    scope: RecordScope,
    runId: string,
    batches: RunBatchDoc[],
    indexed: boolean,
    now: Date,
    runStartedAt: Date | undefined,
  ): Promise<ScopeCounts> {
    const seen = new Set<string>();
    for (const b of batches) for (const id of b.seen ?? []) seen.add(id);
    // A record another writer (an action's save) stored after this run began may be newer
    // than the listing the run saw: not this run's to call gone. (Without the run's start,
    // its first batch is the bound.)
    const began = Math.min(runStartedAt?.getTime() ?? Infinity, batches[0]?.created_at.getTime() ?? Infinity);
    const counts = { added: 0, updated: 0, deleted: 0, live: 0 };
    const missing: Array<{ _id: string; id: string; state: IndexedState; live_before_run: boolean }> = [];
    const cursor = this.col.find(scopeRange(scope), {
      projection: { _id: 1, id: 1, hash: 1, first_seen_at: 1, deleted_at: 1, run_id: 1, last_action: 1, last_modified_at: 1 },
    });
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
      const chunkId = indexed ? this.index.newChunkId(counterId(scope)) : undefined;
      const { first: seq, at } = await this.reserveSeq(scope, 1, chunkId, now);
      // The whole set shares one seq; the cursor breaks ties by id.
      await this.feed.append(
        counterId(scope),
        missing.map((m) => ({ id: m.id, seq, at })),
      );
      await this.markDeleted(missing, runId, seq, now);
      if (chunkId) await this.index.writeChunk(chunkId, scope, encodeEntries(missing.map((m) => [m.id, m.state] as const)));
      await this.commitSeq(scope, seq);
      counts.deleted += missing.length;
    }
    return counts;
  }

  /** The scope's committed change mark (0 before its first change): every later change has a higher seq. */
  async committedSeq(scope: RecordScope): Promise<number> {
    const counter = await this.counters.findOne({ _id: counterId(scope) }, { projection: { committed: 1, holds: 1 } });
    return counter ? visibleSeq(counter) : 0;
  }

  /**
   * A page of the scope's records in change order, up to its committed mark: O(page) reads
   * by `_id` only (see store/record-pages.ts). A scope stored before the feed existed gets
   * its feed written by its first reader (or writer), once.
   */
  async list(scope: RecordScope, q: ListRecordsQuery): Promise<RecordPage> {
    const counter = await this.counters.findOne({ _id: counterId(scope) });
    if (!counter) return { records: [], next: null };
    if (!counter.feed && !q.ids) await this.buildFeed(scope);
    const source = {
      feed: this.feed,
      recordKey: (id: string) => recordKey(scope, id),
      fetch: (keys: string[]) => this.fetchByKeys(keys),
    };
    return readPage(source, counterId(scope), scope.environment, visibleSeq(counter), q);
  }

  /**
   * Drops the payloads of the scope's records up to `until` (inclusive) in change order, the
   * order `GET /records` pages in: their ids, hash and metadata stay. At most `limit` records
   * per call. Reads the feed by `_id` ranges from where the last prune stopped and the
   * records by `_id $in`; each write is by `_id` and the seq read, so a version a sync
   * writes meanwhile (a later seq, past `until`) keeps its payload. Pruned records are
   * skipped, so calling it again changes nothing.
   */
  async prune(scope: RecordScope, until: RecordPosition, limit: number, now = new Date()): Promise<PruneResult> {
    const counter = await this.counters.findOne({ _id: counterId(scope) });
    if (!counter) return { count: 0, hasMore: false };
    if (!counter.feed) await this.buildFeed(scope);
    const scopeKey = counterId(scope);
    // Inclusive: every key of `until` itself sorts before it with a NUL appended.
    const untilKey = feedKey(scopeKey, until.seq, until.id) + '\u0000';
    const committedEnd = seqPrefix(scopeKey, visibleSeq(counter) + 1);
    const end = untilKey < committedEnd ? untilKey : committedEnd;
    let pos = counter.pruned_to && counter.pruned_to > seqPrefix(scopeKey, 0) ? counter.pruned_to : seqPrefix(scopeKey, 0);
    let count = 0;
    for (;;) {
      const entries = await this.feed.window(scopeKey, pos, end, PRUNE_WINDOW);
      const changes = entries.map((e) => ({ key: e._id, ...positionOf(scopeKey, e._id) }));
      const records = await this.fetchByKeys(changes.map((c) => recordKey(scope, c.id)));
      const targets: RecordDoc[] = [];
      for (const change of changes) {
        if (count + targets.length >= limit) break;
        pos = change.key;
        const record = records.get(recordKey(scope, change.id));
        // Another seq: a superseded entry (the record's current change has its own) or one not written.
        if (record?.seq === change.seq && record.environment === scope.environment && !record.pruned_at) targets.push(record);
      }
      if (targets.length) {
        const written = await this.col.bulkWrite(
          targets.map((r) => ({ updateOne: { filter: { _id: r._id, seq: r.seq }, update: { $set: { data: {}, pruned_at: now } } } })),
          { ordered: false },
        );
        count += written.modifiedCount;
      }
      await this.markPrunedTo(scopeKey, pos, counter.pruned_to);
      if (count >= limit) return { count, hasMore: (await this.feed.first(scopeKey, pos, end)) !== undefined };
      if (entries.length < PRUNE_WINDOW) return { count, hasMore: false };
    }
  }

  /** Moves the scope's prune mark forward (a race that moves it back only costs a later prune a re-read). */
  private async markPrunedTo(scopeKey: string, pos: string, previous: string | undefined): Promise<void> {
    if (previous !== undefined && pos <= previous) return;
    await this.counters.updateOne({ _id: scopeKey }, { $set: { pruned_to: pos } });
  }

  /** Records by `_id`, read with nothing but `{_id: {$in}}` (what FerretDB reads through its index). */
  private async fetchByKeys(keys: string[]): Promise<Map<string, RecordDoc>> {
    const out = new Map<string, RecordDoc>();
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += CHUNK) {
      const chunk = unique.slice(i, i + CHUNK);
      // At most one document per key: with that as the limit and the batch size, the server
      // answers in one reply and closes the cursor (no getMore round trip to learn the end).
      for (const doc of await this.col
        .find({ _id: { $in: chunk } })
        .limit(chunk.length)
        .batchSize(chunk.length)
        .toArray())
        out.set(doc._id, doc);
    }
    return out;
  }

  /** Drops cached records (connection deleted, or a reset with emptyCache); sequences keep counting up. */
  async deleteScope(scope: Omit<RecordScope, 'model' | 'variant'> & { model?: string; variant?: string }): Promise<void> {
    // Every key of the connection starts with its id, of a model with both: `_id` ranges. A
    // variant across models is no key prefix: one range per scope of it, from the counters.
    const prefixes =
      scope.variant && !scope.model
        ? (await this.counters.find({ _id: prefixRange(feedPrefix(scope)) }, { projection: { _id: 1, variant: 1 } }).toArray())
            .filter((c) => c.variant === scope.variant)
            .map((c) => c._id)
        : [feedPrefix(scope)];
    for (const prefix of prefixes) {
      await this.col.deleteMany({ _id: prefixRange(prefix) });
      await this.feed.deletePrefix(prefix);
      // Nothing left: the index and the feed are exact again as empty ones.
      await this.counters.updateMany(
        { _id: prefixRange(prefix) },
        { $set: { live: 0, writers: [], indexed: true, feed: true }, $unset: { last_run: '', index: '', index_base: '' } },
      );
      await this.index.deleteScope(prefix);
    }
  }

  /**
   * @internal First of `count` new sequence numbers of the scope, and the `at` of their
   * feed entries: `now`, or the scope's latest `at` if the clock is behind it (so `at`
   * never decreases with seq). With `chunkId`, also lists that index chunk on the scope
   * (before it is written: a listed chunk that never got written is skipped by readers).
   */
  async reserveSeq(scope: RecordScope, count: number, chunkId: string | undefined, now: Date): Promise<{ first: number; at: number }> {
    const doc = await this.counters.findOneAndUpdate(
      { _id: counterId(scope) },
      // A scope's first write creates its counter: nothing was live before, no feed to build.
      {
        $inc: { next: count },
        $max: { last_at: now.getTime() },
        ...(chunkId ? { $push: { index: chunkId } } : {}),
        $setOnInsert: { ...counterScope(scope), committed: 0, live: 0, feed: true },
      },
      { upsert: true, returnDocument: 'after' },
    );
    const counter = doc as CounterDoc;
    return { first: counter.next - count + 1, at: counter.last_at ?? now.getTime() };
  }

  /** @internal Readers may now see every change up to `upTo`. */
  async commitSeq(scope: RecordScope, upTo: number): Promise<void> {
    await this.counters.updateOne({ _id: counterId(scope) }, { $max: { committed: upTo } });
  }
}

/** How far readers may read: the committed mark, short of the lowest live hold of an action's writer. */
function visibleSeq(counter: Pick<CounterDoc, 'committed' | 'holds'>, now = Date.now()): number {
  let visible = counter.committed;
  for (const hold of Object.values(counter.holds ?? {})) if (hold.until > now) visible = Math.min(visible, hold.first - 1);
  return visible;
}

/** A scope's records: their `_id`s (recordKey) share the scope's key as prefix. */
function scopeRange(scope: RecordScope) {
  return { _id: prefixRange(counterId(scope)) };
}

/**
 * What a writer knows of a record before writing a new version: its stored state (from the
 * index, or from the record itself), and what this run already did to it, if anything.
 */
interface Prior {
  state: IndexedState;
  ours?: RunChange;
  /** Read from the record (the index lacked it): the index learns it from this batch. */
  fromRecord?: boolean;
}

/**
 * What writing a new version does, given the prior: a new record, a deleted one back,
 * or one added earlier in this run and changed again is an addition; anything else an
 * update. `liveBefore` is the record's state before this run first changed it.
 */
function classifyChange(prior: Prior | undefined): { action: 'ADDED' | 'UPDATED'; liveBefore: boolean } {
  const liveBefore = prior?.ours ? prior.ours.live_before : prior !== undefined && !prior.state.deleted;
  const action = !prior || prior.state.deleted || prior.ours?.action === 'ADDED' ? 'ADDED' : 'UPDATED';
  return { action, liveBefore };
}

/** A run's batch log merged: the last entry of each id wins. */
function mergeBatches(batches: RunBatchDoc[]): Map<string, RunChange> {
  const last = new Map<string, RunChange>();
  for (const b of batches) {
    const wasLive = new Set(b.was_live);
    for (const action of ['ADDED', 'UPDATED', 'DELETED'] as const) {
      for (const id of b[action.toLowerCase() as 'added' | 'updated' | 'deleted']) last.set(id, { id, action, live_before: wasLive.has(id) });
    }
  }
  return last;
}

/** A run's batch of a scope: the scope's key, the run, then the time it was logged (so `_id` order is log order). */
function batchKey(scope: Pick<RecordScope, 'connection' | 'model' | 'variant'>, runId: string, at: Date): string {
  return `${batchPrefix(scope, runId)}${timeKey(at)}|${uniqueSuffix()}`;
}

function batchPrefix(scope: Pick<RecordScope, 'connection' | 'model' | 'variant'>, runId: string): string {
  return `${recordKey(scope, '')}${encodeURIComponent(runId)}|`;
}

function batchRange(scope: RecordScope, runId: string) {
  return { _id: prefixRange(batchPrefix(scope, runId)) };
}

/** Whether `live` describes the scope as this run found it (no other run wrote since the last finish). */
function liveIsKnown(counter: CounterDoc | null, runId: string): boolean {
  return counter?.live !== undefined && (counter.writers ?? []).every((w) => w === runId);
}

function counterId(scope: RecordScope): string {
  return recordKey(scope, '');
}

/** The feed key prefix of a connection, or of its model, or of one scope (the parts given, in key order). */
function feedPrefix(scope: { connection: string; model?: string; variant?: string }): string {
  const parts = [scope.connection];
  if (scope.model) {
    parts.push(scope.model);
    if (scope.variant) parts.push(scope.variant);
  }
  return `${parts.map(encodeURIComponent).join('|')}|`;
}

function counterScope(scope: RecordScope) {
  return { connection: scope.connection, model: scope.model, variant: scope.variant };
}

interface Hashed {
  record: IncomingRecord;
  hash: string;
}

/** What a batch will write, from the priors of its records. */
interface BatchPlan {
  inserts: RecordDoc[];
  replacements: RecordDoc[];
  changes: RunChange[];
  /** Unchanged records whose prior came from the record itself, not the index: the index learns them. */
  unindexed: Array<[string, IndexedState]>;
}

/** Writes one scope's records during one run attempt; see RecordStore.openWriter. */
class RecordWriter {
  constructor(
    private readonly store: RecordStore,
    private readonly scope: RecordScope,
    private readonly runId: string,
    /** The scope's index, kept current; null while the scope has held nothing: every record is new. */
    private readonly known: IndexedStates | null,
    /** What this run changed so far (its log, and this attempt's batches), kept alongside `known`. */
    private readonly ours: Map<string, RunChange>,
    /** An action's writer beside a sync's: the key it holds its seqs under while writing (RecordStore.saveNow). */
    readonly holdKey?: string,
  ) {}

  /** Saves a batch; returns what changed. Safe to repeat (a retried page changes nothing twice). */
  async saveBatch(records: IncomingRecord[], now = new Date()): Promise<{ added: number; updated: number; unchanged: number }> {
    const latest = new Map<string, IncomingRecord>();
    for (const r of records) latest.set(r.id, r); // within a batch the last version wins
    const hashed = [...latest.values()].map((record): Hashed => ({ record, hash: canonicalHash(record.data) }));
    // Seen ids matter only to delete detection, which has nothing to find in a scope that was empty.
    const seen = this.known ? [...latest.keys()] : undefined;

    let plan = this.plan(hashed, (id) => this.priorFromIndex(id), now);
    const written = plan.inserts.length + plan.replacements.length;
    if (written === 0) {
      await this.store.logBatch(this.scope, this.runId, seen, plan.changes);
      return { added: 0, updated: 0, unchanged: latest.size };
    }

    const chunkId = this.store.index.newChunkId(counterId(this.scope));
    const holdKey = this.holdKey;
    if (holdKey) await this.store.placeHold(this.scope, holdKey);
    const { first: firstSeq, at } = await this.store.reserveSeq(this.scope, written, chunkId, now);
    const seqById = new Map([...plan.inserts, ...plan.replacements].map((doc, i) => [doc.id, (doc.seq = firstSeq + i)]));
    // The feed first: a version written but never in the feed would be invisible to readers.
    await this.store.feed.append(
      counterId(this.scope),
      [...seqById].map(([id, seq]) => ({ id, seq, at })),
    );
    const duplicates = await this.store.insertNew(plan.inserts);
    if (duplicates.size) {
      // Believed new but stored after all: written by an earlier attempt of this run, or by a
      // run that crashed before indexing them. Classify them against the stored versions.
      const stored = await this.store.fetchExisting(this.scope, [...duplicates]);
      const again = this.plan(
        hashed.filter((h) => duplicates.has(h.record.id)),
        (id) => this.priorFromRecord(stored.get(id)),
        now,
      );
      for (const doc of again.replacements) doc.seq = seqById.get(doc.id)!;
      plan = {
        inserts: plan.inserts.filter((d) => !duplicates.has(d.id)),
        replacements: [...plan.replacements, ...again.replacements],
        changes: [...plan.changes.filter((c) => !duplicates.has(c.id)), ...again.changes],
        unindexed: again.unindexed,
      };
    }
    // The log goes first: a retry that finds these versions already stored still counts them as this run's.
    await this.store.logBatch(this.scope, this.runId, seen, plan.changes);
    const states: Array<[string, IndexedState]> = [...plan.inserts, ...plan.replacements].map((doc) => [doc.id, indexedStateOf(doc)]);
    states.push(...plan.unindexed);
    const entries = encodeEntries(states);
    if (plan.replacements.length) await this.store.replaceVersions(chunkId, this.scope, plan.replacements, entries);
    else await this.store.index.writeChunk(chunkId, this.scope, entries);
    if (holdKey) await this.store.commitHeld(this.scope, holdKey, firstSeq, firstSeq + written - 1);
    else await this.store.commitSeq(this.scope, firstSeq + written - 1);

    this.remember(states, plan.changes);
    const added = [...plan.inserts, ...plan.replacements].filter((d) => d.last_action === 'ADDED').length;
    const updated = plan.inserts.length + plan.replacements.length - added;
    return { added, updated, unchanged: latest.size - added - updated };
  }

  private priorFromIndex(id: string): Prior | undefined {
    const state = this.known?.get(id);
    return state ? { state, ours: this.ours.get(id) } : undefined;
  }

  private priorFromRecord(doc: Existing | undefined): Prior | undefined {
    if (!doc) return undefined;
    const ours = doc.run_id === this.runId ? { id: doc.id, action: doc.last_action, live_before: doc.live_before_run } : this.ours.get(doc.id);
    return { state: indexedStateOf(doc), ours, fromRecord: true };
  }

  private plan(hashed: Hashed[], priorOf: (id: string) => Prior | undefined, now: Date): BatchPlan {
    const plan: BatchPlan = { inserts: [], replacements: [], changes: [], unindexed: [] };
    for (const { record, hash } of hashed) {
      const prior = priorOf(record.id);
      if (prior && !prior.state.deleted && prior.state.fingerprint === fingerprintOf(hash)) {
        // Unchanged now; if this run made it so, the change is logged again (logs are merged, last wins).
        if (prior.ours) plan.changes.push(prior.ours);
        if (prior.fromRecord) plan.unindexed.push([record.id, prior.state]);
        continue;
      }
      const { action, liveBefore } = classifyChange(prior);
      const doc: RecordDoc = {
        _id: recordKey(this.scope, record.id),
        ...this.scope,
        id: record.id,
        data: record.data,
        hash,
        first_seen_at: prior ? new Date(prior.state.firstSeenAt) : now,
        last_modified_at: now,
        deleted_at: null,
        last_action: action,
        seq: 0,
        run_id: this.runId,
        live_before_run: liveBefore,
      };
      (prior ? plan.replacements : plan.inserts).push(doc);
      plan.changes.push({ id: record.id, action, live_before: liveBefore });
    }
    return plan;
  }

  /** Keeps the in-memory index and run log current (not while the scope started empty: nothing to look up then). */
  private remember(states: Array<[string, IndexedState]>, changes: RunChange[]): void {
    if (!this.known) return;
    for (const [id, state] of states) this.known.set(id, state);
    for (const c of changes) this.ours.set(c.id, c);
  }

  /** Explicit deletions from ctx.batchDelete; ids the scope never had are ignored. */
  async deleteByIds(ids: string[], now = new Date()): Promise<number> {
    const existing = await this.store.fetchExisting(this.scope, [...new Set(ids)]);
    const live = [...existing.values()].filter((e) => e.deleted_at === null);
    if (live.length === 0) return 0;
    const targets = live.map((e) => ({ _id: e._id, id: e.id, live_before_run: e.run_id === this.runId ? e.live_before_run : true }));
    const changes = targets.map((t): RunChange => ({ id: t.id, action: 'DELETED', live_before: t.live_before_run }));
    const states = live.map((e): [string, IndexedState] => [e.id, { ...indexedStateOf(e), deleted: true }]);
    const chunkId = this.store.index.newChunkId(counterId(this.scope));
    const { first: seq, at } = await this.store.reserveSeq(this.scope, 1, chunkId, now);
    await this.store.logBatch(this.scope, this.runId, [], changes);
    await this.store.feed.append(
      counterId(this.scope),
      targets.map((t) => ({ id: t.id, seq, at })),
    );
    await this.store.markDeleted(targets, this.runId, seq, now);
    await this.store.index.writeChunk(chunkId, this.scope, encodeEntries(states));
    await this.store.commitSeq(this.scope, seq);
    this.remember(states, changes);
    return targets.length;
  }
}
