import type { Collection, Db } from 'mongodb';
import { keyId, keyPrefixRange } from './key-ids';
import { ensureExpiry, type ExpiryRule } from './ttl';

const HOUR_MS = 3_600_000;
/**
 * How long a process keeps its counts before adding them to the database. A process that dies
 * without a graceful stop loses at most this long of counts (never log entries): they are the
 * console's chart, not a record.
 */
const FLUSH_MS = 5_000;

/** One integration's third-party calls in one hour: `_id` `<env>|<integration>|<hour>`. */
interface HourDoc {
  _id: string;
  /** The hour's start, what the documents expire by. */
  at: Date;
  calls: number;
  /** No answer, or a status of 400 or more (the status route's definition). */
  errors: number;
}

/**
 * Calls per integration and hour (`request_log_hours`), for the console's 24-hour chart:
 * counting the log's own entries costs a read of every entry (FerretDB counts a range by
 * reading it: 1.5 s for 4,500 entries of 100,000, measured), while these are 24 documents.
 * Each process adds up what it logs and writes the sums every few seconds, one `$inc` per
 * integration and hour: nothing on the way of a call.
 */
export class RequestLogHours {
  private readonly col: Collection<HourDoc>;
  private pending = new Map<string, { at: Date; calls: number; errors: number }>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    db: Db,
    private readonly ttlDays: number,
  ) {
    this.col = db.collection<HourDoc>('request_log_hours');
  }

  async ensureIndexes(): Promise<ExpiryRule> {
    return ensureExpiry(this.col, 'at', this.ttlDays * 86_400);
  }

  /** One logged call (a request log entry's fields that count). */
  count(entry: { environment: string; integration: string; at: Date; status: number | null; error: string | null }): void {
    const at = new Date(Math.floor(entry.at.getTime() / HOUR_MS) * HOUR_MS);
    const id = keyId(entry.environment, entry.integration, at.toISOString());
    const sums = this.pending.get(id) ?? { at, calls: 0, errors: 0 };
    sums.calls += 1;
    if (entry.status === null || entry.status >= 400 || entry.error !== null) sums.errors += 1;
    this.pending.set(id, sums);
    if (this.timer === null) {
      this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes the sums kept so far (graceful stop, tests, the reader's own process first). */
  async flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const sums = this.pending;
    this.pending = new Map();
    const write = this.writing.then(async () => {
      if (sums.size === 0) return;
      await this.col.bulkWrite(
        [...sums].map(([_id, s]) => ({
          updateOne: { filter: { _id }, update: { $inc: { calls: s.calls, errors: s.errors }, $setOnInsert: { at: s.at } }, upsert: true },
        })),
        { ordered: false },
      );
    });
    // A failed write (the database away) loses those sums only, never a log entry, and does not
    // fail the log's own flush: the chart shows fewer calls for those seconds.
    this.writing = write.catch(() => undefined);
    await this.writing;
  }

  /** Calls and errors of each hour from `from` (an hour's start) for `hours` hours; one `_id` range read. */
  async read(environment: string, integration: string, from: Date, hours: number): Promise<Array<{ calls: number; errors: number }>> {
    const range = keyPrefixRange(environment, integration);
    const docs = await this.col
      .find({ _id: { $gte: keyId(environment, integration, from.toISOString()), $lt: range.$lt } })
      .sort({ _id: 1 })
      .limit(hours)
      .toArray();
    const byHour = new Map(docs.map((d) => [d.at.getTime(), d]));
    return Array.from({ length: hours }, (_, i) => {
      const d = byHour.get(from.getTime() + i * HOUR_MS);
      return { calls: d?.calls ?? 0, errors: d?.errors ?? 0 };
    });
  }
}
