import type { Db } from 'mongodb';
import type { ScopeCounts } from './record-counters';
import { visibleSeq } from './record-counters';
import type { RecordScope } from './record-doc';
import { partialScopeKey, recordKey, scopeKey } from './record-keys';
import { RecordMigrations } from './record-migrations';
import { readPage, type PageQuery, type RecordPage, type RecordPosition } from './record-pages';
import { recordParts, type RecordParts } from './record-parts';
import { pruneRecords, type PruneResult } from './record-pruning';
import { finishScope } from './record-run-end';
import { openRecordWriter, saveNow, type BatchCounts, type IncomingRecord, type RecordWriter } from './record-writer';
import type { ExpiryRule } from './ttl';

export type { RecordAction, RecordDoc, RecordScope } from './record-doc';
export type { ScopeCounts } from './record-counters';
export type { PruneResult } from './record-pruning';
export type { IncomingRecord, RecordWriter } from './record-writer';
export { recordKey } from './record-keys';

/** What a page read takes: the store's side of `GET /records`' query (api/schemas/records.ts), in stored terms. */
export type { PageQuery } from './record-pages';

/**
 * The records engine. Writes only what changed (by canonical hash), so a run over
 * unchanged data writes nothing to `records`; detects deletions at the end of a complete
 * full run from the ids that run saw; and pages by a per-scope sequence with a committed
 * high-water mark, so a reader paging while a sync writes never skips a record.
 *
 * Its parts, one job each:
 * - the collections (store/record-parts.ts): stored versions (record-versions.ts), the
 *   scopes' counters (record-counters.ts), the runs' batch logs (record-batches.ts), the
 *   writers' index (record-index.ts) and the readers' change feed (record-feed.ts);
 * - the writer of a run or an action's save (record-writer.ts): reads no record on the way
 *   of a run, replaces a changed version by delete and insert with the new one parked in
 *   `record_swaps` in between, so a crash loses nothing;
 * - the end of a run (record-run-end.ts): delete detection, counts, index compaction;
 * - pages (record-pages.ts), pruning (record-pruning.ts), and what earlier versions left
 *   (record-migrations.ts).
 *
 * One writer per scope at a time is assumed (Temporal never runs two attempts of one
 * sync together, barring a worker that lost its heartbeat but keeps running).
 */
export class RecordStore {
  /** @internal */
  readonly parts: RecordParts;
  private readonly migrations: RecordMigrations;

  constructor(db: Db) {
    this.parts = recordParts(db);
    this.migrations = new RecordMigrations(db, this.parts);
  }

  /** @internal */
  get index() {
    return this.parts.index;
  }

  /** @internal */
  get feed() {
    return this.parts.feed;
  }

  /** @internal */
  get counters() {
    return this.parts.counters;
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    const secondary = await this.parts.versions.ensureIndexes();
    const batchesExpiry = await this.parts.batches.ensureIndexes(secondary);
    await this.migrations.atStart();
    await this.parts.index.ensureIndexes(secondary);
    return [batchesExpiry];
  }

  /** A writer for one scope and run (see record-writer.ts). */
  openWriter(scope: RecordScope, runId: string): Promise<RecordWriter> {
    return openRecordWriter(this.parts, this.migrations, scope, runId);
  }

  /** Saves what an action wrote to the provider, visible at once, beside a sync's run (see record-writer.ts). */
  saveNow(scope: RecordScope, runId: string, records: IncomingRecord[]): Promise<BatchCounts> {
    return saveNow(this.parts, this.migrations, scope, runId, records);
  }

  /** Closes a run's scope: delete detection of a complete full run, and its counts (see record-run-end.ts). */
  finishScope(scope: RecordScope, runId: string, detectDeletes: boolean, now = new Date(), runStartedAt?: Date): Promise<ScopeCounts> {
    return finishScope(this.parts, scope, runId, detectDeletes, now, runStartedAt);
  }

  /** The scope's committed change mark (0 before its first change): every later change has a higher seq. */
  committedSeq(scope: RecordScope): Promise<number> {
    return this.parts.counters.committedSeq(scope);
  }

  /**
   * A page of the scope's records in change order, up to its committed mark: O(page) reads
   * by `_id` only (see store/record-pages.ts). A scope stored before the feed existed gets
   * its feed written by its first reader (or writer), once.
   */
  async list(scope: RecordScope, q: PageQuery): Promise<RecordPage> {
    const counter = await this.parts.counters.get(scope);
    if (!counter) return { records: [], next: null };
    if (!counter.feed && !q.ids) await this.migrations.buildFeed(scope);
    const source = {
      feed: this.parts.feed,
      recordKey: (id: string) => recordKey(scope, id),
      fetch: (keys: string[]) => this.parts.versions.fetchByKeys(keys),
    };
    return readPage(source, scopeKey(scope), scope.environment, visibleSeq(counter), q);
  }

  /** Drops the payloads of the scope's records up to `until`, inclusive (see record-pruning.ts). */
  prune(scope: RecordScope, until: RecordPosition, limit: number, now = new Date()): Promise<PruneResult> {
    return pruneRecords(this.parts, this.migrations, scope, until, limit, now);
  }

  /** Drops cached records (connection deleted, or a reset with emptyCache); sequences keep counting up. */
  async deleteScope(scope: Omit<RecordScope, 'model' | 'variant'> & { model?: string; variant?: string }): Promise<void> {
    const { counters, feed, index, versions } = this.parts;
    // Every key of the connection starts with its id, of a model with both: `_id` ranges. A
    // variant across models is no key prefix: one range per scope of it, from the counters.
    const prefixes =
      scope.variant && !scope.model ? await counters.scopesOfVariant({ connection: scope.connection, variant: scope.variant }) : [partialScopeKey(scope)];
    for (const prefix of prefixes) {
      await versions.deletePrefix(prefix);
      await feed.deletePrefix(prefix);
      // Nothing left: the index and the feed are exact again as empty ones.
      await counters.markEmptied(prefix);
      await index.deleteScope(prefix);
    }
  }
}
