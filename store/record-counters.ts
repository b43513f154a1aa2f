import type { Collection, Db } from 'mongodb';
import { prefixRange } from './key-range';
import type { RecordScope } from './record-doc';
import { partialScopeKey, scopeFields, scopeKey } from './record-keys';

export interface ScopeCounts {
  added: number;
  updated: number;
  deleted: number;
  live: number;
}

/** One document per scope (`_id` = its scope key): its sequence, what readers may see, and what its runs left. */
export interface CounterDoc {
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

/** How long a hold of an action's writer counts: one that outlives its writer (a crash) stops clamping then. */
const HOLD_MS = 30_000;
/** How long an action's writer waits for the writes reserved before its own to be committed; past it they count as a dead writer's gap. */
const HOLD_COMMIT_WAIT_MS = 5_000;

/**
 * The scopes' counters (`record_counters`): every write of a counter goes through here. A
 * writer reserves seqs and commits them; readers read up to the visible mark.
 */
export class RecordCounters {
  private readonly col: Collection<CounterDoc>;

  constructor(db: Db) {
    this.col = db.collection<CounterDoc>('record_counters');
  }

  get(scope: RecordScope): Promise<CounterDoc | null> {
    return this.col.findOne({ _id: scopeKey(scope) });
  }

  /** Lists a run among the scope's writers (creating the counter of a scope never written: empty, indexed, fed). */
  async addWriter(scope: RecordScope, runId: string): Promise<CounterDoc | null> {
    return this.col.findOneAndUpdate(
      { _id: scopeKey(scope) },
      { $addToSet: { writers: runId }, $setOnInsert: { ...scopeFields(scope), next: 0, committed: 0, live: 0, indexed: true, feed: true } },
      { upsert: true, returnDocument: 'after' },
    );
  }

  /**
   * First of `count` new sequence numbers of the scope, and the `at` of their feed entries:
   * `now`, or the scope's latest `at` if the clock is behind it (so `at` never decreases
   * with seq). With `chunkId`, also lists that index chunk on the scope (before it is
   * written: a listed chunk that never got written is skipped by readers).
   */
  async reserveSeq(scope: RecordScope, count: number, chunkId: string | undefined, now: Date): Promise<{ first: number; at: number }> {
    const doc = await this.col.findOneAndUpdate(
      { _id: scopeKey(scope) },
      // A scope's first write creates its counter: nothing was live before, no feed to build.
      {
        $inc: { next: count },
        $max: { last_at: now.getTime() },
        ...(chunkId ? { $push: { index: chunkId } } : {}),
        $setOnInsert: { ...scopeFields(scope), committed: 0, live: 0, feed: true },
      },
      { upsert: true, returnDocument: 'after' },
    );
    const counter = doc as CounterDoc;
    return { first: counter.next - count + 1, at: counter.last_at ?? now.getTime() };
  }

  /** Readers may now see every change up to `upTo`. */
  async commitSeq(scope: RecordScope, upTo: number): Promise<void> {
    await this.col.updateOne({ _id: scopeKey(scope) }, { $max: { committed: upTo } });
  }

  /** Holds every seq after the scope's current `next` for an action's writer (see CounterDoc.holds). */
  async placeHold(scope: RecordScope, key: string, now = Date.now()): Promise<void> {
    // A sync may reserve and commit between the read and the hold: readers then stop short
    // of seqs they could see for a moment, which delays, never skips.
    const counter = await this.col.findOne({ _id: scopeKey(scope) }, { projection: { next: 1 } });
    await this.col.updateOne({ _id: scopeKey(scope) }, { $set: { [`holds.${key}`]: { first: (counter?.next ?? 0) + 1, until: now + HOLD_MS } } });
  }

  /** Releases a hold without committing (its writer failed: its seqs are a dead writer's gap). */
  async dropHold(scope: RecordScope, key: string): Promise<void> {
    await this.col.updateOne({ _id: scopeKey(scope) }, { $unset: { [`holds.${key}`]: '' } });
  }

  /**
   * Commits an action writer's seqs `first..upTo` and releases its hold, once every seq
   * before `first` is committed (a sync's batch in flight below it is not exposed unwritten).
   */
  async commitHeld(scope: RecordScope, key: string, first: number, upTo: number): Promise<void> {
    const release = { $max: { committed: upTo }, $unset: { [`holds.${key}`]: '' as const } };
    const deadline = Date.now() + HOLD_COMMIT_WAIT_MS;
    while (Date.now() < deadline) {
      const done = await this.col.updateOne({ _id: scopeKey(scope), committed: { $gte: first - 1 } }, release);
      if (done.matchedCount === 1) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await this.col.updateOne({ _id: scopeKey(scope) }, release);
  }

  /** The scope's committed change mark (0 before its first change): every later change has a higher seq. */
  async committedSeq(scope: RecordScope): Promise<number> {
    const counter = await this.col.findOne({ _id: scopeKey(scope) }, { projection: { committed: 1, holds: 1 } });
    return counter ? visibleSeq(counter) : 0;
  }

  /** The feed holds every stored version now (a backfill ended); `at` is the latest it wrote. */
  async markFed(scope: RecordScope, at: number): Promise<void> {
    await this.col.updateOne({ _id: scopeKey(scope) }, { $set: { feed: true }, $max: { last_at: at } });
  }

  /** Lists a backfilled index unless another writer listed one first; whether this one was listed. */
  async listBuiltIndex(scope: RecordScope, chunkIds: string[]): Promise<boolean> {
    const set = await this.col.updateOne({ _id: scopeKey(scope), indexed: { $ne: true } }, { $set: { indexed: true, index: chunkIds } });
    return set.modifiedCount === 1;
  }

  /** Notes the index's size after a rewrite (or when first seen), the base of the next rewrite. */
  async setIndexBase(counter: CounterDoc, base: number): Promise<void> {
    await this.col.updateOne({ _id: counter._id }, { $set: { index_base: base } });
  }

  /** Replaces the chunk list by a rewrite of it unless a writer reserved seqs since `counter` was read; whether it did. */
  async swapIndex(counter: CounterDoc, chunkIds: string[]): Promise<boolean> {
    const swapped = await this.col.updateOne({ _id: counter._id, next: counter.next }, { $set: { index: chunkIds, index_base: chunkIds.length } });
    return swapped.modifiedCount === 1;
  }

  /** Records a finished run: its counts, the exact live count, and no stale writers left. */
  async finishRun(scope: RecordScope, runId: string, counts: ScopeCounts): Promise<void> {
    const { live, ...changes } = counts;
    await this.col.updateOne(
      { _id: scopeKey(scope) },
      { $set: { live, writers: [], last_run: { id: runId, counts: changes } }, $setOnInsert: { ...scopeFields(scope), next: 0, committed: 0, feed: true } },
      { upsert: true },
    );
  }

  /** Moves the scope's prune mark forward (a race that moves it back only costs a later prune a re-read). */
  async markPrunedTo(key: string, pos: string, previous: string | undefined): Promise<void> {
    if (previous !== undefined && pos <= previous) return;
    await this.col.updateOne({ _id: key }, { $set: { pruned_to: pos } });
  }

  /** The scope keys under a connection's key whose variant is `variant` (a variant across models is no key prefix). */
  async scopesOfVariant(scope: { connection: string; variant: string }): Promise<string[]> {
    const counters = await this.col.find({ _id: prefixRange(partialScopeKey(scope)) }, { projection: { _id: 1, variant: 1 } }).toArray();
    return counters.filter((c) => c.variant === scope.variant).map((c) => c._id);
  }

  /** Every scope under `prefix` holds nothing now: its index and feed are exact again as empty ones; seqs keep counting up. */
  async markEmptied(prefix: string): Promise<void> {
    await this.col.updateMany(
      { _id: prefixRange(prefix) },
      { $set: { live: 0, writers: [], indexed: true, feed: true }, $unset: { last_run: '', index: '', index_base: '' } },
    );
  }
}

/** How far readers may read: the committed mark, short of the lowest live hold of an action's writer. */
export function visibleSeq(counter: Pick<CounterDoc, 'committed' | 'holds'>, now = Date.now()): number {
  let visible = counter.committed;
  for (const hold of Object.values(counter.holds ?? {})) if (hold.until > now) visible = Math.min(visible, hold.first - 1);
  return visible;
}

/** Whether `live` describes the scope as this run found it (no other run wrote since the last finish). */
export function liveIsKnown(counter: CounterDoc | null, runId: string): boolean {
  return counter?.live !== undefined && (counter.writers ?? []).every((w) => w === runId);
}
