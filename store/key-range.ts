import { randomBytes } from 'node:crypto';
import type { Collection, Document } from 'mongodb';
import { InvalidValueError } from '../common/errors';

/**
 * Keys that make "this scope, by time" one `_id` range. A key is `<prefix><tail>`, where the
 * prefix names the scope (parts joined by `|`, each URI-encoded so no part holds a `|`) and
 * the tail starts with a time that sorts as text. FerretDB's SQLite backend answers exactly
 * `find({_id: {$gt|$gte: a, $lt|$lte: b}}).sort({_id: ±1}).limit(n)` from its `_id` index
 * (the project's patch) and MongoDB from its own; any other filter would read the whole
 * collection on FerretDB, so readers filter the rest in memory, page by page.
 */

/** Joins scope parts into a key prefix ending in `|`. */
export function keyPrefix(...parts: string[]): string {
  return parts.map((p) => `${encodeURIComponent(p)}|`).join('');
}

/**
 * The first string after every string that starts with `prefix` (which ends in `|`):
 * `|` is 0x7C, so `}` (0x7D) in its place bounds the range. Strings compare by their
 * UTF-8 bytes on both servers.
 */
function prefixEnd(prefix: string): string {
  if (!prefix.endsWith('|')) throw new Error(`key prefix must end with '|': ${prefix}`);
  return `${prefix.slice(0, -1)}}`;
}

/** Every string that starts with `prefix` (which ends in `|`), as an `_id` range filter. */
export function prefixRange(prefix: string): { $gte: string; $lt: string } {
  return { $gte: prefix, $lt: prefixEnd(prefix) };
}

/** Milliseconds as ISO-8601 UTC (`2026-11-23T21:21:48.123Z`): sorts as text for years 1970-9999, and reads as a time. */
export function timeKey(at: Date | number): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  if (!Number.isFinite(ms) || ms < 0 || ms > 253_402_300_799_999) throw new Error(`time out of key range: ${ms}`);
  return new Date(ms).toISOString();
}

/** Tells keys apart within one millisecond (random: several processes write at once). */
export function uniqueSuffix(): string {
  return randomBytes(8).toString('hex');
}

const TIME_TAIL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[0-9a-zA-Z_.%-]{1,128}$/;

/** A cursor is the tail of the last key a page examined, opaque to clients. */
export function encodeCursor(tail: string): string {
  return Buffer.from(tail, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, valid: RegExp = TIME_TAIL): string {
  const tail = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!valid.test(tail)) throw new InvalidValueError('invalid_cursor', 'The cursor is not one this endpoint returned.');
  return tail;
}

export type Direction = 'asc' | 'desc';

export interface RangePageQuery<T> {
  prefix: string;
  /** Only keys whose tail is at or after / at or before these (inclusive time bounds). */
  from?: Date;
  to?: Date;
  /** Continue after this tail (exclusive), in `direction`. */
  after?: string;
  direction: Direction;
  limit: number;
  /** Conditions the key cannot answer, checked in memory. */
  match?: (doc: T) => boolean;
  /** Documents examined per call at most: a page with a rare `match` ends early, with a cursor. */
  maxExamined?: number;
}

export interface RangePage<T> {
  items: T[];
  /** The tail to continue after, or null when the range holds nothing more. */
  next: string | null;
}

/** `_id` bounds of one scope, optionally narrowed by time and by a position to continue after. */
function rangeFilter(q: Pick<RangePageQuery<unknown>, 'prefix' | 'from' | 'to' | 'after' | 'direction'>): {
  $gte?: string;
  $gt?: string;
  $lt?: string;
  $lte?: string;
} {
  let lower: { op: '$gte' | '$gt'; key: string } = { op: '$gte', key: q.prefix };
  let upper: { op: '$lt' | '$lte'; key: string } = { op: '$lt', key: prefixEnd(q.prefix) };
  // Time tails are `<time>|...`: every key of a millisecond lies between `<time>` and `<time>}`.
  if (q.from) lower = maxLower(lower, { op: '$gte', key: q.prefix + timeKey(q.from) });
  if (q.to) upper = minUpper(upper, { op: '$lt', key: `${q.prefix}${timeKey(q.to)}}` });
  if (q.after !== undefined) {
    if (q.direction === 'desc') upper = minUpper(upper, { op: '$lt', key: q.prefix + q.after });
    else lower = maxLower(lower, { op: '$gt', key: q.prefix + q.after });
  }
  return { [lower.op]: lower.key, [upper.op]: upper.key };
}

function maxLower(a: { op: '$gte' | '$gt'; key: string }, b: { op: '$gte' | '$gt'; key: string }) {
  if (a.key !== b.key) return a.key > b.key ? a : b;
  return a.op === '$gt' ? a : b;
}

function minUpper(a: { op: '$lt' | '$lte'; key: string }, b: { op: '$lt' | '$lte'; key: string }) {
  if (a.key !== b.key) return a.key < b.key ? a : b;
  return a.op === '$lt' ? a : b;
}

/**
 * One page of a scope's range, in key order. Reads in batches of the exact pushed-down shape
 * (`_id` range, sort on `_id`, limit), so each batch costs its size on both servers; with a
 * `match`, batches continue until the page is full, the range ends or `maxExamined` is spent.
 * With `load`, the keys are pointers: each batch's documents are fetched by it (an `_id $in`
 * read) and a key whose document is gone is passed over. Documents of other shapes (non-string
 * `_id`s written by earlier versions) are never in a string range on MongoDB; they are skipped
 * here too, whatever a server returns.
 */
export async function readRangePage<K extends Document & { _id: string }, T = K>(
  col: Collection<K>,
  q: RangePageQuery<T>,
  load?: (keys: K[]) => Promise<Array<T | null>>,
): Promise<RangePage<T>> {
  const limit = Math.max(1, Math.floor(q.limit));
  const maxExamined = Math.max(limit, q.maxExamined ?? 5_000);
  const items: T[] = [];
  let after = q.after;
  let examined = 0;
  for (;;) {
    // One more than needed tells whether the range goes on; with a filter, larger batches.
    const batch = q.match ? Math.min(Math.max(2 * (limit - items.length), 100), maxExamined - examined) : limit - items.length + 1;
    const docs = (await col
      .find({ _id: rangeFilter({ ...q, after }) } as never)
      .sort({ _id: q.direction === 'desc' ? -1 : 1 })
      .limit(batch)
      .toArray()) as K[];
    const keys = docs.filter((doc) => typeof doc._id === 'string' && doc._id.startsWith(q.prefix));
    // Nothing in the batch was a key of this range: the server answered outside it; stop.
    if (keys.length === 0) return { items, next: null };
    const loaded = load ? await load(keys) : (keys as unknown as T[]);
    for (const [i, key] of keys.entries()) {
      if (items.length === limit) return { items, next: after ?? null };
      examined += 1;
      after = key._id.slice(q.prefix.length);
      const doc = loaded[i];
      if (doc !== null && doc !== undefined && (!q.match || q.match(doc))) items.push(doc);
    }
    if (docs.length < batch) return { items, next: null };
    // Without a filter the extra document said there is more; with one, it may be so.
    if (items.length === limit) return { items, next: after ?? null };
    if (examined >= maxExamined) return { items, next: after ?? null };
  }
}
