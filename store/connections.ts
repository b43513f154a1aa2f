import type { Collection, Db, Filter } from 'mongodb';
import { BadRequestError, ConflictError } from '../common/errors';
import { fieldNameProblem } from './field-names';
import { isDuplicateKey } from './environments';

export type AuthMode = 'API_KEY' | 'OAUTH2' | 'APP';

export interface ConnectionDoc {
  _id: string;
  environment: string;
  provider_config_key: string;
  provider: string;
  connection_id: string;
  auth_mode: AuthMode;
  /** The credentials object, JSON-encoded then AES-256-GCM encrypted (auth/credential-cipher). */
  credentials_encrypted: string;
  connection_config: Record<string, unknown>;
  metadata: Record<string, unknown>;
  tags: Record<string, string>;
  auth_status: 'ok' | 'needs_reauthorization';
  last_auth_error: string | null;
  created_at: Date;
  updated_at: Date;
}

/** `_id` comes from the caller: the credentials are sealed for it before the document exists (sealedAt). */
export type NewConnection = Omit<ConnectionDoc, 'created_at' | 'updated_at' | 'auth_status' | 'last_auth_error'>;

export interface ConnectionKey {
  environment: string;
  providerConfigKey: string;
  connectionId: string;
}

export class ConnectionStore {
  private readonly col: Collection<ConnectionDoc>;
  private readonly leases: Collection<{ _id: string; owner: string; until: Date }>;
  constructor(db: Db) {
    this.col = db.collection<ConnectionDoc>('connections');
    this.leases = db.collection('connection_refresh_leases');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ environment: 1, provider_config_key: 1, connection_id: 1 }, { unique: true });
    await this.col.createIndex({ environment: 1, created_at: -1 });
  }

  async create(input: NewConnection): Promise<ConnectionDoc> {
    const now = new Date();
    const doc: ConnectionDoc = { auth_status: 'ok', last_auth_error: null, ...input, created_at: now, updated_at: now };
    try {
      await this.col.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) {
        throw new ConflictError(
          'duplicate_connection',
          `Connection "${input.connection_id}" already exists for integration "${input.provider_config_key}".`,
        );
      }
      throw err;
    }
    return doc;
  }

  async find(key: ConnectionKey): Promise<ConnectionDoc | null> {
    return this.col.findOne({ environment: key.environment, provider_config_key: key.providerConfigKey, connection_id: key.connectionId });
  }

  async getById(id: string): Promise<ConnectionDoc | null> {
    return this.col.findOne({ _id: id });
  }

  async list(
    environment: string,
    opts: { connectionId?: string; search?: string; providerConfigKey?: string; limit: number; page: number },
  ): Promise<ConnectionDoc[]> {
    const filter: Filter<ConnectionDoc> = { environment };
    if (opts.connectionId) filter.connection_id = opts.connectionId;
    if (opts.providerConfigKey) filter.provider_config_key = opts.providerConfigKey;
    if (opts.search) filter.connection_id = { $regex: escapeRegex(opts.search), $options: 'i' };
    return this.col
      .find(filter)
      .sort({ created_at: -1, _id: 1 })
      .skip(opts.page * opts.limit)
      .limit(opts.limit)
      .toArray();
  }

  async listForIntegration(environment: string, providerConfigKey: string): Promise<ConnectionDoc[]> {
    return this.col.find({ environment, provider_config_key: providerConfigKey }).toArray();
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
      if (problem) throw new BadRequestError('invalid_metadata_key', `Metadata cannot be merged: ${problem}.`);
      set[`metadata.${key}`] = value;
    }
    await this.col.updateOne({ _id: id }, { $set: set });
  }

  async updateCredentials(id: string, credentialsEncrypted: string): Promise<void> {
    await this.col.updateOne({ _id: id }, { $set: { credentials_encrypted: credentialsEncrypted, updated_at: new Date() } });
  }

  /** The end user authorized again: new credentials, and the connection is healthy again. */
  async reauthorize(id: string, credentialsEncrypted: string, connectionConfig: Record<string, unknown>): Promise<ConnectionDoc | null> {
    return this.col.findOneAndUpdate(
      { _id: id },
      { $set: { credentials_encrypted: credentialsEncrypted, connection_config: connectionConfig, auth_status: 'ok', last_auth_error: null, updated_at: new Date() } },
      { returnDocument: 'after' },
    );
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
    await this.col.updateOne({ _id: id }, { $set: { auth_status: 'needs_reauthorization', last_auth_error: reason, updated_at: new Date() } });
  }

  async delete(id: string): Promise<void> {
    await this.col.deleteOne({ _id: id });
  }
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
