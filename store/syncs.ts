import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { keyId, keyPrefixRange } from './key-ids';
import { runOnce } from './migrations';

export type ModelCounts = Record<string, { added: number; updated: number; deleted: number }>;

export interface SyncDoc {
  /** syncId(key): read and written by `_id` only (documents of earlier versions are moved at start-up). */
  _id: string;
  environment: string;
  connection: string; // ConnectionDoc._id
  connection_id: string;
  provider_config_key: string;
  name: string;
  variant: string;
  /** The connection's override as it was asked for (null: the sync's default); read only to rebuild or reconcile the schedule. */
  frequency: string | null;
  /**
   * Where checkpoints lived before they moved to `sync_checkpoints`; still read when that
   * has none. (A checkpoint can be large, a delta cursor with a folder map of hundreds of
   * KB, and every status update of the sync would read and rewrite it.)
   */
  checkpoint?: unknown;
  /** Start time of the last successful run: what `ctx.lastSyncDate` is on the next one. */
  last_success_started_at: Date | null;
  last_run: {
    id: string;
    status: 'RUNNING' | 'SUCCESS' | 'ERROR';
    started_at: Date;
    finished_at: Date | null;
    result: ModelCounts | null;
    error: { code: string; message: string; detail?: unknown } | null;
  } | null;
  record_count: Record<string, number>;
  created_at: Date;
  updated_at: Date;
}

type NewSyncState = Pick<SyncDoc, 'environment' | 'connection' | 'connection_id' | 'provider_config_key' | 'name' | 'variant'>;

export interface SyncKey {
  connection: string;
  name: string;
  variant: string;
}

/** The integration-level checkpoint of one sync, kept across runs (ctx.getCheckpoint / saveCheckpoint). */
interface CheckpointDoc {
  /** checkpointId(key): read and written by `_id` only. */
  _id: string;
  connection: string;
  checkpoint: unknown;
  updated_at: Date;
}

/** A sync's state and its checkpoint share this `_id`; a connection's syncs share its prefix. */
function syncId(key: SyncKey): string {
  return keyId(key.connection, key.name, key.variant);
}
const checkpointId = syncId;

export class SyncStore {
  private readonly col: Collection<SyncDoc>;
  private readonly checkpoints: Collection<CheckpointDoc>;
  constructor(private readonly db: Db) {
    this.col = db.collection<SyncDoc>('syncs');
    this.checkpoints = db.collection<CheckpointDoc>('sync_checkpoints');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ environment: 1, provider_config_key: 1 });
    // deleteForConnection reads `_id` ranges now; these indexes only cost writes.
    await this.checkpoints.dropIndex('connection_1').catch(() => undefined);
    await this.col.dropIndex('connection_1').catch(() => undefined);
    await runOnce(this.db, 'syncs_by_key', () => this.moveToKeyedIds());
  }

  /**
   * Earlier versions gave sync states random `_id`s, found by (connection, name, variant)
   * with a unique index: each moves to its syncId (inserted there, then deleted where it
   * was; a copy already there, written by a newer process, wins). Idempotent.
   */
  private async moveToKeyedIds(): Promise<void> {
    // The key is the `_id` now; the old unique index would refuse the copy beside its original.
    await this.col.dropIndex('connection_1_name_1_variant_1').catch(() => undefined);
    for await (const doc of this.col.find({})) {
      const id = syncId(doc);
      if (doc._id === id) continue;
      try {
        await this.col.insertOne({ ...doc, _id: id });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      await this.col.deleteOne({ _id: doc._id });
    }
  }

  /** Creates the sync's state document if missing (idempotent; concurrent callers get the same one). */
  async ensure(input: NewSyncState): Promise<SyncDoc> {
    const _id = syncId(input);
    return (await this.col.findOne({ _id })) ?? (await this.create(input)) ?? ((await this.col.findOne({ _id })) as SyncDoc);
  }

  /** A new sync state (a variant), or null when one with this key exists already (a concurrent create won). */
  async create(input: NewSyncState): Promise<SyncDoc | null> {
    const now = new Date();
    const doc: SyncDoc = {
      _id: syncId(input),
      ...input,
      frequency: null,
      last_success_started_at: null,
      last_run: null,
      record_count: {},
      created_at: now,
      updated_at: now,
    };
    try {
      await this.col.insertOne(doc);
      return doc;
    } catch (err) {
      if (isDuplicateKey(err)) return null;
      throw err;
    }
  }

  async get(key: SyncKey): Promise<SyncDoc | null> {
    return this.col.findOne({ _id: syncId(key) });
  }

  /** The connection's syncs by name and variant: one `_id` range (their ids share the connection's prefix). */
  async listForConnection(connection: string): Promise<SyncDoc[]> {
    const docs = await this.col
      .find({ _id: keyPrefixRange(connection) })
      .sort({ _id: 1 })
      .toArray();
    return docs.sort((a, b) => (a.name === b.name ? cmp(a.variant, b.variant) : cmp(a.name, b.name)));
  }

  /** Every sync state of every environment, in `_id` order (the worker's schedule reconcile pass reads them all). */
  all(): AsyncIterable<SyncDoc> {
    return this.col.find({}).sort({ _id: 1 });
  }

  async markRunStarted(key: SyncKey, runId: string, startedAt: Date): Promise<void> {
    await this.col.updateOne(
      { _id: syncId(key) },
      {
        $set: {
          last_run: { id: runId, status: 'RUNNING', started_at: startedAt, finished_at: null, result: null, error: null },
          updated_at: new Date(),
        },
      },
    );
  }

  async markRunSucceeded(key: SyncKey, run: { id: string; startedAt: Date; result: ModelCounts; recordCount: Record<string, number> }): Promise<void> {
    const now = new Date();
    await this.col.updateOne(
      { _id: syncId(key) },
      {
        $set: {
          last_run: { id: run.id, status: 'SUCCESS', started_at: run.startedAt, finished_at: now, result: run.result, error: null },
          last_success_started_at: run.startedAt,
          record_count: run.recordCount,
          updated_at: now,
        },
      },
    );
  }

  async markRunFailed(key: SyncKey, run: { id: string; startedAt: Date; error: { code: string; message: string; detail?: unknown } }): Promise<void> {
    const now = new Date();
    await this.col.updateOne(
      { _id: syncId(key) },
      {
        $set: {
          last_run: { id: run.id, status: 'ERROR', started_at: run.startedAt, finished_at: now, result: null, error: run.error },
          updated_at: now,
        },
      },
    );
  }

  async getCheckpoint(key: SyncKey): Promise<unknown> {
    const doc = await this.checkpoints.findOne({ _id: checkpointId(key) });
    if (doc) return doc.checkpoint;
    return (await this.get(key))?.checkpoint ?? null;
  }

  async saveCheckpoint(key: SyncKey, checkpoint: unknown): Promise<void> {
    await this.checkpoints.replaceOne({ _id: checkpointId(key) }, { connection: key.connection, checkpoint, updated_at: new Date() }, { upsert: true });
  }

  /** The connection's frequency override (null: the sync's default); the schedule carries the interval itself. */
  async setFrequency(key: SyncKey, frequency: string | null): Promise<void> {
    await this.col.updateOne({ _id: syncId(key) }, { $set: { frequency, updated_at: new Date() } });
  }

  /** `reset`: the next run starts from scratch (no checkpoint, no lastSyncDate). */
  async reset(key: SyncKey): Promise<void> {
    await this.checkpoints.deleteOne({ _id: checkpointId(key) });
    await this.col.updateOne({ _id: syncId(key) }, { $set: { last_success_started_at: null, updated_at: new Date() }, $unset: { checkpoint: '' } });
  }

  /** One sync's state and checkpoint (a deleted variant). */
  async delete(key: SyncKey): Promise<void> {
    await this.col.deleteOne({ _id: syncId(key) });
    await this.checkpoints.deleteOne({ _id: checkpointId(key) });
  }

  /** A connection's sync states and checkpoints: their `_id`s start with the connection's (one range each). */
  async deleteForConnection(connection: string): Promise<void> {
    await this.col.deleteMany({ _id: keyPrefixRange(connection) });
    await this.checkpoints.deleteMany({ _id: keyPrefixRange(connection) });
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
