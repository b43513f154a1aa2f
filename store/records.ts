import type { AnyBulkWriteOperation, Collection, Db, Filter, ObjectId } from 'mongodb';
import { canonicalHash } from './canonical-hash';
import { ensureExpiry, type ExpiryRule } from './ttl';
import type { ModelCounts } from './syncs';

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

interface SeenDoc {
  run_id: string;
  connection: string;
  model: string;
  variant: string;
  ids: string[];
  created_at: Date;
}

export interface IncomingRecord {
  id: string;
  data: Record<string, unknown>;
}

export interface ListRecordsQuery {
  afterSeq?: number;
  limit: number;
  modifiedAfter?: Date;
  actions?: RecordAction[];
  ids?: string[];
}

const DELETE_CHUNK = 1000;

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

  constructor(db: Db) {
    this.col = db.collection<RecordDoc>('records');
    this.counters = db.collection<CounterDoc>('record_counters');
    this.seen = db.collection<SeenDoc>('record_run_seen');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    await this.col.createIndex({ environment: 1, connection: 1, model: 1, variant: 1, id: 1 }, { unique: true });
    await this.col.createIndex({ connection: 1, model: 1, variant: 1, seq: 1 });
    await this.col.createIndex({ connection: 1, model: 1, variant: 1, run_id: 1 });
    await this.seen.createIndex({ run_id: 1, connection: 1, model: 1, variant: 1 });
    // Seen-id staging of runs that never finished is garbage after a few days.
    return [await ensureExpiry(this.seen, 'created_at', 3 * 86_400)];
  }

  /** Saves a batch; returns what changed. Safe to repeat (a retried page changes nothing twice). */
  async saveBatch(scope: RecordScope, runId: string, records: IncomingRecord[], now = new Date()): Promise<{ added: number; updated: number; unchanged: number }> {
    const latest = new Map<string, IncomingRecord>();
    for (const r of records) latest.set(r.id, r); // within a batch the last version wins
    if (latest.size === 0) return { added: 0, updated: 0, unchanged: 0 };

    const existing = new Map<string, Pick<RecordDoc, '_id' | 'id' | 'hash' | 'deleted_at' | 'run_id' | 'last_action'>>();
    const cursor = this.col.find(
      { ...scopeFilter(scope), id: { $in: [...latest.keys()] } },
      { projection: { _id: 1, id: 1, hash: 1, deleted_at: 1, run_id: 1, last_action: 1 } },
    );
    for await (const doc of cursor) existing.set(doc.id, doc);

    type Change = { record: IncomingRecord; hash: string; action: 'ADDED' | 'UPDATED'; prior?: ObjectId };
    const changes: Change[] = [];
    for (const record of latest.values()) {
      const hash = canonicalHash(record.data);
      const prior = existing.get(record.id);
      if (!prior) changes.push({ record, hash, action: 'ADDED' });
      else if (prior.deleted_at) changes.push({ record, hash, action: 'ADDED', prior: prior._id });
      else if (prior.hash !== hash) {
        // Added earlier in this same run and changed again: still an addition for this run.
        const action = prior.run_id === runId && prior.last_action === 'ADDED' ? 'ADDED' : 'UPDATED';
        changes.push({ record, hash, action, prior: prior._id });
      }
    }
    const unchanged = latest.size - changes.length;
    if (changes.length === 0) return { added: 0, updated: 0, unchanged };

    const firstSeq = await this.reserveSeq(scope, changes.length);
    const ops: AnyBulkWriteOperation<RecordDoc>[] = changes.map((c, i) => {
      const seq = firstSeq + i;
      if (!c.prior) {
        return {
          insertOne: {
            document: {
              ...scope,
              id: c.record.id,
              data: c.record.data,
              hash: c.hash,
              first_seen_at: now,
              last_modified_at: now,
              deleted_at: null,
              last_action: 'ADDED',
              seq,
              run_id: runId,
            },
          },
        };
      }
      return {
        updateOne: {
          filter: { _id: c.prior },
          update: { $set: { data: c.record.data, hash: c.hash, last_modified_at: now, deleted_at: null, last_action: c.action, seq, run_id: runId } },
        },
      };
    });
    await this.col.bulkWrite(ops, { ordered: false });
    await this.commitSeq(scope, firstSeq + changes.length - 1);
    const added = changes.filter((c) => c.action === 'ADDED').length;
    return { added, updated: changes.length - added, unchanged };
  }

  /** Remembers which ids a full run saw, for delete detection when the run completes. */
  async markSeen(scope: RecordScope, runId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.seen.insertOne({ run_id: runId, connection: scope.connection, model: scope.model, variant: scope.variant, ids, created_at: new Date() });
  }

  /** Marks as deleted every live record the run did not see. Call only after a complete run. */
  async deleteUnseen(scope: RecordScope, runId: string, now = new Date()): Promise<number> {
    const seenIds = new Set<string>();
    const seenFilter = { run_id: runId, connection: scope.connection, model: scope.model, variant: scope.variant };
    for await (const doc of this.seen.find(seenFilter, { projection: { ids: 1 } })) for (const id of doc.ids) seenIds.add(id);

    const missing: ObjectId[] = [];
    for await (const doc of this.col.find({ ...scopeFilter(scope), deleted_at: null }, { projection: { _id: 1, id: 1 } })) {
      if (!seenIds.has(doc.id)) missing.push(doc._id as ObjectId);
    }
    let deleted = 0;
    for (let i = 0; i < missing.length; i += DELETE_CHUNK) {
      deleted += await this.markDeleted(scope, runId, missing.slice(i, i + DELETE_CHUNK), now);
    }
    await this.seen.deleteMany(seenFilter);
    return deleted;
  }

  /** Explicit deletions from `ctx.batchDelete`. */
  async deleteByIds(scope: RecordScope, runId: string, ids: string[], now = new Date()): Promise<number> {
    if (ids.length === 0) return 0;
    const docs = await this.col.find({ ...scopeFilter(scope), id: { $in: ids }, deleted_at: null }, { projection: { _id: 1 } }).toArray();
    return this.markDeleted(scope, runId, docs.map((d) => d._id as ObjectId), now);
  }

  /** What one run changed, counted from the records themselves (exact across retries). */
  async countRunChanges(scope: RecordScope, runId: string): Promise<ModelCounts[string]> {
    const base = { connection: scope.connection, model: scope.model, variant: scope.variant, run_id: runId };
    const [added, updated, deleted] = await Promise.all(
      (['ADDED', 'UPDATED', 'DELETED'] as const).map((a) => this.col.countDocuments({ ...base, last_action: a })),
    );
    return { added, updated, deleted };
  }

  async countLive(scope: RecordScope): Promise<number> {
    return this.col.countDocuments({ ...scopeFilter(scope), deleted_at: null });
  }

  async list(scope: RecordScope, q: ListRecordsQuery): Promise<{ records: RecordDoc[]; lastSeq: number | null; hasMore: boolean }> {
    const counter = await this.counters.findOne({ _id: counterId(scope) });
    const committed = counter?.committed ?? 0;
    const seq: Record<string, number> = { $lte: committed };
    if (q.afterSeq !== undefined) seq.$gt = q.afterSeq;
    const filter: Filter<RecordDoc> = { connection: scope.connection, model: scope.model, variant: scope.variant, environment: scope.environment, seq };
    if (q.modifiedAfter) filter.last_modified_at = { $gte: q.modifiedAfter };
    if (q.actions?.length) filter.last_action = { $in: q.actions };
    if (q.ids?.length) filter.id = { $in: q.ids };
    const docs = await this.col.find(filter).sort({ seq: 1 }).limit(q.limit + 1).toArray();
    const hasMore = docs.length > q.limit;
    const records = hasMore ? docs.slice(0, q.limit) : docs;
    return { records, lastSeq: records.length ? records[records.length - 1].seq : null, hasMore };
  }

  async deleteScope(scope: Omit<RecordScope, 'model' | 'variant'> & { model?: string; variant?: string }): Promise<void> {
    const filter: Filter<RecordDoc> = { environment: scope.environment, connection: scope.connection };
    if (scope.model) filter.model = scope.model;
    if (scope.variant) filter.variant = scope.variant;
    await this.col.deleteMany(filter);
  }

  private async markDeleted(scope: RecordScope, runId: string, ids: ObjectId[], now: Date): Promise<number> {
    if (ids.length === 0) return 0;
    const firstSeq = await this.reserveSeq(scope, ids.length);
    const res = await this.col.bulkWrite(
      ids.map((_id, i) => ({
        updateOne: {
          filter: { _id, deleted_at: null },
          update: { $set: { deleted_at: now, last_modified_at: now, last_action: 'DELETED' as const, seq: firstSeq + i, run_id: runId } },
        },
      })),
      { ordered: false },
    );
    await this.commitSeq(scope, firstSeq + ids.length - 1);
    return res.modifiedCount;
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
