import type { Collection, Db } from 'mongodb';
import type { ModelCounts, SyncRunError, SyncRunType } from './syncs';

export interface SyncRunDoc {
  _id: string; // the Temporal run id of the syncRun workflow
  workflow_id: string;
  environment: string;
  connection: string;
  sync_name: string;
  variant: string;
  type: SyncRunType;
  status: 'RUNNING' | 'SUCCESS' | 'ERROR';
  started_at: Date;
  finished_at: Date | null;
  result: ModelCounts | null;
  error: SyncRunError | null;
  /**
   * Each model's committed change mark when the run started: the run's changes are the ones
   * after it, where its `sync` webhook's records cursor points (runs of earlier versions: absent).
   */
  start_seqs?: Record<string, number>;
}

export class SyncRunStore {
  private readonly col: Collection<SyncRunDoc>;
  constructor(db: Db) {
    this.col = db.collection<SyncRunDoc>('sync_runs');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ connection: 1, sync_name: 1, started_at: -1 });
  }

  /** Idempotent: a retried activity finds the run it already created. */
  async start(run: Omit<SyncRunDoc, 'status' | 'finished_at' | 'result' | 'error'>): Promise<SyncRunDoc> {
    // The marks of the first attempt stay: a retry may come after the run wrote changes.
    const doc = await this.col.findOneAndUpdate(
      { _id: run._id },
      { $setOnInsert: { ...run, status: 'RUNNING', finished_at: null, result: null, error: null } },
      { upsert: true, returnDocument: 'after' },
    );
    return doc as SyncRunDoc;
  }

  async get(id: string): Promise<SyncRunDoc | null> {
    return this.col.findOne({ _id: id });
  }

  /** Records the run's end; the run as it now stands (null if it was never started). */
  async finish(id: string, outcome: { status: 'SUCCESS'; result: ModelCounts } | { status: 'ERROR'; error: SyncRunError }): Promise<SyncRunDoc | null> {
    return this.col.findOneAndUpdate(
      { _id: id },
      {
        $set: {
          status: outcome.status,
          finished_at: new Date(),
          result: outcome.status === 'SUCCESS' ? outcome.result : null,
          error: outcome.status === 'ERROR' ? outcome.error : null,
        },
      },
      { returnDocument: 'after' },
    );
  }

  /** A sync's latest runs, newest first (the index's order: connection, sync, start). */
  async recent(connection: string, syncName: string, variant: string, limit: number): Promise<SyncRunDoc[]> {
    return this.col.find({ connection, sync_name: syncName, variant }).sort({ started_at: -1 }).limit(limit).toArray();
  }
}
