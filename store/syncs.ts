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
  /** Integration-level checkpoint kept across runs (ctx.getCheckpoint / saveCheckpoint). */
  checkpoint: unknown;
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

export class SyncStore {
  private readonly col: Collection<SyncDoc>;
  constructor(db: Db) {
    this.col = db.collection<SyncDoc>('syncs');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ connection: 1, name: 1, variant: 1 }, { unique: true });
    await this.col.createIndex({ environment: 1, provider_config_key: 1 });
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
          checkpoint: null,
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

  async saveCheckpoint(key: SyncKey, checkpoint: unknown): Promise<void> {
    await this.col.updateOne(
      { connection: key.connection, name: key.name, variant: key.variant },
      { $set: { checkpoint, updated_at: new Date() } },
    );
  }

  /** `reset`: the next run starts from scratch (no checkpoint, no lastSyncDate). */
  async reset(key: SyncKey): Promise<void> {
    await this.col.updateOne(
      { connection: key.connection, name: key.name, variant: key.variant },
      { $set: { checkpoint: null, last_success_started_at: null, updated_at: new Date() } },
    );
  }

  async deleteForConnection(connection: string): Promise<void> {
    await this.col.deleteMany({ connection });
  }
}
