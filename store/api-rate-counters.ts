import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { ensureExpiry, type ExpiryRule } from './ttl';

/** Block b of a key's window, claimed by one API process: claiming it is inserting its `_id`. */
interface BlockDoc {
  /**
   * `${windowStart}:${windowMs}:${blockSize}:${block}:${key}`: numbers first, so no key can
   * collide with another, and a changed policy never reads another policy's blocks.
   */
  _id: string;
  expires_at: Date;
}

export interface RateWindowPolicy {
  /** Requests allowed per window. */
  limit: number;
  windowMs: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in this window after this one (exact with one API process; see take()). */
  remaining: number;
  /** When the window ends (epoch ms). */
  resetAt: number;
}

interface WindowState {
  key: string;
  windowStart: number;
  windowMs: number;
  /** Requests per block in this window. */
  blockSize: number;
  /** Every block below this one is taken, by this process or another. */
  nextBlock: number;
  /** The requests of this process's current block not handed out yet: numbers next..end. */
  own: { next: number; end: number } | null;
  /** A block claim in flight; the process's other requests of this key wait for it. */
  claiming: Promise<void> | null;
  /** No block of this window is left. */
  full: boolean;
}

/** How many blocks one probe of the frontier reads (one `_id $in` query). */
const PROBE_WIDTH = 32;
/** `_id $in` lists stay well under the 10,000 that FerretDB reads and deletes through its `_id` index. */
const DELETE_CHUNK = 5_000;

/**
 * A fixed-window request counter shared by every API process, exact on MongoDB and on
 * FerretDB alike: a window never admits more than `limit` requests, whatever the number of
 * processes, and no count is lost.
 *
 * The window's requests are numbered 1..limit and cut into blocks of up to 16. A process
 * hands out the numbers of a block it owns from memory and claims its next block by
 * inserting that block's `_id`; an `_id` can be inserted only once, on both servers, so two
 * processes can never own the same numbers. When blocks run out, the window is full.
 *
 * Why not an `$inc` on one counter document (which is also what rate-limiter-flexible's
 * Mongo store does, filtering on a `key` field): FerretDB 1.24 runs an update as read,
 * change in memory, write back, with nothing holding the row in between, so concurrent
 * increments overwrite each other. Measured with two processes × 10 in flight × 500
 * increments: the counter ended at 808 of 1,000, rate-limiter-flexible at 816.
 *
 * The cost of sharing: a block claimed by a process that then gets no more requests in that
 * window goes unused (at most blockSize − 1 requests per process and window, ≤ 0.5% of the
 * limit), and with several processes `remaining` is what this process knows. In return a
 * request costs one insert per block (about 1/16 of a write each) rather than a write per
 * request on a store whose writes are serialized, and refusals in a full window cost none.
 * Every lookup is by `_id` (FerretDB's SQLite backend scans the whole table for any other
 * filter).
 */
export class ApiRateCounterStore {
  private readonly col: Collection<BlockDoc>;
  private readonly windows = new Map<string, WindowState>();
  /** Ended windows whose blocks this process will delete once they are a full window old. */
  private retired: WindowState[] = [];

  constructor(db: Db) {
    this.col = db.collection<BlockDoc>('api_rate_blocks');
  }

  /** A backstop for blocks nobody deleted (a process that stopped): TTL, or the worker's sweep. */
  async ensureIndexes(): Promise<ExpiryRule> {
    return ensureExpiry(this.col, 'expires_at', 0);
  }

  /** Counts one request against `key`'s current window, unless the window is full. */
  async take(key: string, policy: RateWindowPolicy, now = Date.now()): Promise<RateDecision> {
    const { limit } = policy;
    const state = this.stateFor(key, policy, now);
    const resetAt = state.windowStart + policy.windowMs;
    for (;;) {
      const own = state.own;
      if (own && own.next <= own.end) {
        own.next += 1;
        return { allowed: true, limit, remaining: this.remaining(state, limit), resetAt };
      }
      if (state.full) return { allowed: false, limit, remaining: 0, resetAt };
      state.claiming ??= this.claimBlock(state, policy).finally(() => {
        state.claiming = null;
      });
      await state.claiming;
    }
  }

  /** Requests handed out in the window as far as this process knows: every block below the frontier, less its own unused numbers. */
  private remaining(state: WindowState, limit: number): number {
    const unused = state.own ? state.own.end - state.own.next + 1 : 0;
    const handedOut = Math.min(limit, state.nextBlock * state.blockSize) - unused;
    return Math.max(0, limit - handedOut);
  }

  private stateFor(key: string, policy: RateWindowPolicy, now: number): WindowState {
    const windowStart = now - (now % policy.windowMs);
    const known = this.windows.get(key);
    // Equal: the usual case. Later: the clock stepped back; count it in the window in use.
    if (known && known.windowStart >= windowStart) return known;
    // Small limits get blocks of one request (exact even across processes); large ones 16.
    const blockSize = Math.max(1, Math.min(16, Math.floor(policy.limit / 200)));
    const fresh: WindowState = { key, windowStart, windowMs: policy.windowMs, blockSize, nextBlock: 0, own: null, claiming: null, full: false };
    this.windows.set(key, fresh);
    if (known && known.nextBlock > 0) this.retired.push(known);
    this.deleteOldWindows(now);
    return fresh;
  }

  private async claimBlock(state: WindowState, policy: RateWindowPolicy): Promise<void> {
    const blocks = Math.ceil(policy.limit / state.blockSize);
    const expiresAt = new Date(state.windowStart + 2 * state.windowMs);
    let block = state.nextBlock;
    while (block < blocks) {
      try {
        await this.col.insertOne({ _id: blockId(state, block), expires_at: expiresAt });
        state.own = { next: block * state.blockSize + 1, end: Math.min((block + 1) * state.blockSize, policy.limit) };
        state.nextBlock = Math.max(state.nextBlock, block + 1);
        return;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      // Another process owns it: skip past the run of blocks taken after it.
      block = await this.firstFreeBlock(state, block, blocks);
      state.nextBlock = Math.max(state.nextBlock, block);
    }
    state.full = true;
  }

  /**
   * The lowest block above `taken` that is still free, or `blocks` when all are taken.
   * Blocks are claimed from 0 upward (a gap is only a claim still in flight), so it narrows
   * on the boundary: each round reads up to 32 candidate blocks by `_id` (the next few one
   * by one, then at doubling distances) and keeps the last taken and the first free one.
   */
  private async firstFreeBlock(state: WindowState, taken: number, blocks: number): Promise<number> {
    let lo = taken;
    let hi = blocks;
    while (hi - lo > 1) {
      const candidates = probeBlocks(lo, hi);
      const found = await this.col.find({ _id: { $in: candidates.map((b) => blockId(state, b)) } }, { projection: { _id: 1 } }).toArray();
      const takenIds = new Set(found.map((d) => d._id));
      const firstFree = candidates.find((b) => !takenIds.has(blockId(state, b)));
      if (firstFree === undefined) {
        lo = candidates[candidates.length - 1];
      } else {
        lo = Math.max(lo, ...candidates.filter((b) => b < firstFree));
        hi = firstFree;
      }
    }
    return hi;
  }

  /**
   * Blocks of windows that ended more than a window ago go, by `_id` (a window's worth of
   * grace, so an API process whose clock is slightly behind cannot claim them again).
   * Best effort: what a failed delete leaves, the expiry index or sweep removes.
   */
  private deleteOldWindows(now: number): void {
    const due = this.retired.filter((w) => w.windowStart + 2 * w.windowMs <= now);
    if (due.length === 0) return;
    this.retired = this.retired.filter((w) => !due.includes(w));
    for (const w of due) {
      for (let from = 0; from < w.nextBlock; from += DELETE_CHUNK) {
        const ids = Array.from({ length: Math.min(DELETE_CHUNK, w.nextBlock - from) }, (_, i) => blockId(w, from + i));
        this.col.deleteMany({ _id: { $in: ids } }).catch(() => undefined);
      }
    }
  }
}

function blockId(w: WindowState, block: number): string {
  return `${w.windowStart}:${w.windowMs}:${w.blockSize}:${block}:${w.key}`;
}

/** Candidates strictly between lo and hi: all of them when few, else the next few and then doubling steps. */
function probeBlocks(lo: number, hi: number): number[] {
  if (hi - lo - 1 <= PROBE_WIDTH) return Array.from({ length: hi - lo - 1 }, (_, i) => lo + 1 + i);
  const out: number[] = [];
  for (let b = lo + 1; b <= lo + PROBE_WIDTH / 2; b += 1) out.push(b);
  for (let step = PROBE_WIDTH; lo + step < hi && out.length < PROBE_WIDTH; step *= 2) out.push(lo + step);
  return out;
}
