import type { Collection, Db } from 'mongodb';
import { prefixRange, timeKey, uniqueSuffix } from './key-range';
import type { RecordAction, RecordScope } from './record-doc';
import { recordKey, scopeFields, type ScopeParts } from './record-keys';
import { ensureExpiry, type ExpiryRule } from './ttl';

/**
 * One batch of a run: the ids it saved (delete detection of a full run) and what it
 * changed, in order. A run's finish reads its own batches instead of scanning `records`.
 */
export interface RunBatchDoc {
  /** batchKey(scope, run, time): a run's batches of a scope are one `_id` range, in the order they were logged. */
  _id: string;
  run_id: string;
  connection: string;
  model: string;
  variant: string;
  /** Omitted while the scope held nothing before the run: there is nothing to detect then. */
  seen?: IdList;
  /** Ids by what the batch did to them (an id is in one list at most), plain ids to keep the log small. */
  added: IdList;
  updated: IdList;
  deleted: IdList;
  /** Which of those ids were live before this run first changed them. */
  was_live: IdList;
  created_at: Date;
}

/**
 * Ids as one string, URI-encoded and one a line: FerretDB decodes an array of a thousand
 * ids on every insert and read, one string at a fraction of that. Batches logged by earlier
 * versions hold arrays, read as they are.
 */
type IdList = string | string[];

function encodeIds(ids: string[]): string {
  return ids.map(encodeURIComponent).join('\n');
}

export function decodeIds(list: IdList | undefined): string[] {
  if (list === undefined) return [];
  if (Array.isArray(list)) return list;
  return list === '' ? [] : list.split('\n').map(decodeURIComponent);
}

export interface RunChange {
  id: string;
  action: RecordAction;
  /** Whether the record was live before this run first changed it. */
  live_before: boolean;
}

/** The batch log of runs (`record_run_batches`): written per batch, read and dropped by the run's finish. */
export class RunBatches {
  private readonly col: Collection<RunBatchDoc>;

  constructor(db: Db) {
    this.col = db.collection<RunBatchDoc>('record_run_batches');
  }

  /** Drops the index earlier versions read batches by (they are `_id` ranges now); batches of runs that never finished expire. */
  async ensureIndexes(secondary: boolean): Promise<ExpiryRule> {
    if (secondary) await this.col.dropIndex('run_id_1_connection_1_model_1_variant_1').catch(() => undefined);
    // Batches of runs that never finished are garbage after a few days.
    return ensureExpiry(this.col, 'created_at', 3 * 86_400);
  }

  /** Logs a batch of a run (see RunBatchDoc). */
  async log(scope: RecordScope, runId: string, seen: string[] | undefined, changes: RunChange[]): Promise<void> {
    if (!seen?.length && changes.length === 0) return;
    const ids = (action: RecordAction) => encodeIds(changes.filter((c) => c.action === action).map((c) => c.id));
    const at = new Date();
    await this.col.insertOne({
      _id: batchKey(scope, runId, at),
      run_id: runId,
      ...scopeFields(scope),
      ...(seen ? { seen: encodeIds(seen) } : {}),
      added: ids('ADDED'),
      updated: ids('UPDATED'),
      deleted: ids('DELETED'),
      was_live: encodeIds(changes.filter((c) => c.live_before).map((c) => c.id)),
      created_at: at,
    });
  }

  /** The run's batches of the scope, in the order they were logged. */
  ofRun(scope: RecordScope, runId: string): Promise<RunBatchDoc[]> {
    return this.col.find(batchRange(scope, runId)).sort({ _id: 1 }).toArray();
  }

  /** What this run changed in the scope so far (earlier attempts), from its batch log. */
  async changesOf(scope: RecordScope, runId: string): Promise<Map<string, RunChange>> {
    return mergeBatches(await this.ofRun(scope, runId));
  }

  async dropRun(scope: RecordScope, runId: string): Promise<void> {
    await this.col.deleteMany(batchRange(scope, runId));
  }

  /**
   * Batches logged by earlier versions had generated `_id`s and were found by a filter that
   * FerretDB answers by reading the whole collection: each moves to its batchKey (a copy
   * first, then the original goes). Batches live only while their run does, so there are few.
   */
  async moveToKeyedIds(): Promise<void> {
    for await (const doc of this.col.find({})) {
      if (typeof doc._id === 'string') continue;
      const key = batchKey(doc, doc.run_id, doc.created_at);
      await this.col.insertOne({ ...doc, _id: key }).catch((err: unknown) => {
        if (!(err instanceof Error && 'code' in err && err.code === 11000)) throw err;
      });
      await this.col.deleteOne({ _id: doc._id });
    }
  }
}

/** A run's batch log merged: the last entry of each id wins. */
export function mergeBatches(batches: RunBatchDoc[]): Map<string, RunChange> {
  const last = new Map<string, RunChange>();
  for (const b of batches) {
    const wasLive = new Set(decodeIds(b.was_live));
    for (const action of ['ADDED', 'UPDATED', 'DELETED'] as const) {
      for (const id of decodeIds(b[action.toLowerCase() as 'added' | 'updated' | 'deleted'])) last.set(id, { id, action, live_before: wasLive.has(id) });
    }
  }
  return last;
}

/** A run's batch of a scope: the scope's key, the run, then the time it was logged (so `_id` order is log order). */
function batchKey(scope: ScopeParts, runId: string, at: Date): string {
  return `${batchPrefix(scope, runId)}${timeKey(at)}|${uniqueSuffix()}`;
}

function batchPrefix(scope: ScopeParts, runId: string): string {
  return `${recordKey(scope, '')}${encodeURIComponent(runId)}|`;
}

function batchRange(scope: ScopeParts, runId: string) {
  return { _id: prefixRange(batchPrefix(scope, runId)) };
}
