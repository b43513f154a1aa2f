import type { Collection, Db, Filter } from 'mongodb';
import type { StoredConnection } from '../common/stored-documents';
import { AlreadyExistsError, InvalidValueError } from '../common/errors';
import { fieldNameProblem } from './field-names';
import { isDuplicateKey } from './duplicate-key';
import { KeyAliases } from './key-aliases';
import { keyId, keyPrefixRange } from './key-ids';
import { runOnce } from './migrations';
import { droppingCachesOnWrite, ReadCache } from './read-cache';
import { CONNECTION_NEEDS_REAUTHORIZATION, CONNECTION_OK, IntegrationTallyStore } from './integration-tallies';
import { ConnectionListKeys, integrationScope, listPosition, tagScope } from './connection-list-keys';

/** A connection's document: the fields auth/ reads (common/'s StoredConnection) and what the API adds. */
export interface ConnectionDoc extends StoredConnection {
  metadata: Record<string, unknown>;
  tags: Record<string, string>;
  auth_status: 'ok' | 'needs_reauthorization';
  last_auth_error: string | null;
  created_at: Date;
  updated_at: Date;
}

/** `_id` comes from the caller: the credentials are sealed for it before the document exists (sealedAt). */
export type NewConnection = Omit<ConnectionDoc, 'created_at' | 'updated_at' | 'auth_status' | 'last_auth_error'>;

/** What a scoped listing filters by: tags (all of them), else integrations; `match` checks the rest (a search) on each document. */
export interface ScopedListing {
  tags: Record<string, string>;
  providerConfigKeys?: string[];
  match: (doc: ConnectionDoc) => boolean;
}

export interface ConnectionKey {
  environment: string;
  providerConfigKey: string;
  connectionId: string;
}

/** Whether the connection carries every one of `tags`: keys without regard to case (as Nango's), values exactly. */
export function carriesTags(doc: Pick<ConnectionDoc, 'tags'>, tags: Record<string, string>): boolean {
  return Object.entries(tags).every(([key, value]) => Object.entries(doc.tags ?? {}).some(([k, v]) => k.toLowerCase() === key.toLowerCase() && v === value));
}

/** The first string after every string that starts with `prefix` (non-empty). */
function successor(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** The `_id` of a connection's entry in `connection_keys`. */
function connectionKeyId(environment: string, providerConfigKey: string, connectionId: string): string {
  return keyId(environment, providerConfigKey, connectionId);
}

function keyOf(doc: Pick<ConnectionDoc, 'environment' | 'provider_config_key' | 'connection_id'>): string {
  return connectionKeyId(doc.environment, doc.provider_config_key, doc.connection_id);
}

/**
 * A connection's `_id` is random (its credentials are sealed for it, and it is the public
 * `id`); apps name it by (environment, integration, connection id). That key resolves
 * through `connection_keys` (see KeyAliases), so every lookup is two reads by `_id`, on
 * FerretDB as on MongoDB, however many connections there are.
 */
export class ConnectionStore {
  private readonly col: Collection<ConnectionDoc>;
  private readonly recent = new ReadCache<ConnectionDoc>();
  private readonly leases: Collection<{ _id: string; owner: string; until: Date }>;
  private readonly keys: KeyAliases;
  /** Each connection's auth state in its integration's tally (what the status counts). */
  private readonly tallies: IntegrationTallyStore;
  /** The scopes GET /connections filters by (integration, tag), as `_id` ranges. */
  private readonly listKeys: ConnectionListKeys;
  constructor(private readonly db: Db) {
    this.tallies = new IntegrationTallyStore(db);
    this.listKeys = new ConnectionListKeys(db);
    // The proxy's lookups are cached briefly (findRecent); any write here drops them.
    this.col = droppingCachesOnWrite(db.collection<ConnectionDoc>('connections'), this.recent);
    this.leases = db.collection('connection_refresh_leases');
    this.keys = new KeyAliases(db, 'connection_keys');
  }

  async ensureIndexes(): Promise<void> {
    // MongoDB serves GET /connections (a filtered, sorted list) from these.
    await this.col.createIndex({ environment: 1, provider_config_key: 1, connection_id: 1 }, { unique: true });
    await this.col.createIndex({ environment: 1, created_at: -1 });
    // Connections stored before `connection_keys` existed get their key, once.
    await runOnce(this.db, 'connection_keys', async () => {
      const docs = await this.col.find({}, { projection: { environment: 1, provider_config_key: 1, connection_id: 1 } }).toArray();
      await this.keys.backfill(docs.map((d) => ({ key: keyOf(d), target: d._id })));
    });
    // And their listing keys (by integration, by tag), once.
    await runOnce(this.db, 'connection_list_keys', async () => {
      const docs = await this.col.find({}, { projection: { environment: 1, provider_config_key: 1, created_at: 1, tags: 1 } }).toArray();
      await this.listKeys.backfill(docs.map((d) => ({ ...d, tags: d.tags ?? {} })));
    });
  }

  async create(input: NewConnection): Promise<ConnectionDoc> {
    const now = new Date();
    const doc: ConnectionDoc = { auth_status: 'ok', last_auth_error: null, ...input, created_at: now, updated_at: now };
    const key = keyOf(doc);
    const duplicate = () =>
      new AlreadyExistsError('duplicate_connection', `Connection "${input.connection_id}" already exists for integration "${input.provider_config_key}".`);
    const claim = await this.keys.claim(key, doc._id, async (holder) => (await this.getById(holder)) !== null, now);
    if (!claim.claimed) throw duplicate();
    try {
      // Listed before it exists: a key whose connection is missing reads as nothing.
      await this.listKeys.add(doc);
      await this.col.insertOne(doc);
    } catch (err) {
      await this.listKeys.removeAll(doc).catch(() => undefined);
      await this.keys.release(key, doc._id).catch(() => undefined);
      if (!isDuplicateKey(err)) throw err;
      // MongoDB's unique index knows a connection under this key that has no key entry (its
      // entry was lost in a race): a rare path, so a search is fine; the entry is put back.
      const unlisted = await this.col.findOne({ environment: doc.environment, provider_config_key: doc.provider_config_key, connection_id: doc.connection_id });
      if (unlisted) await this.keys.backfill([{ key, target: unlisted._id }]);
      throw duplicate();
    }
    if (!(await this.keys.holds(key, doc._id))) {
      // Lost the key to a create that took it over meanwhile (see KeyAliases.holds).
      await this.col.deleteOne({ _id: doc._id });
      await this.listKeys.removeAll(doc).catch(() => undefined);
      throw duplicate();
    }
    await this.tallies.setConnection(doc, doc._id, CONNECTION_OK, now);
    return doc;
  }

  async find(key: ConnectionKey): Promise<ConnectionDoc | null> {
    const id = connectionKeyId(key.environment, key.providerConfigKey, key.connectionId);
    const target = await this.keys.resolve(id);
    if (!target) return null;
    const doc = await this.getById(target);
    // An alias left by a delete that stopped half-way names nothing (or something else).
    return doc && keyOf(doc) === id ? doc : null;
  }

  /**
   * find(), served from a cache of a few seconds (READ_CACHE_TTL_MS) for the proxy's hot
   * path: a change by another process shows at most that late, one by this process at once.
   */
  async findRecent(key: ConnectionKey): Promise<ConnectionDoc | null> {
    return this.recent.get(connectionKeyId(key.environment, key.providerConfigKey, key.connectionId), () => this.find(key));
  }

  /** The connection `connectionId` in any of these integrations (a reconnect session may allow several). */
  async findInIntegrations(environment: string, providerConfigKeys: string[], connectionId: string): Promise<ConnectionDoc[]> {
    const ids = providerConfigKeys.map((k) => connectionKeyId(environment, k, connectionId));
    return this.byAliases([...(await this.keys.resolveMany(ids)).entries()].map(([key, target]) => ({ key, target })));
  }

  async getById(id: string): Promise<ConnectionDoc | null> {
    return this.col.findOne({ _id: id });
  }

  /** Connections by `_id` (the integration status's latest errors): one `_id $in` read. */
  async getManyById(ids: string[]): Promise<ConnectionDoc[]> {
    if (ids.length === 0) return [];
    return this.col.find({ _id: { $in: ids } }).toArray();
  }

  /**
   * GET /connections without a scope to read: searched and sorted by creation, so a scan on
   * FerretDB (an index on MongoDB). Lookups of one connection go through find(); filters by
   * integration or tag through listInScopes().
   */
  async list(environment: string, opts: { connectionId?: string; search?: string; limit: number; page: number }): Promise<ConnectionDoc[]> {
    const filter: Filter<ConnectionDoc> = { environment };
    if (opts.connectionId) filter.connection_id = opts.connectionId;
    if (opts.search) filter.connection_id = { $regex: escapeRegex(opts.search), $options: 'i' };
    return this.col
      .find(filter)
      .sort({ created_at: -1, _id: 1 })
      .skip(opts.page * opts.limit)
      .limit(opts.limit)
      .toArray();
  }

  /**
   * GET /connections filtered by tags or integrations, newest first: the connections carrying
   * the first tag (or, without tags, those of each integration, merged), read as `_id` ranges
   * until the page is full, each checked against every filter (`match`) on its document.
   */
  async listInScopes(environment: string, opts: ScopedListing & { limit: number; page: number }): Promise<ConnectionDoc[]> {
    const { scopes, match } = this.scoped(environment, opts);
    const count = (opts.page + 1) * opts.limit;
    // Past any scope Weft holds (and past what a read's limit takes).
    if (count > MAX_SCOPE_READ) return [];
    const found = (await Promise.all(scopes.map((scope) => this.listKeys.firstInScope(scope, count, (ids) => this.loadInOrder(ids), match)))).flat();
    // Several integrations: each scope's first `count`, merged in the scopes' own order (newest first, then `_id` descending).
    found.sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0));
    return found.slice(opts.page * opts.limit, count);
  }

  /**
   * The console's list: one page of the scopes' connections, newest first, after a position
   * (the `next` of the page before), and the position to continue after (null at the end).
   * Each page reads at most a page (or the examined bound, with a search) from each scope,
   * however deep it is: a keyset cursor, not an offset.
   */
  async pageInScopes(
    environment: string,
    opts: ScopedListing & { after?: string; limit: number },
  ): Promise<{ connections: ConnectionDoc[]; next: string | null }> {
    const { scopes, match } = this.scoped(environment, opts);
    const pages = await Promise.all(
      scopes.map((scope) => this.listKeys.pageInScope(scope, { after: opts.after, limit: opts.limit }, (ids) => this.loadInOrder(ids), match)),
    );
    // A scope that stopped early (a full page, or the examined bound) has not been read past its
    // position: nothing older than the newest such position may be shown yet, or a later page
    // would skip what lies between.
    const bound = pages.reduce<string | null>((b, p) => (p.next !== null && (b === null || p.next > b) ? p.next : b), null);
    const candidates = pages
      .flatMap((p) => p.items)
      .map((doc) => ({ doc, position: listPosition(doc) }))
      .filter((c) => bound === null || c.position >= bound)
      .sort((a, b) => (a.position < b.position ? 1 : a.position > b.position ? -1 : 0));
    const shown = candidates.slice(0, opts.limit);
    const next = candidates.length > opts.limit ? shown[shown.length - 1].position : bound;
    return { connections: shown.map((c) => c.doc), next };
  }

  /**
   * The console's search: connections whose id starts with `prefix` (as typed: case counts),
   * in id order across the integrations, one page after a position (the `next` of the page
   * before). Each integration's `connection_keys` hold its connections by id, so this is one
   * `_id` range read per integration, whatever the number of connections.
   */
  async pageByIdPrefix(
    environment: string,
    opts: { providerConfigKeys: string[]; prefix: string; match: (doc: ConnectionDoc) => boolean; after?: string; limit: number },
  ): Promise<{ connections: ConnectionDoc[]; next: string | null }> {
    // Positions and order are the keys' own: the encoded id, then the integration.
    const [afterId, afterKey] =
      opts.after === undefined ? [undefined, undefined] : [opts.after.split('|')[0], decodeURIComponent(opts.after.split('|')[1] ?? '')];
    const encodedPrefix = keyId(opts.prefix);
    const found = await Promise.all(
      opts.providerConfigKeys.map(async (key) => {
        const scope = `${keyId(environment, key)}|`;
        // Up to the prefix's successor (its last character's next): exactly the ids with the prefix,
        // and a bound FerretDB reads from its index (a DEL bound, measured, it does not: 138 ms, not 1 ms, at 10,000 keys).
        const range = { $gte: scope + encodedPrefix, $lt: scope + successor(encodedPrefix) };
        let after: string | null = null;
        if (afterId !== undefined) {
          const at = scope + afterId;
          // Past the position: after its id, or from its id on in an integration that sorts after the position's.
          if (key > (afterKey as string)) range.$gte = at > range.$gte ? at : range.$gte;
          else after = at;
        }
        const aliases = await this.keys.pageInRange(range, after, opts.limit + 1);
        return aliases.map((a) => ({ key, id: a._id.slice(scope.length), target: a.target }));
      }),
    );
    const ordered = found.flat().sort((a, b) => (a.id !== b.id ? (a.id < b.id ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const page = ordered.slice(0, opts.limit);
    const docs = await this.loadInOrder(page.map((p) => p.target));
    const last = page[page.length - 1];
    return {
      connections: docs.filter((d): d is ConnectionDoc => d !== null && opts.match(d)),
      next: ordered.length > opts.limit ? `${last.id}|${encodeURIComponent(last.key)}` : null,
    };
  }

  /** The key ranges a scoped listing reads (the first tag's, else each integration's), and the check of every filter on the document. */
  private scoped(environment: string, opts: ScopedListing): { scopes: string[]; match: (doc: ConnectionDoc) => boolean } {
    const wanted = Object.entries(opts.tags).map(([k, v]) => [k.toLowerCase(), v] as const);
    const integrations = opts.providerConfigKeys ? new Set(opts.providerConfigKeys) : null;
    const match = (doc: ConnectionDoc) =>
      doc.environment === environment && (!integrations || integrations.has(doc.provider_config_key)) && carriesTags(doc, opts.tags) && opts.match(doc);
    const scopes =
      wanted.length > 0 ? [tagScope(environment, wanted[0][0], wanted[0][1])] : [...(integrations ?? [])].map((key) => integrationScope(environment, key));
    return { scopes, match };
  }

  /** Connections by `_id`, in the order asked, null where one is gone. */
  private async loadInOrder(ids: string[]): Promise<Array<ConnectionDoc | null>> {
    const byId = new Map((await this.getManyById(ids)).map((d) => [d._id, d]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** An `_id` range of `connection_keys` (the keys share the integration's prefix), then the connections by `_id`. */
  async listForIntegration(environment: string, providerConfigKey: string): Promise<ConnectionDoc[]> {
    const aliases = await this.keys.inRange(keyPrefixRange(environment, providerConfigKey));
    return this.byAliases(aliases.map((a) => ({ key: a._id, target: a.target })));
  }

  /**
   * One page of an integration's connections in key order, and the key to continue after
   * (null when this was the last page): how a background operation walks thousands of them.
   */
  async pageForIntegration(
    environment: string,
    providerConfigKey: string,
    page: { after: string | null; limit: number },
  ): Promise<{ connections: ConnectionDoc[]; next: string | null }> {
    const aliases = await this.keys.pageInRange(keyPrefixRange(environment, providerConfigKey), page.after, page.limit);
    const connections = await this.byAliases(aliases.map((a) => ({ key: a._id, target: a.target })));
    return { connections, next: aliases.length === page.limit ? aliases[aliases.length - 1]._id : null };
  }

  /** How many connections the integration has (for an operation's progress). */
  async countForIntegration(environment: string, providerConfigKey: string): Promise<number> {
    return (await this.keys.inRange(keyPrefixRange(environment, providerConfigKey))).length;
  }

  private async byAliases(aliases: Array<{ key: string; target: string }>): Promise<ConnectionDoc[]> {
    if (aliases.length === 0) return [];
    const docs = await this.col.find({ _id: { $in: aliases.map((a) => a.target) } }).toArray();
    const keyOfTarget = new Map(aliases.map((a) => [a.target, a.key]));
    return docs.filter((d) => keyOfTarget.get(d._id) === keyOf(d));
  }

  /**
   * `replace` swaps the whole object; `merge` is a shallow merge: each top-level key given
   * replaces that key's value (objects are not merged deeper) and other keys stay. The merge
   * sets `metadata.<key>` per key (one atomic update on both servers), so a key must be a
   * plain field name: a dotted one would write into a nested object. The API refuses such
   * keys with a 400 before this point; this is the store's own guard.
   */
  async updateMetadata(id: string, metadata: Record<string, unknown>, mode: 'replace' | 'merge'): Promise<void> {
    if (mode === 'replace') {
      await this.col.updateOne({ _id: id }, { $set: { metadata, updated_at: new Date() } });
      return;
    }
    const set: Record<string, unknown> = { updated_at: new Date() };
    for (const [key, value] of Object.entries(metadata)) {
      const problem = fieldNameProblem(key);
      if (problem) throw new InvalidValueError('invalid_metadata_key', `Metadata cannot be merged: ${problem}.`);
      set[`metadata.${key}`] = value;
    }
    await this.col.updateOne({ _id: id }, { $set: set });
  }

  /** `PATCH /connections/:id`: each field given replaces the stored one (tags as a whole; a null override clears it). */
  async updateSettings(id: string, patch: Partial<Pick<ConnectionDoc, 'tags' | 'webhook_url_override'>>): Promise<void> {
    const before = patch.tags ? await this.getById(id) : null;
    // The new tags' listing keys first, the old ones' after the document no longer has them.
    if (before && patch.tags) await this.listKeys.add(before, patch.tags);
    await this.col.updateOne({ _id: id }, { $set: { ...patch, updated_at: new Date() } });
    if (before && patch.tags) await this.listKeys.removeStale(before, before.tags ?? {}, patch.tags);
  }

  async updateCredentials(id: string, credentialsEncrypted: string): Promise<void> {
    await this.col.updateOne({ _id: id }, { $set: { credentials_encrypted: credentialsEncrypted, updated_at: new Date() } });
  }

  /** The end user authorized again: new credentials, and the connection is healthy again. */
  async reauthorize(id: string, credentialsEncrypted: string, connectionConfig: Record<string, unknown>): Promise<ConnectionDoc | null> {
    const now = new Date();
    const doc = await this.col.findOneAndUpdate(
      { _id: id },
      {
        $set: {
          credentials_encrypted: credentialsEncrypted,
          connection_config: connectionConfig,
          auth_status: 'ok',
          last_auth_error: null,
          updated_at: now,
        },
      },
      { returnDocument: 'after' },
    );
    if (doc) await this.tallies.setConnection(doc, id, CONNECTION_OK, now);
    return doc;
  }

  /**
   * Takes the refresh lease of a connection if it is free or lapsed. Exactly one caller
   * wins at a time, across processes: the lease is a document keyed by the connection, and
   * inserting a duplicate `_id` fails atomically on every server (a conditional update
   * would not: FerretDB evaluates such filters before it writes, so two could both pass).
   */
  async acquireRefreshLease(id: string, owner: string, ttlMs: number, now = new Date()): Promise<boolean> {
    const lease = { _id: id, owner, until: new Date(now.getTime() + ttlMs) };
    try {
      await this.leases.insertOne(lease);
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const held = await this.leases.findOne({ _id: id });
    if (held && held.until.getTime() >= now.getTime()) return false;
    // Lapsed (its holder died): clear it and race for it again; one insert wins.
    if (held) await this.leases.deleteOne({ _id: id, owner: held.owner });
    try {
      await this.leases.insertOne(lease);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async releaseRefreshLease(id: string, owner: string): Promise<void> {
    await this.leases.deleteOne({ _id: id, owner });
  }

  /** The provider refused the credentials: the end user must connect again. */
  async markNeedsReauthorization(id: string, reason: string): Promise<void> {
    const now = new Date();
    const doc = await this.col.findOneAndUpdate(
      { _id: id },
      { $set: { auth_status: 'needs_reauthorization', last_auth_error: reason, updated_at: now } },
      { returnDocument: 'before' },
    );
    if (doc) await this.tallies.setConnection(doc, id, CONNECTION_NEEDS_REAUTHORIZATION, now);
  }

  /** The document first, then its key: a delete that stops in between leaves a key naming nothing, which reads as absent. */
  async delete(id: string): Promise<void> {
    const doc = await this.getById(id);
    await this.col.deleteOne({ _id: id });
    if (doc) await this.keys.release(keyOf(doc), id);
    if (doc) await this.listKeys.removeAll({ ...doc, tags: doc.tags ?? {} });
    if (doc) await this.tallies.removeConnection(doc, id);
  }
}

/** Connections a scoped list reads at most (page × limit): far past any one tag's or integration's. */
const MAX_SCOPE_READ = 10_000_000;

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
