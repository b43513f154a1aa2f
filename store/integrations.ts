import type { Collection, Db } from 'mongodb';
import { ConflictError } from '../common/errors';
import { isDuplicateKey } from './environments';

/** Per-integration overrides of the provider's defaults (sandbox, self-hosted provider, tests). */
export interface ProviderOverrides {
  base_url?: string;
  /** Origin of the provider's authorization server (its login pages and token endpoint). */
  auth_base_url?: string;
  rate_limit?: { requests: number; window_ms: number; lockout_ms?: number };
}

export interface IntegrationDoc {
  _id: string;
  environment: string;
  unique_key: string;
  provider: string;
  display_name: string;
  /** Client credentials (OAuth client secret, App private key), encrypted. */
  credentials_encrypted: string | null;
  provider_overrides: ProviderOverrides;
  created_at: Date;
  updated_at: Date;
}

/** `_id` comes from the caller: client credentials are sealed for it before the document exists (sealedAt). */
export type NewIntegration = Pick<IntegrationDoc, '_id' | 'environment' | 'unique_key' | 'provider' | 'display_name'> &
  Partial<Pick<IntegrationDoc, 'credentials_encrypted' | 'provider_overrides'>>;

export class IntegrationStore {
  private readonly col: Collection<IntegrationDoc>;
  constructor(db: Db) {
    this.col = db.collection<IntegrationDoc>('integrations');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ environment: 1, unique_key: 1 }, { unique: true });
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
    try {
      await this.col.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) {
        throw new ConflictError('duplicate_provider_config', `An integration with unique_key "${input.unique_key}" already exists.`);
      }
      throw err;
    }
    return doc;
  }

  async get(environment: string, uniqueKey: string): Promise<IntegrationDoc | null> {
    return this.col.findOne({ environment, unique_key: uniqueKey });
  }

  async list(environment: string): Promise<IntegrationDoc[]> {
    return this.col.find({ environment }).sort({ created_at: 1 }).toArray();
  }

  async update(
    environment: string,
    uniqueKey: string,
    patch: Partial<Pick<IntegrationDoc, 'display_name' | 'credentials_encrypted' | 'provider_overrides'>>,
  ): Promise<IntegrationDoc | null> {
    return this.col.findOneAndUpdate(
      { environment, unique_key: uniqueKey },
      { $set: { ...patch, updated_at: new Date() } },
      { returnDocument: 'after' },
    );
  }

  async delete(environment: string, uniqueKey: string): Promise<boolean> {
    const res = await this.col.deleteOne({ environment, unique_key: uniqueKey });
    return res.deletedCount === 1;
  }
}
