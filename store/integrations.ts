import type { Collection, Db } from 'mongodb';
import type { ProviderOverrides, StoredIntegration } from '../common/stored-documents';
import { AlreadyExistsError } from '../common/errors';
import { isDuplicateKey } from './duplicate-key';
import { KeyAliases } from './key-aliases';
import { keyId, keyPrefixRange } from './key-ids';
import { runOnce } from './migrations';
import { droppingCachesOnWrite, ReadCache } from './read-cache';

/** An integration's document: the fields auth/ reads (common/'s StoredIntegration) and the rest. */
export interface IntegrationDoc extends StoredIntegration {
  provider: string;
  display_name: string;
  /** The app's help page for this integration, linked from the Connect page; absent in documents written before it existed. */
  docs_url?: string | null;
  provider_overrides: ProviderOverrides;
  created_at: Date;
  updated_at: Date;
}

/** `_id` comes from the caller: client credentials are sealed for it before the document exists (sealedAt). */
export type NewIntegration = Pick<IntegrationDoc, '_id' | 'environment' | 'unique_key' | 'provider' | 'display_name'> &
  Partial<Pick<IntegrationDoc, 'credentials_encrypted' | 'provider_overrides' | 'docs_url'>>;

function keyOf(doc: Pick<IntegrationDoc, 'environment' | 'unique_key'>): string {
  return keyId(doc.environment, doc.unique_key);
}

/**
 * Integrations are named by (environment, unique key) on nearly every request; that key
 * resolves through `integration_keys` (see KeyAliases) to the random `_id` the client
 * credentials are sealed for, so a lookup is two reads by `_id` on FerretDB as on MongoDB.
 */
export class IntegrationStore {
  private readonly col: Collection<IntegrationDoc>;
  private readonly recent = new ReadCache<IntegrationDoc>();
  private readonly keys: KeyAliases;
  constructor(private readonly db: Db) {
    // The proxy's lookups are cached briefly (getRecent); any write here drops them.
    this.col = droppingCachesOnWrite(db.collection<IntegrationDoc>('integrations'), this.recent);
    this.keys = new KeyAliases(db, 'integration_keys');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ environment: 1, unique_key: 1 }, { unique: true });
    // Integrations stored before `integration_keys` existed get their key, once.
    await runOnce(this.db, 'integration_keys', async () => {
      const docs = await this.col.find({}, { projection: { environment: 1, unique_key: 1 } }).toArray();
      await this.keys.backfill(docs.map((d) => ({ key: keyOf(d), target: d._id })));
    });
  }

  async create(input: NewIntegration): Promise<IntegrationDoc> {
    const now = new Date();
    const doc: IntegrationDoc = {
      credentials_encrypted: null,
      provider_overrides: {},
      ...input,
      created_at: now,
      updated_at: now,
    };
    const key = keyOf(doc);
    const duplicate = () => new AlreadyExistsError('duplicate_provider_config', `An integration with unique_key "${input.unique_key}" already exists.`);
    const claim = await this.keys.claim(key, doc._id, async (holder) => (await this.col.findOne({ _id: holder })) !== null, now);
    if (!claim.claimed) throw duplicate();
    try {
      await this.col.insertOne(doc);
    } catch (err) {
      await this.keys.release(key, doc._id).catch(() => undefined);
      if (isDuplicateKey(err)) throw duplicate();
      throw err;
    }
    if (!(await this.keys.holds(key, doc._id))) {
      await this.col.deleteOne({ _id: doc._id });
      throw duplicate();
    }
    return doc;
  }

  async get(environment: string, uniqueKey: string): Promise<IntegrationDoc | null> {
    const key = keyId(environment, uniqueKey);
    const target = await this.keys.resolve(key);
    if (!target) return null;
    const doc = await this.col.findOne({ _id: target });
    return doc && keyOf(doc) === key ? doc : null;
  }

  /** get(), served from a cache of a few seconds for the proxy's hot path (see ConnectionStore.findRecent). */
  async getRecent(environment: string, uniqueKey: string): Promise<IntegrationDoc | null> {
    return this.recent.get(keyId(environment, uniqueKey), () => this.get(environment, uniqueKey));
  }

  /** Every integration of every environment (few: a one-time pass over all of them, e.g. a migration). */
  async all(): Promise<IntegrationDoc[]> {
    return this.col.find({}).toArray();
  }

  /** The environment's integrations, oldest first: an `_id` range of `integration_keys`, then one `_id $in` read. */
  async list(environment: string): Promise<IntegrationDoc[]> {
    const aliases = await this.keys.inRange(keyPrefixRange(environment));
    if (aliases.length === 0) return [];
    const docs = await this.col.find({ _id: { $in: aliases.map((a) => a.target) } }).toArray();
    const keyOfTarget = new Map(aliases.map((a) => [a.target, a._id]));
    return docs.filter((d) => keyOfTarget.get(d._id) === keyOf(d)).sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
  }

  async update(
    environment: string,
    uniqueKey: string,
    patch: Partial<Pick<IntegrationDoc, 'display_name' | 'docs_url' | 'credentials_encrypted' | 'provider_overrides'>>,
  ): Promise<IntegrationDoc | null> {
    const existing = await this.get(environment, uniqueKey);
    if (!existing) return null;
    return this.col.findOneAndUpdate({ _id: existing._id }, { $set: { ...patch, updated_at: new Date() } }, { returnDocument: 'after' });
  }

  /** The document first, then its key (see ConnectionStore.delete). */
  async delete(environment: string, uniqueKey: string): Promise<boolean> {
    const existing = await this.get(environment, uniqueKey);
    if (!existing) return false;
    const res = await this.col.deleteOne({ _id: existing._id });
    await this.keys.release(keyOf(existing), existing._id);
    return res.deletedCount === 1;
  }
}
