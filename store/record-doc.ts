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

/**
 * A record as stored: `data` as one JSON string, `data_json`. FerretDB decodes and
 * re-encodes every field of every document it returns (about 0.2 ms for a record of a few
 * dozen nested fields); one string field costs it a fraction of that, to read and to
 * write. Records written before this layout hold `data` as a document, read as they are
 * and rewritten in this layout by their next change (store/record-versions.ts).
 */
export type StoredRecord = Omit<RecordDoc, 'data'> & { data_json?: string; data?: Record<string, unknown> };
