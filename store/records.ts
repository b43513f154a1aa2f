import { MongoBulkWriteError, type AnyBulkWriteOperation, type Collection, type Db, type Filter } from 'mongodb';
import { canonicalHash } from './canonical-hash';
import { Limiter } from './limiter';
import { serverTraits, type ServerTraits } from './server-traits';
import { ensureExpiry, type ExpiryRule } from './ttl';

export type RecordAction = 'ADDED' | 'UPDATED' | 'DELETED';

/** Which records a sync writes: one model (and variant) of one connection. */
export interface RecordScope {
  environment: string;
  connection: string;
  model: string;
  variant: string;
}

export interface RecordDoc {
  /** `recordKey(scope, id)`: every lookup and write of one record is by `_id`, the one key FerretDB indexes. */
  _id: string;
  environment: string;
  connection: string;
  model: string;
  variant: string;
  id: string;
  data: Record<string, unknown>;
  hash: string;
  first_seen_at: Date;
  /** Moves only when the hash or the deleted state changes. */
  last_modified_at: Date;
  deleted_at: Date | null;
  last_action: RecordAction;
  /** Monotonic per scope, assigned at each change: the key `GET /records` pages by. */
  seq: number;
  /** The sync run that made the last change; lets a run count its own changes exactly. */
  run_id: string;
  /** Whether the record was live before `run_id` first changed it (the run's live-count delta). */
  live_before_run: boolean;
}

interface CounterDoc {
  _id: string;
  connection: string;
  model: string;
  variant: string;
  next: number;
  /** Every change with seq <= committed has been written: readers never look past it. */
  committed: number;
  /** Live records after the last finished run; absent when unknown (counted once then). */
  live?: number;
  /**
   * Runs that opened a writer since the last finish. Another run than the finishing one in
   * here (one that failed or was terminated after writing) means `live` is stale.
   */
  writers?: string[];
  /** The last finished run and what it changed, so a retried finish answers the same. */
  last_run?: { id: string; counts: Omit<ScopeCounts, 'live'> };
}

/**
 * One batch of a run: the ids it saved (delete detection of a full run) and what it
 * changed, in order. A run's finish reads its own batches instead of scanning `records`.
 */
interface RunBatchDoc {
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

export interface ListRecordsQuery {
  after?: { seq: number; id: string };
  limit: number;
  modifiedAfter?: Date;
  actions?: RecordAction[];
  ids?: string[];
}

/** A record's `_id`: unique per scope and id, and unambiguous (each part is encoded). */
export function recordKey(scope: Pick<RecordScope, 'connection' | 'model' | 'variant'>, id: string): string {
  return [scope.connection, scope.model, scope.variant, id].map(encodeURIComponent).join('|');
}

/** What a writer needs to know of a stored record to classify a new version of it. */
type Existing = Pick<RecordDoc, '_id' | 'id' | 'hash' | 'deleted_at' | 'run_id' | 'last_action' | 'first_seen_at' | 'live_before_run'>;
const EXISTING_PROJECTION = { _id: 1, id: 1, hash: 1, deleted_at: 1, run_id: 1, last_action: 1, first_seen_at: 1, live_before_run: 1 } as const;

/** Documents per insertMany, and per bulk write where the server indexes `$in`. */
const CHUNK = 1_000;
/**
 * Single-record reads and writes in flight per process on FerretDB. Each is its own
 * command: FerretDB 1.24 holds a pooled SQLite connection (100 per database) per statement
 * until its command ends, so multi-statement updates from several writers could deadlock it.
 */
const ferretOneByOne = new Limiter(8);

/**
 * The records engine. Writes only what changed (by canonical hash), so a run over
 * unchanged data writes nothing to `records`; detects deletions at the end of a complete
 * full run from the ids that run saw; and pages by a per-scope sequence with a committed
 * high-water mark, so a reader paging while a sync writes never skips a record.
 *
 * It never scans `records` on the way of an incremental run: records are read and written
 * by `_id` only (indexed on FerretDB too), what a run changed is logged per batch in
 * `record_run_batches`, and the live count is carried forward from run to run. Only the
 * delete detection of a full run over a non-empty scope reads the whole scope.
 *
 * One writer per scope at a time is assumed (Temporal never runs two attempts of one
 * sync together, barring a worker that lost its heartbeat but keeps running).
 */
export class RecordStore {
  private readonly col: Collection<RecordDoc>;
  private readonly counters: Collection<CounterDoc>;
  private readonly batches: Collection<RunBatchDoc>;

  constructor(private readonly db: Db) {
    this.col = db.collection<RecordDoc>('records');
    this.counters = db.collection<CounterDoc>('record_counters');
    this.batches = db.collection<RunBatchDoc>('record_run_batches');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    // FerretDB never reads through secondary indexes, only pays for them on every insert.
    if (!(await this.traits()).indexedByIdOnly) {
      await this.col.createIndex({ connection: 1, model: 1, variant: 1, seq: 1, id: 1 });
      await this.col.createIndex({ connection: 1, model: 1, variant: 1, deleted_at: 1 });
      await this.batches.createIndex({ run_id: 1, connection: 1, model: 1, variant: 1 });
    }
    // Batches of runs that never finished are garbage after a few days.
    return [await ensureExpiry(this.batches, 'created_at', 3 * 86_400)];
  }

  traits(): Promise<ServerTraits> {
    return serverTraits(this.db);
  }

  /**
   * A writer for one scope and run. It reads nothing up front: each batch looks up just its
   * own ids, and a scope that has never held a record (a first run) skips even that.
   */
  async openWriter(scope: RecordScope, runId: string): Promise<RecordWriter> {
    const counter = await this.counters.findOneAndUpdate(
      { _id: counterId(scope) },
      { $addToSet: { writers: runId }, $setOnInsert: { ...counterScope(scope), next: 0, committed: 0, live: 0 } },
      { upsert: true, returnDocument: 'after' },
    );
    // Known empty: no lookups, every record is inserted. Inserting is always correct: a record
    // that exists after all (written by an earlier attempt of this run) fails as a duplicate
    // and then takes the lookup path. Lookups only save work when most records exist.
    const knownEmpty = liveIsKnown(counter, runId) && counter?.live === 0;
    return new RecordWriter(this, scope, runId, !knownEmpty);
  }

  /** @internal The stored versions of `ids` in `scope`, by id. */
  async fetchExisting(scope: RecordScope, ids: string[]): Promise<Map<string, Existing>> {
    const out = new Map<string, Existing>();
    if (ids.length === 0) return out;
    const keys = ids.map((id) => recordKey(scope, id));
    if ((await this.traits()).indexedByIdOnly) {
      const docs = await ferretOneByOne.all(keys, (key) => this.col.findOne({ _id: key }, { projection: EXISTING_PROJECTION }));
      for (const doc of docs) if (doc) out.set(doc.id, doc as Existing);
    } else {
      for (let i = 0; i < keys.length; i += CHUNK) {
        for await (const doc of this.col.find({ _id: { $in: keys.slice(i, i + CHUNK) } }, { projection: EXISTING_PROJECTION })) out.set(doc.id, doc as Existing);
      }
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
   * @internal FerretDB: writes each document by `_id` (inserting it if new, keeping
   * `first_seen_at` otherwise) and returns the version it replaced, or null.
   */
  async upsertEach(docs: Array<Omit<RecordDoc, 'first_seen_at'>>, now: Date): Promise<Array<RecordDoc | null>> {
    return ferretOneByOne.all(docs, (doc) => {
      const { _id, ...fields } = doc;
      return this.col.findOneAndUpdate({ _id }, { $set: fields, $setOnInsert: { first_seen_at: now } }, { upsert: true, returnDocument: 'before' });
    });
  }

  /** @internal Sets a few fields of records by `_id`. */
  async fixEach(fixes: Array<{ _id: string; set: Partial<RecordDoc> }>): Promise<void> {
    await this.writeEach(fixes.map((f) => ({ updateOne: { filter: { _id: f._id }, update: { $set: f.set } } })));
  }

  /** @internal Replaces whole records by `_id`. */
  async replaceAll(docs: RecordDoc[]): Promise<void> {
    await this.writeEach(docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc } })));
  }

  /** @internal Marks records deleted by `_id`. */
  async markDeleted(targets: Array<{ _id: string; live_before_run: boolean }>, runId: string, seq: number, now: Date): Promise<void> {
    await this.writeEach(
      targets.map((t) => ({
        updateOne: {
          filter: { _id: t._id },
          update: { $set: { deleted_at: now, last_modified_at: now, last_action: 'DELETED' as const, seq, run_id: runId, live_before_run: t.live_before_run } },
        },
      })),
    );
  }

  /** One statement per command on FerretDB (see ferretOneByOne), chunks elsewhere. */
  private async writeEach(ops: AnyBulkWriteOperation<RecordDoc>[]): Promise<void> {
    if (ops.length === 0) return;
    if ((await this.traits()).indexedByIdOnly) {
      await ferretOneByOne.all(ops, (op) => this.col.bulkWrite([op], { ordered: true }));
      return;
    }
    for (let i = 0; i < ops.length; i += CHUNK) await this.col.bulkWrite(ops.slice(i, i + CHUNK), { ordered: false });
  }

  /** @internal Logs a batch of a run (see RunBatchDoc). */
  async logBatch(scope: RecordScope, runId: string, seen: string[] | undefined, changes: RunChange[]): Promise<void> {
    if (!seen?.length && changes.length === 0) return;
    const ids = (action: RecordAction) => changes.filter((c) => c.action === action).map((c) => c.id);
    await this.batches.insertOne({
      run_id: runId,
      connection: scope.connection,
      model: scope.model,
      variant: scope.variant,
      ...(seen ? { seen } : {}),
      added: ids('ADDED'),
      updated: ids('UPDATED'),
      deleted: ids('DELETED'),
      was_live: changes.filter((c) => c.live_before).map((c) => c.id),
      created_at: new Date(),
    });
  }

  /**
   * Closes a run's scope: marks as deleted every live record a complete full run did not
   * see (only call with detectDeletes after a complete run), and returns what the run
   * changed and how many records are live. Safe to repeat.
   */
  async finishScope(scope: RecordScope, runId: string, detectDeletes: boolean, now = new Date()): Promise<ScopeCounts> {
    const counter = await this.counters.findOne({ _id: counterId(scope) });
    if (counter?.last_run?.id === runId && counter.live !== undefined) return { ...counter.last_run.counts, live: counter.live };

    const batchFilter = { run_id: runId, connection: scope.connection, model: scope.model, variant: scope.variant };
    const batches = await this.batches.find(batchFilter).sort({ created_at: 1, _id: 1 }).toArray();
    const liveKnown = liveIsKnown(counter, runId);
    // Nothing live before the run means nothing for delete detection to find.
    const needsScan = detectDeletes && !(liveKnown && counter?.live === 0);
    const counts = needsScan ? await this.detectDeletes(scope, runId, batches, now) : await this.countFromBatches(scope, liveKnown ? counter : null, batches);

    const { live, ...changes } = counts;
    // The live count is exact again (carried, counted or scanned): no stale writers remain.
    await this.counters.updateOne(
      { _id: counterId(scope) },
      { $set: { live, writers: [], last_run: { id: runId, counts: changes } }, $setOnInsert: { ...counterScope(scope), next: 0, committed: 0 } },
      { upsert: true },
    );
    await this.batches.deleteMany(batchFilter);
    return counts;
  }

  /** The run's changes from its own batch log; the live count carried from the last run (when `known`). */
  private async countFromBatches(scope: RecordScope, known: CounterDoc | null, batches: RunBatchDoc[]): Promise<ScopeCounts> {
    const last = new Map<string, RunChange>();
    for (const b of batches) {
      const wasLive = new Set(b.was_live);
      for (const action of ['ADDED', 'UPDATED', 'DELETED'] as const) {
        for (const id of b[action.toLowerCase() as 'added' | 'updated' | 'deleted']) last.set(id, { id, action, live_before: wasLive.has(id) });
      }
    }
    const counts = { added: 0, updated: 0, deleted: 0, live: 0 };
    let delta = 0;
    for (const c of last.values()) {
      if (c.action === 'ADDED') counts.added += 1;
      else if (c.action === 'UPDATED') counts.updated += 1;
      else counts.deleted += 1;
      delta += (c.action === 'DELETED' ? 0 : 1) - (c.live_before ? 1 : 0);
    }
    if (known?.live !== undefined) counts.live = known.live + delta;
    else counts.live = await this.col.countDocuments({ ...scopeFilter(scope), deleted_at: null }); // unknown: count once
    return counts;
  }

  /** One pass over the scope: marks the unseen live records deleted and counts exactly. */
  private async detectDeletes(scope: RecordScope, runId: string, batches: RunBatchDoc[], now: Date): Promise<ScopeCounts> {
    const seen = new Set<string>();
    for (const b of batches) for (const id of b.seen ?? []) seen.add(id);
    const counts = { added: 0, updated: 0, deleted: 0, live: 0 };
    const missing: Array<{ _id: string; live_before_run: boolean }> = [];
    const cursor = this.col.find(scopeFilter(scope), { projection: { _id: 1, id: 1, deleted_at: 1, run_id: 1, last_action: 1 } });
    for await (const doc of cursor) {
      if (doc.run_id === runId) {
        if (doc.last_action === 'ADDED') counts.added += 1;
        else if (doc.last_action === 'UPDATED') counts.updated += 1;
        else counts.deleted += 1;
      }
      if (doc.deleted_at !== null) continue;
      // A record this run wrote was seen by it, even where its batch log omits seen ids.
      if (!seen.has(doc.id) && doc.run_id !== runId) missing.push({ _id: doc._id, live_before_run: true });
      else counts.live += 1;
    }
    if (missing.length) {
      const seq = await this.reserveSeq(scope, 1);
      // The whole set shares one seq; the cursor breaks ties by id.
      await this.markDeleted(missing, runId, seq, now);
      await this.commitSeq(scope, seq);
      counts.deleted += missing.length;
    }
    return counts;
  }

  async list(scope: RecordScope, q: ListRecordsQuery): Promise<{ records: RecordDoc[]; hasMore: boolean }> {
    const counter = await this.counters.findOne({ _id: counterId(scope) });
    const committed = counter?.committed ?? 0;
    const filter: Filter<RecordDoc> = { connection: scope.connection, model: scope.model, variant: scope.variant, environment: scope.environment, seq: { $lte: committed } };
    if (q.after) filter.$or = [{ seq: { $gt: q.after.seq, $lte: committed } }, { seq: q.after.seq, id: { $gt: q.after.id } }];
    if (q.modifiedAfter) filter.last_modified_at = { $gte: q.modifiedAfter };
    if (q.actions?.length) filter.last_action = { $in: q.actions };
    if (q.ids?.length) filter.id = { $in: q.ids };
    const docs = await this.col.find(filter).sort({ seq: 1, id: 1 }).limit(q.limit + 1).toArray();
    const hasMore = docs.length > q.limit;
    return { records: hasMore ? docs.slice(0, q.limit) : docs, hasMore };
  }

  /** Drops cached records (connection deleted, or a reset with emptyCache); sequences keep counting up. */
  async deleteScope(scope: Omit<RecordScope, 'model' | 'variant'> & { model?: string; variant?: string }): Promise<void> {
    const filter: Filter<RecordDoc> = { environment: scope.environment, connection: scope.connection };
    const counterFilter: Filter<CounterDoc> = { connection: scope.connection };
    if (scope.model) filter.model = counterFilter.model = scope.model;
    if (scope.variant) filter.variant = counterFilter.variant = scope.variant;
    await this.col.deleteMany(filter);
    await this.counters.updateMany(counterFilter, { $set: { live: 0, writers: [] }, $unset: { last_run: '' } });
  }

  /** @internal First of `count` new sequence numbers of the scope. */
  async reserveSeq(scope: RecordScope, count: number): Promise<number> {
    const doc = await this.counters.findOneAndUpdate(
      { _id: counterId(scope) },
      // A scope's first write creates its counter: nothing was live before.
      { $inc: { next: count }, $setOnInsert: { ...counterScope(scope), committed: 0, live: 0 } },
      { upsert: true, returnDocument: 'after' },
    );
    return (doc as CounterDoc).next - count + 1;
  }

  /** @internal Readers may now see every change up to `upTo`. */
  async commitSeq(scope: RecordScope, upTo: number): Promise<void> {
    await this.counters.updateOne({ _id: counterId(scope) }, { $max: { committed: upTo } });
  }
}

function scopeFilter(scope: RecordScope) {
  return { environment: scope.environment, connection: scope.connection, model: scope.model, variant: scope.variant };
}

/**
 * What writing a new version does, given the stored one: a new record, a deleted one back,
 * or one added earlier in this run and changed again is an addition; anything else an
 * update. `liveBefore` is the record's state before this run first changed it.
 */
function classifyChange(prior: Pick<RecordDoc, 'deleted_at' | 'run_id' | 'last_action' | 'live_before_run'> | null, runId: string): { action: 'ADDED' | 'UPDATED'; liveBefore: boolean } {
  const ours = prior?.run_id === runId;
  const liveBefore = ours ? prior.live_before_run : prior !== null && prior.deleted_at === null;
  const action = !prior || prior.deleted_at !== null || (ours && prior.last_action === 'ADDED') ? 'ADDED' : 'UPDATED';
  return { action, liveBefore };
}

/** Whether `live` describes the scope as this run found it (no other run wrote since the last finish). */
function liveIsKnown(counter: CounterDoc | null, runId: string): boolean {
  return counter?.live !== undefined && (counter.writers ?? []).every((w) => w === runId);
}

function counterId(scope: RecordScope): string {
  return recordKey(scope, '');
}

function counterScope(scope: RecordScope) {
  return { connection: scope.connection, model: scope.model, variant: scope.variant };
}

/** Writes one scope's records during one run attempt; see RecordStore.openWriter. */
export class RecordWriter {
  constructor(
    private readonly store: RecordStore,
    private readonly scope: RecordScope,
    private readonly runId: string,
    /** False while the scope is known to hold nothing: every record is new. */
    private readonly lookups: boolean,
  ) {}

  /** Saves a batch; returns what changed. Safe to repeat (a retried page changes nothing twice). */
  async saveBatch(records: IncomingRecord[], now = new Date()): Promise<{ added: number; updated: number; unchanged: number }> {
    const latest = new Map<string, IncomingRecord>();
    for (const r of records) latest.set(r.id, r); // within a batch the last version wins
    const hashed = [...latest.values()].map((record) => ({ record, hash: canonicalHash(record.data) }));
    const result = !this.lookups
      ? await this.write(hashed, new Map(), now) // insert first; duplicates fall back
      : (await this.store.traits()).indexedByIdOnly
        ? await this.upsertEach(hashed, now)
        : await this.write(hashed, await this.store.fetchExisting(this.scope, [...latest.keys()]), now);
    // Seen ids matter only to delete detection, which has nothing to find in a scope that was empty.
    await this.store.logBatch(this.scope, this.runId, this.lookups ? [...latest.keys()] : undefined, result.changes);
    return { added: result.added, updated: result.updated, unchanged: latest.size - result.added - result.updated };
  }

  private async write(
    hashed: Array<{ record: IncomingRecord; hash: string }>,
    existing: Map<string, Existing>,
    now: Date,
  ): Promise<{ added: number; updated: number; changes: RunChange[] }> {
    const changes: RunChange[] = [];
    const inserts: RecordDoc[] = [];
    const replacements: RecordDoc[] = [];
    for (const { record, hash } of hashed) {
      const prior = existing.get(record.id);
      // Already changed by this run (an earlier batch or attempt): its state before the run is on the record.
      const ours = prior?.run_id === this.runId;
      if (prior && prior.deleted_at === null && prior.hash === hash) {
        // Unchanged now; if this run made it so, the change is logged again (logs are merged, last wins).
        if (ours) changes.push({ id: record.id, action: prior.last_action, live_before: prior.live_before_run });
        continue;
      }
      const { action, liveBefore } = classifyChange(prior ?? null, this.runId);
      const doc: RecordDoc = {
        _id: recordKey(this.scope, record.id),
        ...this.scope,
        id: record.id,
        data: record.data,
        hash,
        first_seen_at: prior?.first_seen_at ?? now,
        last_modified_at: now,
        deleted_at: null,
        last_action: action,
        seq: 0,
        run_id: this.runId,
        live_before_run: liveBefore,
      };
      (prior ? replacements : inserts).push(doc);
      changes.push({ id: record.id, action, live_before: liveBefore });
    }
    if (inserts.length + replacements.length === 0) return { added: 0, updated: 0, changes };

    const firstSeq = await this.store.reserveSeq(this.scope, inserts.length + replacements.length);
    [...inserts, ...replacements].forEach((doc, i) => (doc.seq = firstSeq + i));
    const duplicates = await this.store.insertNew(inserts);
    await this.store.replaceAll(replacements);
    await this.store.commitSeq(this.scope, firstSeq + inserts.length + replacements.length - 1);

    const written = [...inserts, ...replacements];
    let added = written.filter((d) => d.last_action === 'ADDED').length;
    let updated = written.length - added;
    if (duplicates.size === 0) return { added, updated, changes };

    // Records believed new were there after all (written by an earlier attempt, or a scope
    // thought empty): look them up and write them as the versions they are.
    const redo = hashed.filter((h) => duplicates.has(h.record.id));
    const again = (await this.store.traits()).indexedByIdOnly ? await this.upsertEach(redo, now) : await this.write(redo, await this.store.fetchExisting(this.scope, [...duplicates]), now);
    added += again.added - duplicates.size;
    updated += again.updated;
    return { added, updated, changes: [...changes.filter((c) => !duplicates.has(c.id)), ...again.changes] };
  }

  /**
   * FerretDB: one command per record that reads and writes at once (findAndModify upsert,
   * returning the version before), instead of a lookup then a write. The written version
   * assumes the common case of an incremental run, an update of a record live before the
   * run; the few that turn out otherwise (new, re-added, unchanged) get a second write.
   */
  private async upsertEach(hashed: Array<{ record: IncomingRecord; hash: string }>, now: Date): Promise<{ added: number; updated: number; changes: RunChange[] }> {
    const firstSeq = await this.store.reserveSeq(this.scope, hashed.length);
    const docs = hashed.map(({ record, hash }, i): Omit<RecordDoc, 'first_seen_at'> => ({
      _id: recordKey(this.scope, record.id),
      ...this.scope,
      id: record.id,
      data: record.data,
      hash,
      last_modified_at: now,
      deleted_at: null,
      last_action: 'UPDATED',
      seq: firstSeq + i,
      run_id: this.runId,
      live_before_run: true,
    }));
    const priors = await this.store.upsertEach(docs, now);
    const changes: RunChange[] = [];
    const fixes: Array<{ _id: string; set: Partial<RecordDoc> }> = [];
    const restores: RecordDoc[] = [];
    let added = 0;
    let updated = 0;
    priors.forEach((prior, i) => {
      const doc = docs[i];
      const ours = prior?.run_id === this.runId;
      if (prior && prior.deleted_at === null && prior.hash === doc.hash) {
        // Unchanged: put the stored version back as it was (it was rewritten in the same command).
        restores.push(prior);
        if (ours) changes.push({ id: doc.id, action: prior.last_action, live_before: prior.live_before_run });
        return;
      }
      const { action, liveBefore } = classifyChange(prior, this.runId);
      if (action !== doc.last_action || liveBefore !== doc.live_before_run) fixes.push({ _id: doc._id, set: { last_action: action, live_before_run: liveBefore } });
      if (action === 'ADDED') added += 1;
      else updated += 1;
      changes.push({ id: doc.id, action, live_before: liveBefore });
    });
    await this.store.fixEach(fixes);
    await this.store.replaceAll(restores);
    await this.store.commitSeq(this.scope, firstSeq + hashed.length - 1);
    return { added, updated, changes };
  }

  /** Explicit deletions from ctx.batchDelete; ids the scope never had are ignored. */
  async deleteByIds(ids: string[], now = new Date()): Promise<number> {
    const existing = await this.store.fetchExisting(this.scope, [...new Set(ids)]);
    const live = [...existing.values()].filter((e) => e.deleted_at === null);
    if (live.length === 0) return 0;
    const targets = live.map((e) => ({ _id: e._id, id: e.id, live_before_run: e.run_id === this.runId ? e.live_before_run : true }));
    const seq = await this.store.reserveSeq(this.scope, 1);
    await this.store.markDeleted(targets, this.runId, seq, now);
    await this.store.commitSeq(this.scope, seq);
    await this.store.logBatch(this.scope, this.runId, [], targets.map((t) => ({ id: t.id, action: 'DELETED', live_before: t.live_before_run })));
    return targets.length;
  }
}
