import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { keyId, keyPrefixRange } from './key-ids';
import { timeKey } from './key-range';
import { ensureExpiry, type ExpiryRule } from './ttl';

/** How long a finished (or abandoned) operation stays readable in GET /sync/status. */
const OPERATION_RETENTION_S = 7 * 24 * 3600;

export type SyncOperationKind = 'trigger' | 'start' | 'pause';

export interface SyncOperationProgress {
  /** Connections the operation was applied to. */
  done: number;
  /** Connections it could not be applied to (the first few reasons are in `errors`). */
  failed: number;
  /** Connections that had nothing to do (e.g. no such variant). */
  skipped: number;
  errors: Array<{ connection_id: string; code: string; message: string }>;
}

/**
 * A call that addresses every connection of an integration (trigger, reset, start, pause),
 * carried out in the background by a workflow; GET /sync/status shows its progress.
 */
export interface SyncOperationDoc extends SyncOperationProgress {
  /** keyId(environment, provider_config_key, created time, id): an integration's operations are one `_id` range, oldest first. */
  _id: string;
  /** The public id (`sop_…`) the API answers with. */
  id: string;
  environment: string;
  provider_config_key: string;
  kind: SyncOperationKind;
  syncs: Array<{ name: string; variant: string }>;
  opts: { reset: boolean; emptyCache: boolean };
  status: 'RUNNING' | 'SUCCESS' | 'ERROR';
  /** Connections of the integration when the operation began (ones added meanwhile may be included too). */
  total: number;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  expires_at: Date;
}

export type NewSyncOperation = Pick<SyncOperationDoc, 'environment' | 'provider_config_key' | 'kind' | 'syncs' | 'opts' | 'total'>;

export class SyncOperationStore {
  private readonly col: Collection<SyncOperationDoc>;
  constructor(db: Db) {
    this.col = db.collection<SyncOperationDoc>('sync_operations');
  }

  async ensureIndexes(): Promise<ExpiryRule> {
    return ensureExpiry(this.col, 'expires_at', 0);
  }

  async create(op: NewSyncOperation, now = new Date()): Promise<SyncOperationDoc> {
    const id = `sop_${randomUUID().replace(/-/g, '')}`;
    const doc: SyncOperationDoc = {
      ...op,
      _id: keyId(op.environment, op.provider_config_key, timeKey(now), id),
      id,
      status: 'RUNNING',
      done: 0,
      failed: 0,
      skipped: 0,
      errors: [],
      created_at: now,
      updated_at: now,
      finished_at: null,
      expires_at: new Date(now.getTime() + OPERATION_RETENTION_S * 1000),
    };
    await this.col.insertOne(doc);
    return doc;
  }

  /**
   * Sets the running totals (absolute, so a retried write changes nothing) and, once the
   * operation is finished or abandoned, its outcome: ERROR if any connection failed.
   */
  async saveProgress(key: string, progress: SyncOperationProgress, state: 'running' | 'finished' | 'abandoned', now = new Date()): Promise<void> {
    const outcome =
      state === 'running' ? {} : { status: state === 'abandoned' || progress.failed > 0 ? ('ERROR' as const) : ('SUCCESS' as const), finished_at: now };
    await this.col.updateOne(
      { _id: key },
      { $set: { ...progress, ...outcome, updated_at: now, expires_at: new Date(now.getTime() + OPERATION_RETENTION_S * 1000) } },
    );
  }

  /** Forgets an operation whose workflow could not be started (nothing was done). */
  async remove(key: string): Promise<void> {
    await this.col.deleteOne({ _id: key });
  }

  /** The integration's latest operations, newest first. */
  async listRecent(environment: string, providerConfigKey: string, limit: number): Promise<SyncOperationDoc[]> {
    return this.col
      .find({ _id: keyPrefixRange(environment, providerConfigKey) })
      .sort({ _id: -1 })
      .limit(limit)
      .toArray();
  }
}
