import type { Collection, Db } from 'mongodb';
import { keyPrefix, readRangePage, timeKey, uniqueSuffix, encodeCursor, decodeCursor, type Direction } from './key-range';
import { rekeyEarlierDocuments, runOnce } from './migrations';
import { ensureExpiry, type ExpiryRule } from './ttl';
import { RequestLogHours } from './request-log-hours';

/** One third-party request, as an operator sees it in `GET /logs`. Secrets already removed. */
export interface RequestLogDoc {
  at: Date;
  environment: string;
  connection: string | null;
  connection_id: string | null;
  integration: string;
  operation: string; // sync:<name>, action:<name>, proxy, auth
  run_id: string | null;
  method: string;
  url: string;
  status: number | null;
  duration_ms: number;
  attempt: number;
  rate_limit_wait_ms: number;
  error: string | null;
  /** The provider's id of the request (its `requestIdHeader`), to quote to its support; absent in entries written before it was kept. */
  provider_request_id?: string | null;
}

/** An entry as read back: `id` (`<time>|<suffix>`) is the same in every scope it is listed in. */
export interface RequestLogEntry extends RequestLogDoc {
  id: string;
}

/**
 * How `request_logs` is laid out (every read is an `_id` range, see key-range.ts). Each entry
 * is written once, in one insert, under each scope it is read by:
 *   `<env>|a|<time>|<suffix>`               the environment's log
 *   `<env>|c|<connection_id>|<time>|<suffix>` one connection id's (all integrations)
 *   `<env>|i|<integration>|<time>|<suffix>`   one integration's
 * plus, where the server has no TTL indexes, `#expiry|<time>|<suffix>` → the keys above (one
 * per entry, or one per appended batch, at its latest entry's time), so the retention sweep
 * reads what expired as one range instead of scanning the log. Full copies
 * rather than pointers: an entry is ~300 bytes, and a page is then one read, not two.
 * (`#` never starts a scope: URI-encoding turns it into `%23`.)
 *
 * A stored entry is `{ _id, at, json }`: its fields as one JSON string, `at` beside it as a
 * date (what a TTL index expires by). Nothing is ever selected by a field other than `_id`,
 * and one string is far cheaper for the server to store than fifteen fields: measured on
 * FerretDB, its CPU per logged call (three documents) fell from ~0.7 to ~0.36 ms, and the
 * API's from ~0.29 to ~0.16 ms (one JSON.stringify for the three copies instead of three
 * BSON encodings of every field). Entries written before (every field a field of its own,
 * `entry` the tail) are read as they are.
 */
type StoredEntry = { _id: string; at: Date; json: string };
type EarlierEntry = RequestLogDoc & { _id: string; entry?: string };
type ExpiryDoc = { _id: string; at: Date; ids: string[] };
type Stored = StoredEntry | ExpiryDoc;
/** What a range read may meet: an entry of either layout. */
type ReadEntry = StoredEntry | EarlierEntry;

const EXPIRY_PREFIX = '#expiry|';
/** `_id $in` lists of a sweep's deletes stay this short. */
const DELETE_CHUNK = 5_000;

/**
 * Entries appended within this long of the first unwritten one are written together, in one
 * insert: a proxy call or a sync's request then costs a share of a write, not a write of its
 * own. One insert per call was the proxy's largest cost in a profile; measured on FerretDB,
 * the client's CPU per entry is 0.48 ms alone, 0.12 ms in fours, 0.07 ms in tens.
 */
const APPEND_FLUSH_MS = 10;
/** A batch this large is written at once, even while another is being written. */
const APPEND_MAX_ENTRIES = 500;

export interface RequestLogQuery {
  environment: string;
  connectionId?: string;
  integration?: string;
  operation?: string;
  runId?: string;
  /** Any further condition (status, errors only, ...): checked in memory within the scope's range. */
  match?: (entry: RequestLogEntry) => boolean;
  /** Inclusive time bounds. */
  from?: Date;
  to?: Date;
  /** The `nextCursor` of the previous page (same query). */
  cursor?: string;
  limit: number;
  /** Newest first by default. */
  direction?: Direction;
  /** Entries examined per call at most when filters beyond the scope apply (default 5,000). */
  maxExamined?: number;
}

export interface RequestLogPage {
  entries: RequestLogEntry[];
  /** Null when the range holds nothing more. */
  nextCursor: string | null;
}

/** What to do when a batch of appended entries could not be written (they are not retried). */
export type AppendFailure = (err: unknown, entries: number) => void;

export class RequestLogStore {
  private readonly col: Collection<Stored>;
  /** Expiry keys are written unless the server expires entries itself. */
  private writeExpiryKeys = true;
  /** Appended entries not written yet, each with the caller's failure report. */
  private pending: Array<{ docs: Stored[]; at: Date; onFailure: AppendFailure }> = [];
  private flushTimer: NodeJS.Timeout | null = null;
  /** Batches being written: flush() waits for them too. */
  private readonly writing = new Set<Promise<void>>();
  /**
   * Appended entries' suffixes: this store's random part and a count. Unique across processes
   * as random ones are, without 8 random bytes per entry (randomBytes was 2 % of the API's
   * CPU per proxied call in a profile); entries of one millisecond keep their order.
   */
  private readonly suffixPrefix = uniqueSuffix().slice(0, 12);
  private suffixCount = 0;

  /** Calls per integration and hour, counted as entries are written (the console's chart). */
  readonly hours: RequestLogHours;

  constructor(
    private readonly db: Db,
    private readonly ttlDays: number,
  ) {
    this.col = db.collection<Stored>('request_logs');
    this.hours = new RequestLogHours(db, ttlDays);
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    const rule = await ensureExpiry(this.col, 'at', this.ttlDays * 86_400, { sweep: (cutoff) => this.sweepExpired(cutoff) });
    this.writeExpiryKeys = !rule.native;
    // Reads are `_id` ranges now; these only cost writes (and on FerretDB served nothing).
    for (const name of ['environment_1_connection_id_1_at_-1', ...(rule.native ? [] : ['at_1'])]) {
      await this.col.dropIndex(name).catch(() => undefined);
    }
    await runOnce(this.db, 'request_logs_keyed', () => this.adoptEarlierEntries());
    return [rule, await this.hours.ensureIndexes()];
  }

  async insert(entry: RequestLogDoc, suffix: string = uniqueSuffix()): Promise<void> {
    await this.col.insertMany(this.documentsFor(entry, suffix), { ordered: false });
    this.hours.count(entry);
  }

  /**
   * Writes an entry in the background, batched (how provider calls are logged: the call never
   * waits for its entry). A batch is written APPEND_FLUSH_MS after its first entry, or, while
   * a batch is being written, as soon as that one is done: one insert at a time, so the
   * busier the process, the larger the batches (and an entry trails its call by about one
   * insert's time). The entry is keyed by its own `at` (the call's time), so batching changes
   * no order. A graceful stop calls flush() before closing the database: nothing is lost.
   */
  append(entry: RequestLogDoc, onFailure: AppendFailure): void {
    this.pending.push({ docs: this.documentsFor(entry, this.nextSuffix(), false), at: entry.at, onFailure });
    this.hours.count(entry);
    if (this.pending.length >= APPEND_MAX_ENTRIES) {
      void this.writePending();
    } else if (this.flushTimer === null && this.writing.size === 0) {
      this.flushTimer = setTimeout(() => void this.writePending(), APPEND_FLUSH_MS);
      // A process that ends without a graceful stop loses at most this batch; the timer does not hold it open.
      this.flushTimer.unref();
    }
  }

  /** Writes every appended entry now and waits for all batches under way (graceful stop, tests). */
  async flush(): Promise<void> {
    await this.writePending();
    while (this.writing.size > 0) await Promise.all([...this.writing]);
    await this.hours.flush();
  }

  private writePending(): Promise<void> {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return Promise.resolve();
    const docs = batch.flatMap((b) => b.docs);
    if (this.writeExpiryKeys) {
      // One expiry key for the batch, at its latest entry: a document less per entry for the
      // server to write; the batch's entries are swept together, a few ms after the oldest expired.
      const latest = new Date(Math.max(...batch.map((b) => b.at.getTime())));
      docs.push({ _id: `${EXPIRY_PREFIX}${timeKey(latest)}|${this.nextSuffix()}`, at: latest, ids: docs.map((d) => d._id) });
    }
    const write: Promise<void> = this.col
      .insertMany(docs, { ordered: false })
      .then(
        () => undefined,
        (err: unknown) => {
          // Reported once per caller's handler, not once per entry.
          const counts = new Map<AppendFailure, number>();
          for (const b of batch) counts.set(b.onFailure, (counts.get(b.onFailure) ?? 0) + 1);
          for (const [report, n] of counts) report(err, n);
        },
      )
      .finally(() => {
        this.writing.delete(write);
        // Appended while this batch was written: they have waited long enough.
        if (this.writing.size === 0 && this.pending.length > 0) void this.writePending();
      });
    this.writing.add(write);
    return write;
  }

  private nextSuffix(): string {
    this.suffixCount += 1;
    return this.suffixPrefix + this.suffixCount.toString(36).padStart(8, '0');
  }

  /** One page of the log of a scope, by time; the narrowest scope key the query names is read. */
  async range(q: RequestLogQuery): Promise<RequestLogPage> {
    const direction = q.direction ?? 'desc';
    const prefix = q.connectionId
      ? keyPrefix(q.environment, 'c', q.connectionId)
      : q.integration
        ? keyPrefix(q.environment, 'i', q.integration)
        : keyPrefix(q.environment, 'a');
    const residual: Array<(e: RequestLogEntry) => boolean> = [];
    if (q.connectionId && q.integration) residual.push((e) => e.integration === q.integration);
    if (q.operation) residual.push((e) => e.operation === q.operation);
    if (q.runId) residual.push((e) => e.run_id === q.runId);
    if (q.match) residual.push(q.match);
    // Each key's entry decoded once, for the filters and the page alike.
    const page = await readRangePage<ReadEntry, RequestLogEntry>(
      this.col as unknown as Collection<ReadEntry>,
      {
        prefix,
        from: q.from,
        to: q.to,
        after: q.cursor === undefined ? undefined : decodeCursor(q.cursor),
        direction,
        limit: q.limit,
        match: residual.length ? (entry) => residual.every((m) => m(entry)) : undefined,
        maxExamined: q.maxExamined,
      },
      async (keys) => keys.map(toEntry),
    );
    return { entries: page.items, nextCursor: page.next === null ? null : encodeCursor(page.next) };
  }

  /** One entry by its `id`, in the environment's log; null when unknown or expired. */
  async get(environment: string, id: string): Promise<RequestLogEntry | null> {
    const doc = await (this.col as unknown as Collection<ReadEntry>).findOne({ _id: keyPrefix(environment, 'a') + id });
    return doc ? toEntry(doc) : null;
  }

  /**
   * Deletes the entries logged before `cutoff` through their expiry keys: each batch is one
   * range read and one delete by `_id $in`, so a pass costs what expired, not the log's size.
   */
  async sweepExpired(cutoff: Date, batch = 500): Promise<number> {
    let removed = 0;
    for (;;) {
      const due = (await this.col
        .find({ _id: { $gte: EXPIRY_PREFIX, $lt: EXPIRY_PREFIX + timeKey(cutoff) } } as never)
        .sort({ _id: 1 })
        .limit(batch)
        .toArray()) as ExpiryDoc[];
      if (due.length === 0) return removed;
      const ids = due.flatMap((d) => [...(d.ids ?? []), d._id]);
      // An appended batch's key lists up to APPEND_MAX_ENTRIES × 3 ids: deletes stay under
      // the `$in` size FerretDB serves from its `_id` index (10,000).
      for (let from = 0; from < ids.length; from += DELETE_CHUNK) {
        const res = await this.col.deleteMany({ _id: { $in: ids.slice(from, from + DELETE_CHUNK) } } as never);
        removed += res.deletedCount;
      }
      if (due.length < batch) return removed;
    }
  }

  /** The entry under each of its scopes, and (unless `expiryKey` is false: appended batches have one of their own) its expiry key. */
  private documentsFor(entry: RequestLogDoc, suffix: string, expiryKey = true): Stored[] {
    const tail = `${timeKey(entry.at)}|${suffix}`;
    const scopes = [keyPrefix(entry.environment, 'a'), keyPrefix(entry.environment, 'i', entry.integration)];
    if (entry.connection_id !== null) scopes.push(keyPrefix(entry.environment, 'c', entry.connection_id));
    const { at, ...fields } = entry;
    const json = JSON.stringify(fields);
    const docs: Stored[] = scopes.map((prefix) => ({ _id: prefix + tail, at, json }));
    if (this.writeExpiryKeys && expiryKey) docs.push({ _id: EXPIRY_PREFIX + tail, at: entry.at, ids: docs.map((d) => d._id) });
    return docs;
  }

  /**
   * Entries written by earlier versions (ObjectId `_id`, one document each) are rewritten
   * once into the keyed layout, so the range reads list them and the sweep expires them.
   * Their suffix is their ObjectId, so processes starting together write the same keys (the
   * duplicates are refused) and nothing is listed twice. One scan, at the first start only.
   */
  private async adoptEarlierEntries(): Promise<void> {
    await rekeyEarlierDocuments<RequestLogDoc, Stored>(
      this.col,
      (doc) => doc.at instanceof Date && typeof doc.environment === 'string',
      (entry, suffix) => this.documentsFor(entry, suffix),
    );
  }
}

/** The entry of a stored document of either layout; its id is its key's tail, `<time>|<suffix>`. */
function toEntry(doc: ReadEntry): RequestLogEntry {
  if ('json' in doc && typeof doc.json === 'string') {
    const fields = JSON.parse(doc.json) as Omit<RequestLogDoc, 'at'>;
    return { ...fields, at: doc.at, id: doc._id.split('|').slice(-2).join('|') };
  }
  const { _id, entry, ...rest } = doc as EarlierEntry;
  return { ...rest, id: entry ?? _id };
}
