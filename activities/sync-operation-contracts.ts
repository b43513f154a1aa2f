import type { SyncOperationKind, SyncOperationProgress } from '../store/sync-operations';

/** One sync-control step for one connection: what POST /sync/trigger, /start and /pause ask for. */
export interface SyncOperation {
  kind: SyncOperationKind;
  /** The syncs it applies to (the API resolved "all" to names before starting). */
  syncs: Array<{ name: string; variant: string }>;
  /** trigger only: start from scratch (`reset`), first dropping the stored records (`emptyCache`). */
  reset: boolean;
  emptyCache: boolean;
}

/** What the syncFanOut workflow is started with, and continues as new with. */
export interface SyncFanOutInput {
  /** SyncOperationDoc._id, where progress is written. */
  operationKey: string;
  environment: string;
  providerConfigKey: string;
  operation: SyncOperation;
  /** Where the walk over the integration's connections stands (null: at the start). */
  after: string | null;
  progress: SyncOperationProgress;
}

export interface FanOutBatchInput extends SyncFanOutInput {
  batchSize: number;
}

export interface FanOutBatchResult {
  /** The cursor after this batch; null when every connection has been visited. */
  after: string | null;
  progress: SyncOperationProgress;
}
