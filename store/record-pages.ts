import { feedKey, positionOf, seqPrefix, type FeedEntry, type RecordFeed } from './record-feed';
import type { RecordAction, RecordDoc } from './record-doc';

/** A position in a scope's change order: the change `seq` of record `id` (ties by encoded id). */
export interface RecordPosition {
  seq: number;
  id: string;
}

export interface PageQuery {
  after?: RecordPosition;
  limit: number;
  modifiedAfter?: Date;
  actions?: RecordAction[];
  ids?: string[];
}

export interface RecordPage {
  records: RecordDoc[];
  /**
   * Where the next page starts; null once the committed changes are all read. A page can
   * hold fewer than `limit` records and still have a next position: reading stops after
   * SCAN_FACTOR × limit feed entries, whatever the filters left of them.
   */
  next: RecordPosition | null;
}

/** What reading a page needs of the store: the feed, and records by `_id`. */
export interface PageSource {
  feed: RecordFeed;
  /** The stored records of `keys` (record `_id`s), by `_id`; read with `{_id: {$in}}` only. */
  fetch(keys: string[]): Promise<Map<string, RecordDoc>>;
  recordKey(id: string): string;
}

/** Feed entries one request reads at most, per record asked for: the bound that keeps a request O(page). */
export const SCAN_FACTOR = 10;
/** ...and at least this many, so a small page with a selective filter still moves on. */
const MIN_SCAN = 200;
/** The smallest follow-up window: a page short of a record or two reads a few more entries, not another page. */
const MIN_WINDOW = 8;

/**
 * One page of a scope's records in change order, from the change feed: `_id` range reads
 * of the feed up to the committed mark, then the records by `_id`. An entry whose record
 * has a different seq now is skipped (the record's newer change has its own entry); one
 * whose record moved on to a later seq is also deleted, lazily, by the reader that meets it:
 * the writer does not know the old seq of what it replaces without reading it, and a
 * superseded entry can never become current again (a record's seq only grows).
 */
export async function readPage(src: PageSource, scopeKey: string, environment: string, committed: number, q: PageQuery): Promise<RecordPage> {
  const matches = (r: RecordDoc) =>
    r.environment === environment &&
    (!q.actions?.length || q.actions.includes(r.last_action)) &&
    (!q.modifiedAfter || r.last_modified_at.getTime() >= q.modifiedAfter.getTime());
  if (q.ids) return readByIds(src, scopeKey, committed, q, matches);

  const until = seqPrefix(scopeKey, committed + 1);
  let pos = q.after ? feedKey(scopeKey, q.after.seq, q.after.id) : seqPrefix(scopeKey, 0);
  if (q.modifiedAfter) pos = await skipUnmodified(src.feed, scopeKey, pos, committed, q.modifiedAfter.getTime());

  const budget = Math.max(SCAN_FACTOR * q.limit, MIN_SCAN);
  const found: RecordDoc[] = [];
  let scanned = 0;
  let size = q.limit + 1;
  let growth = 1;
  for (;;) {
    const n = Math.min(size, budget - scanned);
    const entries = await src.feed.window(scopeKey, pos, until, n);
    scanned += entries.length;
    const changes = entries.map((e) => ({ entry: e, key: e._id, ...positionOf(scopeKey, e._id) }));
    const records = await src.fetch(changes.map((c) => src.recordKey(c.id)));
    const superseded: FeedEntry[] = [];
    for (const entry of changes) {
      pos = entry.key;
      const record = records.get(src.recordKey(entry.id));
      if (record?.seq !== entry.seq) {
        // Missing or at a lower seq: a version not written (yet, or ever); left alone.
        if (record && record.seq > entry.seq) superseded.push(entry.entry);
        continue;
      }
      if (matches(record)) found.push(record);
      if (found.length > q.limit) break;
    }
    if (superseded.length) await src.feed.forget(scopeKey, superseded);
    if (found.length > q.limit) return { records: found.slice(0, q.limit), next: positionOfRecord(found[q.limit - 1]) };
    if (entries.length < n) return { records: found, next: null };
    if (scanned >= budget) return { records: found, next: positionOf(scopeKey, pos) };
    // Entries were superseded or filtered out: read on for what is missing, in windows that
    // double while they keep coming back short (a few round trips up to the bound).
    growth *= 2;
    size = Math.max(q.limit + 1 - found.length, MIN_WINDOW) * growth;
  }
}

function positionOfRecord(r: RecordDoc): RecordPosition {
  return { seq: r.seq, id: r.id };
}

/** `ids=`: the records by `_id`, O(ids), in change order after the cursor. */
async function readByIds(src: PageSource, scopeKey: string, committed: number, q: PageQuery, matches: (r: RecordDoc) => boolean): Promise<RecordPage> {
  const after = q.after ? feedKey(scopeKey, q.after.seq, q.after.id) : '';
  const records = await src.fetch([...new Set(q.ids)].map((id) => src.recordKey(id)));
  const keyed = [...records.values()]
    .filter((r) => r.seq <= committed && matches(r))
    .map((r) => ({ r, key: feedKey(scopeKey, r.seq, r.id) }))
    .filter((k) => k.key > after)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const page = keyed.slice(0, q.limit).map((k) => k.r);
  return { records: page, next: keyed.length > q.limit ? positionOfRecord(page[page.length - 1]) : null };
}

/**
 * Where changes that may be modified at or after `at` begin, from position `pos` on: `pos`
 * itself when the next entry is that recent (the later pages of a `modified_after` read),
 * else a binary search over seqs with one-entry range reads. Both hold because entries'
 * `at` never decreases with seq and is never less than the record's own `last_modified_at`.
 */
async function skipUnmodified(feed: RecordFeed, scopeKey: string, pos: string, committed: number, at: number): Promise<string> {
  const until = seqPrefix(scopeKey, committed + 1);
  const next = await feed.first(scopeKey, pos, until);
  if (!next || next.at >= at) return pos;
  // Invariant: no entry before `lo` has at >= `at`; the first entry at or after `hi` has (or there is none).
  let lo = positionOf(scopeKey, next._id).seq + 1;
  let hi = committed + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const entry = await feed.first(scopeKey, seqPrefix(scopeKey, mid), until);
    if (!entry || entry.at >= at) hi = mid;
    else lo = positionOf(scopeKey, entry._id).seq + 1;
  }
  return seqPrefix(scopeKey, lo);
}
