import type { Collection, Db } from 'mongodb';
import { insertManyIgnoringDuplicates } from './duplicate-key';

/**
 * One change of one record: the record `id` got version `seq` of its scope at `at`.
 *
 * Its key is `<scope key><seq, 12 digits>|<URI-encoded id>` (the scope key is the scope's
 * counter id, `conn|model|variant|`), so a scope's changes in sequence order are one key
 * range. Ties (a delete detection gives one seq to many records) are ordered by the encoded id.
 */
export interface FeedEntry {
  _id: string;
  /**
   * Epoch ms, never less than the record's `last_modified_at` and never less than the
   * entry before it in the scope: monotonic in `seq`, so `modified_after` finds its start
   * by a binary search instead of a scan (see RecordStore.reserveSeq).
   */
  at: number;
  /** The pack the entry is stored in (what `forget` rewrites). */
  pack: string;
}

/**
 * Entries are stored in packs: one document per run of up to PACK consecutive entries of
 * one append, `_id` = its first entry's key. One document per entry cost a sync about a
 * fifth of its ingest time on FerretDB (an insert per record, twice); a pack costs one insert
 * per PACK records. Packs of one scope never overlap (see `append`), so the packs in `_id`
 * order hold the entries in key order, and a range of entries is a range of packs plus the
 * pack that straddles its start.
 */
interface FeedPack {
  _id: string;
  /**
   * The entries, one line each, ascending: the key after the scope key, a tab, `at` in base
   * 36. One string costs FerretDB a fraction of what arrays of 250 values each cost it to
   * decode on every page read.
   */
  e?: string;
  /** The layout before `e` (packs written by earlier versions, read as they are): keys after the scope key, and their `at`. */
  s?: string[];
  at?: number[];
}

/** A pack's entries as [key after the scope key, at], from either layout. */
function entriesOf(pack: FeedPack): Array<readonly [string, number]> {
  if (pack.e !== undefined) {
    if (pack.e === '') return [];
    return pack.e.split('\n').map((line) => {
      const tab = line.lastIndexOf('\t');
      return [line.slice(0, tab), parseInt(line.slice(tab + 1), 36)] as const;
    });
  }
  return (pack.s ?? []).map((s, i) => [s, pack.at?.[i] ?? 0] as const);
}

/** Entries in the pack layout (keys hold no newline or tab: the id in them is URI-encoded). */
function encodePack(entries: ReadonlyArray<readonly [string, number]>): string {
  return entries.map(([s, at]) => `${s}\t${at.toString(36)}`).join('\n');
}

/** Digits of a padded seq: 10^12 changes per scope. */
const SEQ_DIGITS = 12;
/** Entries per pack: a page of 100 reads one or two packs. */
const PACK = 250;
/** Packs per delete or insert statement. */
const CHUNK = 200;

export function feedKey(scopeKey: string, seq: number, id: string): string {
  return `${seqPrefix(scopeKey, seq)}|${encodeURIComponent(id)}`;
}

/**
 * A position that sorts before every entry of `seq` and after every entry of smaller seqs
 * (the prefix of the keys of `seq`): `$gt` it starts at `seq`, `$lt` it stops before.
 */
export function seqPrefix(scopeKey: string, seq: number): string {
  return scopeKey + String(seq).padStart(SEQ_DIGITS, '0');
}

/** The change a key stands for (the reverse of feedKey). */
export function positionOf(scopeKey: string, key: string): { seq: number; id: string } {
  const rest = key.slice(scopeKey.length);
  return { seq: Number(rest.slice(0, SEQ_DIGITS)), id: decodeURIComponent(rest.slice(SEQ_DIGITS + 1)) };
}

/**
 * The per-scope change feed (`record_feed`). Writers append the entries of every record
 * version before writing the versions and before committing their seqs; readers page by
 * `_id` ranges of packs up to the committed mark and read the records by `_id $in`. An entry
 * whose record has moved on to a later seq is superseded: readers skip it (the later change
 * has its own entry) and drop it from its pack when they meet it.
 */
export class RecordFeed {
  private readonly col: Collection<FeedPack>;

  constructor(db: Db) {
    this.col = db.collection<FeedPack>('record_feed');
  }

  /**
   * Writes the entries of one batch, in packs. The entries of one call must not interleave
   * with those of another (the packs of a scope do not overlap): true of a writer's batches,
   * each a fresh block of seqs (a delete detection: one fresh seq), and of a backfill, which
   * appends one entry per pack and only below the first seq already in the feed. A batch
   * appended again (a retried batch, a repaired swap) makes the same packs, which are kept
   * as they are.
   */
  async append(scopeKey: string, changes: Array<{ id: string; seq: number; at: number }>, opts: { single?: boolean } = {}): Promise<void> {
    const entries = changes.map((c) => ({ key: feedKey(scopeKey, c.seq, c.id), at: c.at })).sort((a, b) => compare(a.key, b.key));
    const size = opts.single ? 1 : PACK;
    const packs: FeedPack[] = [];
    for (let i = 0; i < entries.length; i += size) {
      const run = entries.slice(i, i + size);
      packs.push({ _id: run[0].key, e: encodePack(run.map((e) => [e.key.slice(scopeKey.length), e.at] as const)) });
    }
    for (let i = 0; i < packs.length; i += CHUNK) await insertManyIgnoringDuplicates(this.col, packs.slice(i, i + CHUNK));
  }

  /**
   * Up to `limit` entries after position `after` and before `until`, in order: the pack that
   * straddles `after`, then the packs after it. Both reads are exactly `_id` range + sort
   * on `_id` + limit, the shape FerretDB (patched) and MongoDB read from the `_id` index.
   */
  async window(scopeKey: string, after: string, until: string, limit: number): Promise<FeedEntry[]> {
    const out: FeedEntry[] = [];
    const take = (pack: FeedPack) => {
      for (const [s, at] of entriesOf(pack)) {
        if (out.length >= limit) break;
        const key = scopeKey + s;
        if (key > after && key < until) out.push({ _id: key, at, pack: pack._id });
      }
    };
    const [straddling] = await this.col
      .find({ _id: { $gte: scopeKey, $lte: after } })
      .sort({ _id: -1 })
      .limit(1)
      .toArray();
    if (straddling) take(straddling);
    let from = after;
    for (let packs = 2; out.length < limit; packs *= 4) {
      const next = await this.col
        .find({ _id: { $gt: from, $lt: until } })
        .sort({ _id: 1 })
        .limit(packs)
        .toArray();
      for (const pack of next) take(pack);
      if (next.length < packs) break;
      from = next[next.length - 1]._id;
    }
    return out;
  }

  /** The first entry after position `after` and before `until`, if any. */
  async first(scopeKey: string, after: string, until: string): Promise<FeedEntry | undefined> {
    return (await this.window(scopeKey, after, until, 1))[0];
  }

  /** Drops superseded entries from their packs (a pack left empty goes). */
  async forget(scopeKey: string, entries: FeedEntry[]): Promise<void> {
    const byPack = new Map<string, Set<string>>();
    for (const e of entries) {
      const keys = byPack.get(e.pack) ?? new Set<string>();
      keys.add(e._id.slice(scopeKey.length));
      byPack.set(e.pack, keys);
    }
    for (const [id, gone] of byPack) {
      const pack = await this.col.findOne({ _id: id });
      if (!pack) continue;
      const all = entriesOf(pack);
      const keep = all.filter(([s]) => !gone.has(s));
      // Superseded stays superseded (a record's seq only grows): two readers dropping
      // different sets from one pack at once can only leave one of them to drop again.
      if (keep.length === 0) await this.col.deleteMany({ _id: { $in: [id] } });
      else if (keep.length < all.length) await this.col.updateOne({ _id: id }, { $set: { e: encodePack(keep) }, $unset: { s: '', at: '' } });
    }
  }

  /** The seq of the scope's first entry, if it has any (where a backfill must stop). */
  async firstSeq(scopeKey: string): Promise<number | undefined> {
    const [pack] = await this.col
      .find({ _id: { $gte: scopeKey, $lt: `${scopeKey.slice(0, -1)}}` } })
      .sort({ _id: 1 })
      .limit(1)
      .toArray();
    return pack ? positionOf(scopeKey, scopeKey + entriesOf(pack)[0][0]).seq : undefined;
  }

  /** Removes every pack whose key starts with `prefix` (one scope, or a whole connection). */
  async deletePrefix(prefix: string): Promise<void> {
    // '|' ends every prefix, and '}' is the character after it: [prefix, prefix-with-'}') is the whole key space under it.
    if (!prefix.endsWith('|')) throw new Error(`feed key prefix must end with '|': ${prefix}`);
    await this.col.deleteMany({ _id: { $gte: prefix, $lt: `${prefix.slice(0, -1)}}` } });
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
