import type { Collection, Db } from 'mongodb';
import { LRUCache } from 'lru-cache';
import { insertManyIgnoringDuplicates, isDuplicateKey } from './duplicate-key';
import { insertMissing, runOnce } from './migrations';
import { ensureExpiry, type ExpiryRule } from './ttl';

interface LogEntry {
  _id: string; // `${key}#${n}`: claiming entry n is an insert, which only one process can win
  key: string;
  n: number;
  /** When it was claimed, then (once `done`) when its response arrived. */
  at: Date;
  /** The response arrived (or the call ended without one). Absent: in flight, its process died, or an earlier version wrote it. */
  done?: true;
  /** Long after the entry can count in any window: the expiry index or sweep removes it. */
  expires_at: Date;
}

/** Where a key's log ends, roughly: a process without a number of its own starts here and looks ahead. */
interface HeadDoc {
  _id: string; // the key
  n: number;
}

export type SlotGrant = { acquired: true; slotId: string } | { acquired: false; waitMs: number };

/** Entries read past the last known number in one go; a longer run moves the read on. */
const LOOKAHEAD = 16;
/**
 * Entries read from the one a claim replaces onwards, in the same read: the right one when up
 * to this many claims of other processes came in since this process last looked.
 */
const REPLACED_SPAN = 2;
/** The head is moved every this many claims (and after a lockout): a hint, not a counter. */
const HEAD_EVERY = 8;
/** Every this many claims, the entries no claim will read again are deleted (one `$in`). */
const PRUNE_EVERY = 64;
/** Provider accounts whose last number a process keeps in memory. */
const KNOWN_KEYS = 10_000;

/**
 * How long after its claim a request that never reported back (its process died) still
 * counts. The provider counts a request when it arrives, which is within the connect
 * timeout (`WEFT_EGRESS_CONNECT_TIMEOUT_MS`, 10 s) and the time to send it after the claim;
 * this is far past both.
 */
const DEFAULT_REQUEST_DEADLINE_MS = 60_000;

/**
 * A sliding-window request budget shared by every process that talks to one provider
 * account: at most `limit` requests in any `windowMs`, counted from when each response
 * arrived (the provider counted the request somewhere between send and receive).
 *
 * Requests are numbered per key. Claim n may go only when entry n − limit, the one whose
 * place it takes, has completed and its time is at least a window old (an entry that never
 * completed counts until its claim time plus the request deadline). That one check is
 * enough: entry n − limit was itself claimed only when n − 2·limit was a window old, and
 * so on down, so when claim n goes every entry at or below n − limit is out of the window
 * and at most limit − 1 others can be in it. (For any limit + 1 requests, the newest was
 * claimed a window or more after the oldest was answered.) A claim therefore reads a
 * constant handful of documents whatever the limit and however long the log: the entries
 * just past the last number this process knows (to find the end of the log) and the few
 * from the one the claim replaces, in one `_id $in`; then it inserts entry n. Two
 * processes that race for the same number cannot both win (primary-key uniqueness is
 * atomic on MongoDB and on FerretDB's SQLite backend alike, whereas FerretDB's
 * findAndModify is not); the loser reads again.
 *
 * When the entry to replace is still in the window, the answer says exactly when it leaves
 * it, so a caller can wait on a timer instead of asking again and again.
 *
 * Entries of earlier versions (no `done`) count as in flight until their time plus the
 * deadline: after an upgrade, a key at its budget may wait up to a deadline longer than
 * needed, once, and is never over it. Those versions read entries the same way (by number,
 * by `at`), so old and new processes can share a log while an upgrade rolls.
 */
export class RateBudgetStore {
  private readonly col: Collection<LogEntry>;
  private readonly heads: Collection<HeadDoc>;
  /** Per key, the last number this process claimed or saw: where its next read starts. */
  private readonly known = new LRUCache<string, number>({ max: KNOWN_KEYS });
  private readonly deadlineMs: number;

  constructor(
    private readonly db: Db,
    opts: { requestDeadlineMs?: number } = {},
  ) {
    this.col = db.collection<LogEntry>('rate_budget_log');
    this.heads = db.collection<HeadDoc>('rate_budget_heads');
    this.deadlineMs = opts.requestDeadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS;
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

  async tryAcquire(key: string, limit: number, windowMs: number): Promise<SlotGrant> {
    for (let race = 0; race < 20; race += 1) {
      const { top, replaced } = await this.locate(key, limit);
      // Read after the log: later than every claim the read saw, which the count relies on.
      const now = Date.now();
      if (replaced) {
        const freeAt = this.countsFrom(replaced, now) + windowMs;
        if (freeAt > now) return { acquired: false, waitMs: Math.max(1, Math.ceil(freeAt - now)) };
      }
      const n = top + 1;
      try {
        await this.col.insertOne(entry(key, n, new Date(now), this.deadlineMs + windowMs));
      } catch (err) {
        if (isDuplicateKey(err)) {
          this.known.set(key, n); // another process claimed n first: read on from there
          continue;
        }
        throw err;
      }
      this.known.set(key, n);
      if (n % HEAD_EVERY === 0) await this.moveHead(key, n);
      if (n % PRUNE_EVERY === 0) await this.prune(key, n - limit);
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
    await this.col.updateOne({ _id: slotId }, { $max: { at }, $set: { done: true } });
  }

  /**
   * After a provider lockout, the next `limit` numbers are taken as answered a window before
   * it ends: no claim goes until then. A rare event, so `limit` inserts are fine here.
   */
  async blockUntil(key: string, limit: number, windowMs: number, until: Date): Promise<void> {
    const { top } = await this.locate(key, limit);
    const at = new Date(until.getTime() - windowMs);
    const fill = Array.from({ length: limit }, (_, i) => ({ ...entry(key, top + 1 + i, at, this.deadlineMs + windowMs), done: true as const }));
    // Numbers claimed meanwhile keep their own entries (they count from their own answers).
    await insertManyIgnoringDuplicates(this.col, fill);
    this.known.set(key, top + limit);
    await this.moveHead(key, top + limit);
  }

  /** When an entry stops counting, less the window: its answer's time, or for one in flight the latest its provider can have seen it. */
  private countsFrom(e: LogEntry, now: number): number {
    const at = e.at.getTime();
    if (e.done) return at;
    // Answered this instant it would count from now: ask again a window later; past the deadline it is not coming.
    return Math.min(at + this.deadlineMs, Math.max(now, at));
  }

  /**
   * The key's last claimed number, and the entry the next claim replaces (null when there
   * is none, or it is gone: deleted or expired entries are long out of every window). One
   * read by `_id` as a rule: from the last number this process knows (or the head), the
   * entries just past it and those from the one to replace on.
   */
  private async locate(key: string, limit: number): Promise<{ top: number; replaced: LogEntry | null }> {
    const remembered = this.known.get(key);
    let from = remembered ?? (await this.headOf(key));
    let headRead = remembered === undefined;
    for (;;) {
      const wanted = new Set<number>();
      if (from > 0) wanted.add(from);
      for (let n = from + 1; n <= from + LOOKAHEAD; n += 1) wanted.add(n);
      // From the head (which lags by up to HEAD_EVERY), the entry to replace is further on.
      const span = REPLACED_SPAN + (headRead ? HEAD_EVERY : 0);
      for (let n = from + 1 - limit; n < from + 1 - limit + span; n += 1) if (n >= 1) wanted.add(n);
      const found = new Map((await this.read(key, [...wanted])).map((e) => [e.n, e]));
      if (from > 0 && !found.has(from) && !headRead) {
        // What this process last saw was deleted since (pruned behind newer claims, or expired
        // after the key went quiet): go on from the head, where every process would.
        from = await this.headOf(key);
        headRead = true;
        continue;
      }
      let reached = from;
      while (reached < from + LOOKAHEAD && found.has(reached + 1)) reached += 1;
      if (reached === from + LOOKAHEAD) {
        // The look-ahead was all taken: others claimed many since. Jump to the head if it is further.
        const head = headRead ? 0 : await this.headOf(key);
        headRead = true;
        from = Math.max(reached, head);
        continue;
      }
      this.known.set(key, reached);
      const replacedNumber = reached + 1 - limit;
      if (replacedNumber < 1) return { top: reached, replaced: null };
      if (wanted.has(replacedNumber)) return { top: reached, replaced: found.get(replacedNumber) ?? null };
      // More claims came in since than the span covers: one more point read.
      return { top: reached, replaced: await this.col.findOne({ _id: `${key}#${replacedNumber}` }) };
    }
  }

  private async headOf(key: string): Promise<number> {
    return (await this.heads.findOne({ _id: key }))?.n ?? 0;
  }

  private async read(key: string, numbers: number[]): Promise<LogEntry[]> {
    if (numbers.length === 0) return [];
    return this.col.find({ _id: { $in: numbers.map((n) => `${key}#${n}`) } }).toArray();
  }

  private async moveHead(key: string, n: number): Promise<void> {
    try {
      await this.heads.updateOne({ _id: key }, { $max: { n } }, { upsert: true });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // two first upserts: the other one made it
    }
  }

  /**
   * Entries at or below `upTo` were replaced by claims already made and are never read
   * again: deleted by `_id` as the log grows (those of keys that go quiet expire instead).
   * Best effort.
   */
  private async prune(key: string, upTo: number): Promise<void> {
    const from = Math.max(1, upTo - PRUNE_EVERY + 1);
    if (upTo < from) return;
    const ids = Array.from({ length: upTo - from + 1 }, (_, i) => `${key}#${from + i}`);
    await this.col.deleteMany({ _id: { $in: ids } }).catch(() => undefined);
  }
}

function entry(key: string, n: number, at: Date, countsFor: number): LogEntry {
  // Well after it can count anywhere (the deadline and a window past its time), and two minutes at least.
  return { _id: `${key}#${n}`, key, n, at, expires_at: new Date(at.getTime() + Math.max(3 * countsFor, 120_000)) };
}
