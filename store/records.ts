import type { Collection, Db, Filter, ObjectId } from 'mongodb';
import { canonicalHash } from './canonical-hash';
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
  _id?: ObjectId;
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
}

interface CounterDoc {
  _id: string;
  next: number;
  /** Every change with seq <= committed has been written: readers never look past it. */
  committed: number;
}

/**
 * A new version of an existing record, written during a run and applied in bulk later
 * (see RecordStore.applyReplacements). `doc` carries the record's own `_id`.
 */
interface ReplacementDoc {
  _id?: ObjectId;
  target: ObjectId;
  connection: string;
  model: string;
  variant: string;
  run_id: string;
  doc: RecordDoc;
  created_at: Date;
}

interface SeenDoc {
  run_id: string;
  connection: string;
  model: string;
  variant: string;
  ids: string[];
  created_at: Date;
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

/**
 * Ids per `$in` set operation. On FerretDB the cost of a delete or update is one scan of
 * the collection whatever the size of `$in`, so sets are large; on MongoDB they are indexed.
 */
const SET_CHUNK = 5_000;

/**
 * The records engine. Upserts only what changed (by canonical hash), so a run over
 * unchanged data writes nothing to `records`; detects deletions at the end of a complete
 * full run from the ids that run saw; and pages by a per-scope sequence with a committed
 * high-water mark, so a reader paging while a sync writes never skips a record.
 *
 * One writer per scope at a time is assumed (Temporal never runs two attempts of one
 * sync together, barring a worker that lost its heartbeat but keeps running).
 */
export class RecordStore {
  private readonly col: Collection<RecordDoc>;
  private readonly counters: Collection<CounterDoc>;
  private readonly seen: Collection<SeenDoc>;
  private readonly replacements: Collection<ReplacementDoc>;

  constructor(db: Db) {
    this.col = db.collection<RecordDoc>('records');
    this.counters = db.collection<CounterDoc>('record_counters');
    this.seen = db.collection<SeenDoc>('record_run_seen');
    this.replacements = db.collection<ReplacementDoc>('record_replacements');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    await this.col.createIndex({ environment: 1, connection: 1, model: 1, variant: 1, id: 1 }, { unique: true });
    await this.col.createIndex({ connection: 1, model: 1, variant: 1, seq: 1, id: 1 });
    await this.col.createIndex({ connection: 1, model: 1, variant: 1, run_id: 1 });
    await this.seen.createIndex({ run_id: 1, connection: 1, model: 1, variant: 1 });
    await this.replacements.createIndex({ connection: 1, model: 1, variant: 1 });
    // Seen-id staging of runs that never finished is garbage after a few days.
    return [await ensureExpiry(this.seen, 'created_at', 3 * 86_400)];
  }

  /**
   * A writer for one scope and run. It loads the scope's id → hash index once (ids and
   * hashes only, not records) and keeps it current, so each batch needs no read: on
   * FerretDB every query scans its collection, and one scan per batch made a sync
   * quadratic in the number of records.
   */
  async openWriter(scope: RecordScope, runId: string, onProgress: () => void = () => undefined): Promise<RecordWriter> {
    // Versions staged by an attempt or run that did not get to apply them go in first.
    await this.applyReplacements(scope);
    const known = new Map<string, KnownRecord>();
    const cursor = this.col.find(scopeFilter(scope), { projection: { _id: 1, id: 1, hash: 1, deleted_at: 1, run_id: 1, last_action: 1, first_seen_at: 1 } });
    for await (const doc of cursor) {
      known.set(doc.id, { _id: doc._id as ObjectId, hash: doc.hash, deleted: doc.deleted_at !== null, runId: doc.run_id, action: doc.last_action, firstSeenAt: doc.first_seen_at });
      // A big scope takes a while to read on FerretDB; keep the activity's heartbeat going.
      if (known.size % 2_000 === 0) onProgress();
    }
    return new RecordWriter(this, scope, runId, known);
  }

  /** @internal Stages new versions of existing records (one insert, no scan). */
  async stageReplacements(scope: RecordScope, runId: string, docs: RecordDoc[]): Promise<void> {
    if (docs.length === 0) return;
    const now = new Date();
    await this.replacements.insertMany(
      docs.map((doc) => ({ target: doc._id as ObjectId, connection: scope.connection, model: scope.model, variant: scope.variant, run_id: runId, doc, created_at: now })),
      { ordered: true },
    );
  }

  /**
   * Applies every staged version of the scope: one delete of the old documents and one
   * insert of the new ones, with fresh sequence numbers committed after the insert (a
   * reader paging meanwhile finds each record at its new position, never loses it). On
   * FerretDB every update by _id scans the whole collection; this makes the cost of a run's
   * updates one scan instead of one per record. Idempotent: a crash between the delete and
   * the insert is repaired by the next call (the writer's open and the run's finish call it).
   */
  async applyReplacements(scope: RecordScope): Promise<number> {
    const staged = await this.replacements.find({ connection: scope.connection, model: scope.model, variant: scope.variant }).sort({ _id: 1 }).toArray();
    if (staged.length === 0) return 0;
    const latest = new Map<string, RecordDoc>();
    for (const r of staged) latest.set(String(r.target), r.doc);
    const docs = [...latest.values()];
    const firstSeq = await this.reserveSeq(scope, docs.length);
    docs.forEach((doc, i) => (doc.seq = firstSeq + i));
    const targets = docs.map((d) => d._id as ObjectId);
    for (let i = 0; i < targets.length; i += SET_CHUNK) await this.col.deleteMany({ _id: { $in: targets.slice(i, i + SET_CHUNK) } });
    for (let i = 0; i < docs.length; i += SET_CHUNK) await this.col.insertMany(docs.slice(i, i + SET_CHUNK), { ordered: false });
    await this.commitSeq(scope, firstSeq + docs.length - 1);
    const stagedIds = staged.map((r) => r._id as ObjectId);
    for (let i = 0; i < stagedIds.length; i += SET_CHUNK) await this.replacements.deleteMany({ _id: { $in: stagedIds.slice(i, i + SET_CHUNK) } });
    return docs.length;
  }

  /** @internal A staged version must not resurrect a record deleted after it was staged. */
  async dropStaged(scope: RecordScope, targets: ObjectId[]): Promise<void> {
    if (targets.length) await this.replacements.deleteMany({ connection: scope.connection, model: scope.model, variant: scope.variant, target: { $in: targets } });
  }

  /** @internal used by RecordWriter: new records go straight in, with their sequence committed. */
  async insertNew(scope: RecordScope, inserts: RecordDoc[], firstSeq: number, lastSeq: number): Promise<void> {
    if (inserts.length) await this.col.insertMany(inserts, { ordered: false });
    if (lastSeq >= firstSeq) await this.commitSeq(scope, lastSeq);
  }

  /** Remembers which ids a full run saw, for delete detection when the run completes. */
  async markSeen(scope: RecordScope, runId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.seen.insertOne({ run_id: runId, connection: scope.connection, model: scope.model, variant: scope.variant, ids, created_at: new Date() });
  }

  /**
   * Closes a run's scope in one pass over its records: marks as deleted every live record
   * a complete full run did not see (only call with detectDeletes after a complete run),
   * and counts what the run changed and what is live.
   */
  async finishScope(scope: RecordScope, runId: string, detectDeletes: boolean, now = new Date(), known?: ScopeCounts): Promise<ScopeCounts> {
    await this.applyReplacements(scope);
    // Without delete detection, counts the run's writer already knows spare a full scan.
    if (known && !detectDeletes) return known;
    const seenFilter = { run_id: runId, connection: scope.connection, model: scope.model, variant: scope.variant };
    const seenIds = new Set<string>();
    if (detectDeletes) for await (const doc of this.seen.find(seenFilter, { projection: { ids: 1 } })) for (const id of doc.ids) seenIds.add(id);

    const counts = { added: 0, updated: 0, deleted: 0, live: 0 };
    const missing: ObjectId[] = [];
    const cursor = this.col.find(scopeFilter(scope), { projection: { _id: 1, id: 1, deleted_at: 1, run_id: 1, last_action: 1 } });
    for await (const doc of cursor) {
      if (doc.run_id === runId) {
        if (doc.last_action === 'ADDED') counts.added += 1;
        else if (doc.last_action === 'UPDATED') counts.updated += 1;
        else counts.deleted += 1;
      }
      if (doc.deleted_at !== null) continue;
      if (detectDeletes && !seenIds.has(doc.id)) missing.push(doc._id as ObjectId);
      else counts.live += 1;
    }
    for (let i = 0; i < missing.length; i += SET_CHUNK) {
      const chunk = missing.slice(i, i + SET_CHUNK);
      // Leftovers of the same run may have been counted above already (a retried finish).
      counts.deleted += await this.markDeleted(scope, runId, chunk, now);
    }
    if (detectDeletes) await this.seen.deleteMany(seenFilter);
    return counts;
  }

  /** @internal Explicit deletions (ctx.batchDelete) of records the writer knows, by their _id. */
  async deleteByObjectIds(scope: RecordScope, runId: string, targets: ObjectId[], now = new Date()): Promise<number> {
    if (targets.length === 0) return 0;
    await this.dropStaged(scope, targets);
    let deleted = 0;
    for (let i = 0; i < targets.length; i += SET_CHUNK) deleted += await this.markDeleted(scope, runId, targets.slice(i, i + SET_CHUNK), now);
    return deleted;
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

  async deleteScope(scope: Omit<RecordScope, 'model' | 'variant'> & { model?: string; variant?: string }): Promise<void> {
    const filter: Filter<RecordDoc> = { environment: scope.environment, connection: scope.connection };
    if (scope.model) filter.model = scope.model;
    if (scope.variant) filter.variant = scope.variant;
    await this.col.deleteMany(filter);
  }

  /** One updateMany per chunk: the chunk shares a seq, and the cursor breaks ties by id. */
  private async markDeleted(scope: RecordScope, runId: string, ids: ObjectId[], now: Date): Promise<number> {
    if (ids.length === 0) return 0;
    const seq = await this.reserveSeq(scope, 1);
    const res = await this.col.updateMany(
      { _id: { $in: ids }, deleted_at: null },
      { $set: { deleted_at: now, last_modified_at: now, last_action: 'DELETED', seq, run_id: runId } },
    );
    await this.commitSeq(scope, seq);
    return res.modifiedCount;
  }

  /** @internal */
  async reserveSeqRange(scope: RecordScope, count: number): Promise<number> {
    return this.reserveSeq(scope, count);
  }

  private async reserveSeq(scope: RecordScope, count: number): Promise<number> {
    const doc = await this.counters.findOneAndUpdate(
      { _id: counterId(scope) },
      { $inc: { next: count }, $setOnInsert: { committed: 0 } },
      { upsert: true, returnDocument: 'after' },
    );
    return (doc as CounterDoc).next - count + 1;
  }

  private async commitSeq(scope: RecordScope, upTo: number): Promise<void> {
    await this.counters.updateOne({ _id: counterId(scope) }, { $max: { committed: upTo } });
  }
}

function scopeFilter(scope: RecordScope) {
  return { environment: scope.environment, connection: scope.connection, model: scope.model, variant: scope.variant };
}

function counterId(scope: RecordScope): string {
  return `${scope.connection}|${scope.model}|${scope.variant}`;
}

interface KnownRecord {
  _id: ObjectId;
  hash: string;
  deleted: boolean;
  runId: string;
  action: RecordAction;
  firstSeenAt: Date;
}

/** Writes one scope's records during one run attempt; see RecordStore.openWriter. */
export class RecordWriter {
  constructor(
    private readonly store: RecordStore,
    private readonly scope: RecordScope,
    private readonly runId: string,
    private readonly known: Map<string, KnownRecord>,
  ) {}

  /** Saves a batch; returns what changed. Safe to repeat (a retried page changes nothing twice). */
  async saveBatch(records: IncomingRecord[], now = new Date()): Promise<{ added: number; updated: number; unchanged: number }> {
    const latest = new Map<string, IncomingRecord>();
    for (const r of records) latest.set(r.id, r); // within a batch the last version wins
    type Change = { record: IncomingRecord; hash: string; action: 'ADDED' | 'UPDATED'; prior?: KnownRecord };
    const changes: Change[] = [];
    for (const record of latest.values()) {
      const hash = canonicalHash(record.data);
      const prior = this.known.get(record.id);
      if (!prior) changes.push({ record, hash, action: 'ADDED' });
      else if (prior.deleted) changes.push({ record, hash, action: 'ADDED', prior });
      else if (prior.hash !== hash) {
        // Added earlier in this same run and changed again: still an addition for this run.
        const action = prior.runId === this.runId && prior.action === 'ADDED' ? 'ADDED' : 'UPDATED';
        changes.push({ record, hash, action, prior });
      }
    }
    const unchanged = latest.size - changes.length;
    if (changes.length === 0) return { added: 0, updated: 0, unchanged };

    // New records go straight in; new versions of known ones are staged and applied in
    // bulk when the run finishes (RecordStore.applyReplacements), readable from then on.
    const fresh = changes.filter((c) => !c.prior);
    const firstSeq = fresh.length ? await this.store.reserveSeqRange(this.scope, fresh.length) : 0;
    const inserts: RecordDoc[] = fresh.map((c, i) => ({
      ...this.scope,
      id: c.record.id,
      data: c.record.data,
      hash: c.hash,
      first_seen_at: now,
      last_modified_at: now,
      deleted_at: null,
      last_action: 'ADDED',
      seq: firstSeq + i,
      run_id: this.runId,
    }));
    const replacements: RecordDoc[] = changes
      .filter((c): c is Change & { prior: KnownRecord } => c.prior !== undefined)
      .map((c) => ({
        _id: c.prior._id,
        ...this.scope,
        id: c.record.id,
        data: c.record.data,
        hash: c.hash,
        first_seen_at: c.prior.firstSeenAt,
        last_modified_at: now,
        deleted_at: null,
        last_action: c.action,
        seq: 0, // assigned when applied
        run_id: this.runId,
      }));
    await this.store.insertNew(this.scope, inserts, firstSeq, firstSeq + inserts.length - 1);
    await this.store.stageReplacements(this.scope, this.runId, replacements);
    for (const doc of inserts) this.known.set(doc.id, { _id: doc._id as ObjectId, hash: doc.hash, deleted: false, runId: this.runId, action: 'ADDED', firstSeenAt: now });
    for (const c of changes) if (c.prior) this.known.set(c.record.id, { ...c.prior, hash: c.hash, deleted: false, runId: this.runId, action: c.action });
    const added = changes.filter((c) => c.action === 'ADDED').length;
    return { added, updated: changes.length - added, unchanged };
  }

  /**
   * What this run changed in the scope and how many records are live, from the writer's
   * index (which holds every record of the scope): the same figures finishScope counts
   * with a scan, which on FerretDB costs a full pass over the collection.
   */
  runCounts(): ScopeCounts {
    const counts: ScopeCounts = { added: 0, updated: 0, deleted: 0, live: 0 };
    for (const k of this.known.values()) {
      if (!k.deleted) counts.live += 1;
      if (k.runId !== this.runId) continue;
      if (k.action === 'ADDED') counts.added += 1;
      else if (k.action === 'UPDATED') counts.updated += 1;
      else counts.deleted += 1;
    }
    return counts;
  }

  /** Explicit deletions from ctx.batchDelete; ids the scope never had are ignored. */
  async deleteByIds(ids: string[], now = new Date()): Promise<number> {
    const live = [...new Set(ids)].map((id) => [id, this.known.get(id)] as const).filter((e): e is readonly [string, KnownRecord] => e[1] !== undefined && !e[1].deleted);
    const deleted = await this.store.deleteByObjectIds(this.scope, this.runId, live.map(([, k]) => k._id), now);
    for (const [id, k] of live) this.known.set(id, { ...k, deleted: true, runId: this.runId, action: 'DELETED' });
    return deleted;
  }
}
