import type { Collection, Db } from 'mongodb';

interface LogEntry {
  _id: string; // `${key}#${n}`: claiming entry n is an insert, which only one process can win
  key: string;
  n: number;
  at: Date;
}

export type SlotGrant = { acquired: true; slotId: string } | { acquired: false; waitMs: number };

/**
 * A sliding-window request budget shared by every process that talks to one provider
 * account: a log of recent requests per key. A request may go when fewer than `limit`
 * entries fall inside the last `windowMs`; it then claims the next entry number with an
 * insert of a unique `_id`. Two processes that race for the same number cannot both win
 * (primary-key uniqueness is atomic on MongoDB and on FerretDB's SQLite backend alike,
 * whereas FerretDB's findAndModify is not), and the loser re-reads and tries again.
 */
export class RateBudgetStore {
  private readonly col: Collection<LogEntry>;
  private claims = 0;

  constructor(db: Db) {
    this.col = db.collection<LogEntry>('rate_budget_log');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ key: 1, n: -1 });
  }

  async tryAcquire(key: string, limit: number, windowMs: number, now = Date.now()): Promise<SlotGrant> {
    for (let race = 0; race < 20; race += 1) {
      // Twice the limit: entries completed out of order stay visible to the count.
      const latest = await this.col.find({ key }).sort({ n: -1 }).limit(limit * 2).toArray();
      const inWindow = latest.map((e) => e.at.getTime()).filter((t) => t > now - windowMs).sort((a, b) => a - b);
      if (inWindow.length >= limit) {
        // Wait until enough of the window has slid past for one more request.
        return { acquired: false, waitMs: Math.max(1, inWindow[inWindow.length - limit] + windowMs - now) };
      }
      const n = (latest[0]?.n ?? 0) + 1;
      try {
        await this.col.insertOne({ _id: `${key}#${n}`, key, n, at: new Date(now) });
      } catch (err) {
        if ((err as { code?: number }).code === 11000) {
          now = Date.now();
          continue; // another process claimed n first
        }
        throw err;
      }
      if (++this.claims % 200 === 0) await this.prune(windowMs);
      return { acquired: true, slotId: `${key}#${n}` };
    }
    return { acquired: false, waitMs: 25 };
  }

  /**
   * Moves the entry's time to when the response arrived. The provider counted the request
   * somewhere between send and receive; counting from receipt keeps us on the safe side
   * of its window even when latency varies.
   */
  async markCompleted(slotId: string, at = new Date()): Promise<void> {
    await this.col.updateOne({ _id: slotId }, { $max: { at } });
  }

  /** After a provider lockout, count the last `limit` entries as used until it ends. */
  async blockUntil(key: string, limit: number, windowMs: number, until: Date): Promise<void> {
    const latest = await this.col.find({ key }).sort({ n: -1 }).limit(limit).toArray();
    const n = latest[0]?.n ?? 0;
    const at = new Date(until.getTime() - windowMs);
    // Fill the log so that `limit` entries sit at the end of the lockout.
    const fill = Array.from({ length: limit }, (_, i) => ({ _id: `${key}#${n + 1 + i}`, key, n: n + 1 + i, at }));
    await this.col.insertMany(fill, { ordered: false }).catch(() => undefined);
  }

  /** Entries older than a few windows no longer matter; keeping the log short keeps reads cheap. */
  private async prune(windowMs: number): Promise<void> {
    await this.col.deleteMany({ at: { $lt: new Date(Date.now() - Math.max(3 * windowMs, 120_000)) } });
  }
}
