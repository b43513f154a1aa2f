import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { insertMissing, runOnce } from './migrations';
import { ensureExpiry, type ExpiryRule } from './ttl';

interface LogEntry {
  _id: string; // `${key}#${n}`: claiming entry n is an insert, which only one process can win
  key: string;
  n: number;
  at: Date;
  /** Long after the entry can count in any window: the expiry index or sweep removes it. */
  expires_at: Date;
}

/** Where a key's log ends, roughly: reads start here and look ahead (it may lag, never lead by much). */
interface HeadDoc {
  _id: string; // the key
  n: number;
}

export type SlotGrant = { acquired: true; slotId: string } | { acquired: false; waitMs: number };

/** Entries read past the head in one go; a longer run of entries moves the read on. */
const LOOKAHEAD = 32;
/** The head is moved every this many claims (and after a lockout): a hint, not a counter. */
const HEAD_EVERY = 8;
/** Ids per `_id $in` read or delete: well under the 10,000 FerretDB reads through its `_id` index. */
const CHUNK = 2_000;

/**
 * A sliding-window request budget shared by every process that talks to one provider
 * account: a log of recent requests per key. A request may go when fewer than `limit`
 * entries fall inside the last `windowMs`; it then claims the next entry number with an
 * insert of a unique `_id`. Two processes that race for the same number cannot both win
 * (primary-key uniqueness is atomic on MongoDB and on FerretDB's SQLite backend alike,
 * whereas FerretDB's findAndModify is not), and the loser re-reads and tries again.
 *
 * Every read is by `_id`: a head document says about where the key's numbers end, and the
 * last 2 × limit entries are read by their ids (FerretDB's SQLite backend reads the whole
 * collection for any other filter, and this log holds every provider account's requests).
 */
export class RateBudgetStore {
  private readonly col: Collection<LogEntry>;
  private readonly heads: Collection<HeadDoc>;
  /** Per key, entries below this number were deleted by this process (they can no longer count). */
  private readonly prunedBelow = new Map<string, number>();

  constructor(private readonly db: Db) {
    this.col = db.collection<LogEntry>('rate_budget_log');
    this.heads = db.collection<HeadDoc>('rate_budget_heads');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    const expiry = await ensureExpiry(this.col, 'expires_at', 0);
    await runOnce(this.db, 'rate_budget_heads', () => this.adoptOldLog());
    return [expiry];
  }

  /**
   * Logs of earlier versions had no heads and no expiry: each key gets the head its entries
   * reach, so counting goes on where it was, and the entries expire in a day.
   */
  private async adoptOldLog(): Promise<void> {
    const top = new Map<string, number>();
    for await (const e of this.col.find({ expires_at: { $exists: false } }, { projection: { key: 1, n: 1 } })) {
      top.set(e.key, Math.max(top.get(e.key) ?? 0, e.n));
    }
    await insertMissing<HeadDoc>(
      this.db,
      'rate_budget_heads',
      [...top].map(([key, n]) => ({ _id: key, n })),
    );
    await this.col.updateMany({ expires_at: { $exists: false } }, { $set: { expires_at: new Date(Date.now() + 86_400_000) } });
  }

  async tryAcquire(key: string, limit: number, windowMs: number, now = Date.now()): Promise<SlotGrant> {
    for (let race = 0; race < 20; race += 1) {
      // Twice the limit: entries completed out of order stay visible to the count.
      const { top, entries } = await this.latest(key, 2 * limit, now - windowMs);
      const inWindow = entries
        .map((e) => e.at.getTime())
        .filter((t) => t > now - windowMs)
        .sort((a, b) => a - b);
      if (inWindow.length >= limit) {
        // Wait until enough of the window has slid past for one more request.
        return { acquired: false, waitMs: Math.max(1, inWindow[inWindow.length - limit] + windowMs - now) };
      }
      const n = top + 1;
      try {
        await this.col.insertOne(entry(key, n, new Date(now), windowMs));
      } catch (err) {
        if (isDuplicateKey(err)) {
          now = Date.now();
          continue; // another process claimed n first
        }
        throw err;
      }
      if (n % HEAD_EVERY === 0) await this.moveHead(key, n);
      await this.prune(key, n - 2 * limit);
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
    const { top: n } = await this.latest(key, limit, -Infinity);
    const at = new Date(until.getTime() - windowMs);
    // Fill the log so that `limit` entries sit at the end of the lockout.
    const fill = Array.from({ length: limit }, (_, i) => entry(key, n + 1 + i, at, windowMs));
    await this.col.insertMany(fill, { ordered: false }).catch(() => undefined);
    await this.moveHead(key, n + limit);
  }

  /**
   * The key's last claimed number and its entries down to `span` below it. Read by `_id`:
   * from the head (which may lag) forward until a read ends before its look-ahead does,
   * then back in chunks, stopping early at a chunk with nothing newer than `since` (older
   * numbers are older requests).
   */
  private async latest(key: string, span: number, since: number): Promise<{ top: number; entries: LogEntry[] }> {
    let top = (await this.heads.findOne({ _id: key }))?.n ?? 0;
    const entries: LogEntry[] = [];
    const readFrom = Math.max(1, top - Math.min(span, CHUNK - LOOKAHEAD) + 1);
    for (let from = readFrom; ;) {
      const found = await this.read(key, from, top + LOOKAHEAD);
      entries.push(...found);
      const reached = Math.max(top, ...found.map((e) => e.n));
      const more = reached === top + LOOKAHEAD; // the look-ahead was all taken: the head lags
      from = top + LOOKAHEAD + 1;
      top = reached;
      if (!more) break;
    }
    for (let lowest = readFrom; lowest > 1 && lowest > top - span + 1;) {
      const to = lowest - 1;
      lowest = Math.max(1, top - span + 1, to - CHUNK + 1);
      const older = await this.read(key, lowest, to);
      entries.push(...older);
      if (!older.some((e) => e.at.getTime() > since)) break;
    }
    return { top, entries: entries.filter((e) => e.n > top - span) };
  }

  private async read(key: string, from: number, to: number): Promise<LogEntry[]> {
    if (to < from) return [];
    return this.col.find({ _id: { $in: numbered(key, from, to) } }).toArray();
  }

  private async moveHead(key: string, n: number): Promise<void> {
    try {
      await this.heads.updateOne({ _id: key }, { $max: { n } }, { upsert: true });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // two first upserts: the other one made it
    }
  }

  /**
   * Entries at or below `n - 2 × limit` are never read again: deleted by `_id` as the log
   * grows (those of keys that go quiet expire instead). Best effort.
   */
  private async prune(key: string, keepFrom: number): Promise<void> {
    const from = this.prunedBelow.get(key) ?? Math.max(1, keepFrom - 256);
    if (keepFrom - from < 64) return;
    this.prunedBelow.set(key, keepFrom);
    for (let lo = from; lo < keepFrom; lo += CHUNK) {
      await this.col.deleteMany({ _id: { $in: numbered(key, lo, Math.min(keepFrom - 1, lo + CHUNK - 1)) } }).catch(() => undefined);
    }
  }
}

function entry(key: string, n: number, at: Date, windowMs: number): LogEntry {
  // Three windows past its time (and two minutes at least) it no longer counts anywhere.
  return { _id: `${key}#${n}`, key, n, at, expires_at: new Date(at.getTime() + Math.max(3 * windowMs, 120_000)) };
}

function numbered(key: string, from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `${key}#${from + i}`);
}
