import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';

export type ModelCounts = Record<string, { added: number; updated: number; deleted: number }>;

export interface SyncDoc {
  _id: string;
  environment: string;
  connection: string; // ConnectionDoc._id
  connection_id: string;
  provider_config_key: string;
  name: string;
  variant: string;
  paused: boolean;
  frequency: string | null; // null: the sync's default
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

function checkpointId(key: SyncKey): string {
  return [key.connection, key.name, key.variant].map(encodeURIComponent).join('|');
}

export class SyncStore {
  private readonly col: Collection<SyncDoc>;
  private readonly checkpoints: Collection<CheckpointDoc>;
  constructor(db: Db) {
    this.col = db.collection<SyncDoc>('syncs');
    this.checkpoints = db.collection<CheckpointDoc>('sync_checkpoints');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ connection: 1, name: 1, variant: 1 }, { unique: true });
    await this.col.createIndex({ environment: 1, provider_config_key: 1 });
    await this.checkpoints.createIndex({ connection: 1 });
  }

  /** Creates the sync's state document if missing (idempotent). */
  async ensure(input: Pick<SyncDoc, 'environment' | 'connection' | 'connection_id' | 'provider_config_key' | 'name' | 'variant'>): Promise<SyncDoc> {
    const now = new Date();
    const doc = await this.col.findOneAndUpdate(
      { connection: input.connection, name: input.name, variant: input.variant },
      {
        $setOnInsert: {
          _id: randomUUID(),
          ...input,
          paused: false,
          frequency: null,
          last_success_started_at: null,
          last_run: null,
          record_count: {},
          created_at: now,
          updated_at: now,
        },
      },
      { upsert: true, returnDocument: 'after' },
    );
    return doc as SyncDoc;
  }

  async get(key: SyncKey): Promise<SyncDoc | null> {
    return this.col.findOne({ connection: key.connection, name: key.name, variant: key.variant });
  }

  async listForConnection(connection: string): Promise<SyncDoc[]> {
    return this.col.find({ connection }).sort({ name: 1, variant: 1 }).toArray();
  }

  async markRunStarted(key: SyncKey, runId: string, startedAt: Date): Promise<void> {
    await this.col.updateOne(
      { connection: key.connection, name: key.name, variant: key.variant },
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
      { connection: key.connection, name: key.name, variant: key.variant },
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
      { connection: key.connection, name: key.name, variant: key.variant },
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

  /** `reset`: the next run starts from scratch (no checkpoint, no lastSyncDate). */
  async reset(key: SyncKey): Promise<void> {
    await this.checkpoints.deleteOne({ _id: checkpointId(key) });
    await this.col.updateOne(
      { connection: key.connection, name: key.name, variant: key.variant },
      { $set: { last_success_started_at: null, updated_at: new Date() }, $unset: { checkpoint: '' } },
    );
  }

  async deleteForConnection(connection: string): Promise<void> {
    await this.col.deleteMany({ connection });
    await this.checkpoints.deleteMany({ connection });
  }
}
