import type { Collection, Db } from 'mongodb';
import { keyId } from './key-ids';
import { readRangePage, timeKey, type RangePage } from './key-range';
import { insertMissing } from './migrations';

/** What a connection's listing keys are made from (fields that never change but its tags). */
export interface ListedConnection {
  _id: string;
  environment: string;
  provider_config_key: string;
  created_at: Date;
  tags: Record<string, string>;
}

/** One listing key: `<scope prefix><created time>|<connection _id>`, naming the connection. */
interface ListKeyDoc {
  _id: string;
  target: string;
}

/**
 * Scopes `GET /connections` filters by, each one `_id` range of `connection_list_keys`, newest
 * first: an integration's connections (`<env>|i|<integration>|…`) and the connections carrying
 * a tag (`<env>|t|<key, lower-case>|<value>|…`; tag keys match without regard to case, as
 * Nango's do). FerretDB reads nothing but `_id` ranges fast, so a filtered list costs the
 * connections in its scope up to the page, not every connection of the database. The keys
 * are pointers: a reader loads the connections by `_id` and checks every filter on the
 * document itself, so a key left by a write that stopped half-way is passed over, never shown.
 */
const CONNECTION_LIST_KEYS = 'connection_list_keys';

export function integrationScope(environment: string, providerConfigKey: string): string {
  return `${keyId(environment, 'i', providerConfigKey)}|`;
}

export function tagScope(environment: string, key: string, value: string): string {
  return `${keyId(environment, 't', key.toLowerCase(), value)}|`;
}

/** Where a connection sits in every scope it is listed in: its keys' common tail, newest last. */
export function listPosition(c: Pick<ListedConnection, '_id' | 'created_at'>): string {
  return `${timeKey(c.created_at)}|${encodeURIComponent(c._id)}`;
}

/** Every listing key of the connection as it is (or would be with these tags). */
function keysOf(c: ListedConnection, tags: Record<string, string> = c.tags): string[] {
  const scopes = [integrationScope(c.environment, c.provider_config_key), ...Object.entries(tags).map(([k, v]) => tagScope(c.environment, k, v))];
  return [...new Set(scopes.map((s) => s + listPosition(c)))];
}

export class ConnectionListKeys {
  private readonly col: Collection<ListKeyDoc>;
  constructor(private readonly db: Db) {
    this.col = db.collection<ListKeyDoc>(CONNECTION_LIST_KEYS);
  }

  /** Before the connection is written (or its tags changed): a key without its connection reads as nothing. */
  async add(c: ListedConnection, tags: Record<string, string> = c.tags): Promise<void> {
    await insertMissing<ListKeyDoc>(
      this.db,
      CONNECTION_LIST_KEYS,
      keysOf(c, tags).map((_id) => ({ _id, target: c._id })),
    );
  }

  /** The keys of `before`'s tags that `after`'s no longer have (after the new ones were written and the document updated). */
  async removeStale(c: ListedConnection, before: Record<string, string>, after: Record<string, string>): Promise<void> {
    const keep = new Set(keysOf(c, after));
    const stale = keysOf(c, before).filter((k) => !keep.has(k));
    if (stale.length > 0) await this.col.deleteMany({ _id: { $in: stale } });
  }

  /** After the connection is deleted. */
  async removeAll(c: ListedConnection): Promise<void> {
    await this.col.deleteMany({ _id: { $in: keysOf(c) } });
  }

  /** Keys for connections stored before this collection existed (idempotent). */
  async backfill(connections: ListedConnection[]): Promise<void> {
    await insertMissing<ListKeyDoc>(
      this.db,
      CONNECTION_LIST_KEYS,
      connections.flatMap((c) => keysOf(c).map((_id) => ({ _id, target: c._id }))),
    );
  }

  /**
   * The first `count` connections of a scope, newest first, that `match` accepts: an `_id`
   * range read in batches, each batch's connections loaded by `_id $in`.
   */
  async firstInScope<T>(scope: string, count: number, load: (ids: string[]) => Promise<Array<T | null>>, match: (doc: T) => boolean): Promise<T[]> {
    const page = await readRangePage<ListKeyDoc, T>(
      this.col,
      // No cap on what is examined: the list has no cursor to continue with; the scope bounds the read.
      { prefix: scope, direction: 'desc', limit: count, match, maxExamined: Number.MAX_SAFE_INTEGER },
      (keys) => load(keys.map((k) => k.target)),
    );
    return page.items;
  }

  /**
   * One page of a scope, newest first, after a position (exclusive), and the position the read
   * stopped at (null when the scope has nothing older): at most a page of matches, and at most
   * the range reader's bound of keys examined.
   */
  async pageInScope<T>(
    scope: string,
    page: { after?: string; limit: number },
    load: (ids: string[]) => Promise<Array<T | null>>,
    match: (doc: T) => boolean,
  ): Promise<RangePage<T>> {
    return readRangePage<ListKeyDoc, T>(this.col, { prefix: scope, direction: 'desc', after: page.after, limit: page.limit, match }, (keys) =>
      load(keys.map((k) => k.target)),
    );
  }
}
