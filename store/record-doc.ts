/** A stored record and its scope: the document shape the record store, its index and its pages share. */

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
  /** Set by `PATCH /records/prune`: `data` was dropped (ids, hash and metadata stay); a new version has its payload again. */
  pruned_at?: Date | null;
}
