import { uniqueSuffix } from './key-range';
import { canonicalHash } from './canonical-hash';
import type { RunChange } from './record-batches';
import type { RecordDoc, RecordScope } from './record-doc';
import { encodeEntries, fingerprintOf, indexedStateOf, type IndexedState, type IndexedStates } from './record-index';
import { recordKey, scopeKey } from './record-keys';
import type { RecordMigrations } from './record-migrations';
import type { RecordParts } from './record-parts';
import type { Existing } from './record-versions';

export interface IncomingRecord {
  id: string;
  data: Record<string, unknown>;
}

export interface BatchCounts {
  added: number;
  updated: number;
  unchanged: number;
}

/**
 * A writer for one scope and run. It puts back what a crashed writer left half swapped,
 * then loads the scope's index, unless the scope has never held a record (a first run:
 * every record is new, and nothing needs holding in memory).
 */
export async function openRecordWriter(
  parts: RecordParts,
  migrations: RecordMigrations,
  scope: RecordScope,
  runId: string,
  options: { hold?: boolean } = {},
): Promise<RecordWriter> {
  const counter = await parts.counters.addWriter(scope, runId);
  await repairSwaps(parts, scope);
  if (!counter?.feed) await migrations.buildFeed(scope);
  const chunkIds = counter?.indexed ? (counter.index ?? []) : await migrations.buildIndex(scope);
  const holdKey = options.hold ? `h${uniqueSuffix()}` : undefined;
  if (chunkIds.length === 0) return new RecordWriter(parts, scope, runId, null, new Map(), holdKey);
  const [known, ours] = await Promise.all([parts.index.load(chunkIds), parts.batches.changesOf(scope, runId)]);
  return new RecordWriter(parts, scope, runId, known, ours, holdKey);
}

/**
 * Saves records an action wrote to the provider as one small run of their own (`runId`),
 * visible at once: same classification and hash as a sync's writer, so the sync's next
 * run finds them unchanged. Safe beside a sync run writing the same scope: the writer
 * holds its seqs (readers stop before them until they are written) and commits only once
 * every seq reserved before its own is. Its run never finishes: it stays among the
 * scope's `writers`, so the next finish counts the live records instead of carrying them.
 */
export async function saveNow(
  parts: RecordParts,
  migrations: RecordMigrations,
  scope: RecordScope,
  runId: string,
  records: IncomingRecord[],
): Promise<BatchCounts> {
  const writer = await openRecordWriter(parts, migrations, scope, runId, { hold: true });
  let counts;
  try {
    counts = await writer.saveBatch(records);
  } catch (err) {
    // Failed half-way: its seqs are a dead writer's gap now, not a reason to hold readers back.
    if (writer.holdKey) await parts.counters.dropHold(scope, writer.holdKey).catch(() => undefined);
    throw err;
  }
  // Its batch log serves only a finish, which this run never has.
  await parts.batches.dropRun(scope, runId);
  return counts;
}

/** Redoes every swap of the scope a crashed writer left: the parked versions are the newest. */
async function repairSwaps(parts: RecordParts, scope: RecordScope): Promise<void> {
  for (const swap of await parts.index.leftoverSwaps(scopeKey(scope))) {
    // Their feed entries were written before the swap began (a swap parked by a version
    // before the feed is covered by the backfill that follows in openRecordWriter).
    // Appending a subset of a batch again would make a pack overlapping the batch's own.
    await replaceVersions(parts, swap.id, scope, swap.docs, swap.entries);
  }
}

/**
 * Replaces stored records by new versions, and writes the batch's index chunk: park the
 * new versions, delete the old, insert the new, drop the parked copy. On FerretDB a delete
 * and an insert of a whole batch cost a third of one update per record.
 */
async function replaceVersions(parts: RecordParts, chunkId: string, scope: RecordScope, docs: RecordDoc[], entries: string): Promise<void> {
  await parts.index.putSwap(chunkId, scope, docs, entries);
  await parts.versions.deleteKeys(docs.map((d) => d._id));
  const duplicates = await parts.versions.insertNew(docs);
  if (duplicates.size) throw new Error(`records of ${scopeKey(scope)} were written by another writer during a swap (${duplicates.size})`);
  await parts.index.writeChunk(chunkId, scope, entries);
  await parts.index.dropSwap(chunkId);
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

/**
 * Writes one scope's records during one run attempt (see openRecordWriter). It reads no
 * record on the way: what it must know of the stored versions is in the scope's index,
 * loaded once, and kept current in memory.
 */
export class RecordWriter {
  constructor(
    private readonly parts: RecordParts,
    private readonly scope: RecordScope,
    private readonly runId: string,
    /** The scope's index, kept current; null while the scope has held nothing: every record is new. */
    private readonly known: IndexedStates | null,
    /** What this run changed so far (its log, and this attempt's batches), kept alongside `known`. */
    private readonly ours: Map<string, RunChange>,
    /** An action's writer beside a sync's: the key it holds its seqs under while writing (saveNow). */
    readonly holdKey?: string,
  ) {}

  /** Saves a batch; returns what changed. Safe to repeat (a retried page changes nothing twice). */
  async saveBatch(records: IncomingRecord[], now = new Date()): Promise<BatchCounts> {
    const { counters, batches, feed, index, versions } = this.parts;
    const key = scopeKey(this.scope);
    const latest = new Map<string, IncomingRecord>();
    for (const r of records) latest.set(r.id, r); // within a batch the last version wins
    const hashed = [...latest.values()].map((record): Hashed => ({ record, hash: canonicalHash(record.data) }));
    // Seen ids matter only to delete detection, which has nothing to find in a scope that was empty.
    const seen = this.known ? [...latest.keys()] : undefined;

    let plan = this.plan(hashed, (id) => this.priorFromIndex(id), now);
    const written = plan.inserts.length + plan.replacements.length;
    if (written === 0) {
      await batches.log(this.scope, this.runId, seen, plan.changes);
      return { added: 0, updated: 0, unchanged: latest.size };
    }

    const chunkId = index.newChunkId(key);
    const holdKey = this.holdKey;
    if (holdKey) await counters.placeHold(this.scope, holdKey);
    const { first: firstSeq, at } = await counters.reserveSeq(this.scope, written, chunkId, now);
    const seqById = new Map([...plan.inserts, ...plan.replacements].map((doc, i) => [doc.id, (doc.seq = firstSeq + i)]));
    // The feed first: a version written but never in the feed would be invisible to readers.
    await feed.append(
      key,
      [...seqById].map(([id, seq]) => ({ id, seq, at })),
    );
    const duplicates = await versions.insertNew(plan.inserts);
    if (duplicates.size) {
      // Believed new but stored after all: written by an earlier attempt of this run, or by a
      // run that crashed before indexing them. Classify them against the stored versions.
      const stored = await versions.fetchExisting(this.scope, [...duplicates]);
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
    await batches.log(this.scope, this.runId, seen, plan.changes);
    const states: Array<[string, IndexedState]> = [...plan.inserts, ...plan.replacements].map((doc) => [doc.id, indexedStateOf(doc)]);
    states.push(...plan.unindexed);
    const entries = encodeEntries(states);
    if (plan.replacements.length) await replaceVersions(this.parts, chunkId, this.scope, plan.replacements, entries);
    else await index.writeChunk(chunkId, this.scope, entries);
    if (holdKey) await counters.commitHeld(this.scope, holdKey, firstSeq, firstSeq + written - 1);
    else await counters.commitSeq(this.scope, firstSeq + written - 1);

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
    const { counters, batches, feed, index, versions } = this.parts;
    const existing = await versions.fetchExisting(this.scope, [...new Set(ids)]);
    const live = [...existing.values()].filter((e) => e.deleted_at === null);
    if (live.length === 0) return 0;
    const targets = live.map((e) => ({ _id: e._id, id: e.id, live_before_run: e.run_id === this.runId ? e.live_before_run : true }));
    const changes = targets.map((t): RunChange => ({ id: t.id, action: 'DELETED', live_before: t.live_before_run }));
    const states = live.map((e): [string, IndexedState] => [e.id, { ...indexedStateOf(e), deleted: true }]);
    const chunkId = index.newChunkId(scopeKey(this.scope));
    const { first: seq, at } = await counters.reserveSeq(this.scope, 1, chunkId, now);
    await batches.log(this.scope, this.runId, [], changes);
    await feed.append(
      scopeKey(this.scope),
      targets.map((t) => ({ id: t.id, seq, at })),
    );
    await versions.markDeleted(targets, this.runId, seq, now);
    await index.writeChunk(chunkId, this.scope, encodeEntries(states));
    await counters.commitSeq(this.scope, seq);
    this.remember(states, changes);
    return targets.length;
  }
}
