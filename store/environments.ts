import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';

export interface EnvironmentDoc {
  _id: string; // the environment name: dev, prod, ...
  secret_key_hash: string;
  secret_key_hint: string;
  webhook_url: string | null;
  secondary_webhook_url: string | null;
  alert_webhook_url: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Secret keys are random 32-byte values, so a plain SHA-256 is enough to look them up. */
export function hashSecretKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateSecretKey(environment: string): string {
  return `weft_sk_${environment}_${randomBytes(24).toString('base64url')}`;
}

export class EnvironmentStore {
  private readonly col: Collection<EnvironmentDoc>;
  constructor(db: Db) {
    this.col = db.collection<EnvironmentDoc>('environments');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ secret_key_hash: 1 }, { unique: true });
  }

  /**
   * Creates the environment if it does not exist. Returns the plaintext key only when it
   * was created now (it is never stored and cannot be shown again).
   */
  async ensure(name: string, providedKey?: string): Promise<{ created: boolean; secretKey?: string }> {
    const existing = await this.col.findOne({ _id: name });
    if (existing) {
      if (providedKey && existing.secret_key_hash !== hashSecretKey(providedKey)) {
        // An operator-provided key wins: it lets a deployment pin its keys in config.
        await this.col.updateOne(
          { _id: name },
          { $set: { secret_key_hash: hashSecretKey(providedKey), secret_key_hint: providedKey.slice(-4), updated_at: new Date() } },
        );
      }
      return { created: false };
    }
    const secretKey = providedKey ?? generateSecretKey(name);
    const now = new Date();
    try {
      await this.col.insertOne({
        _id: name,
        secret_key_hash: hashSecretKey(secretKey),
        secret_key_hint: secretKey.slice(-4),
        webhook_url: null,
        secondary_webhook_url: null,
        alert_webhook_url: null,
        created_at: now,
        updated_at: now,
      });
    } catch (err) {
      if (isDuplicateKey(err)) return { created: false }; // another process created it first
      throw err;
    }
    return { created: true, secretKey };
  }

  async findBySecretKey(key: string): Promise<EnvironmentDoc | null> {
    return this.col.findOne({ secret_key_hash: hashSecretKey(key) });
  }

  async get(name: string): Promise<EnvironmentDoc | null> {
    return this.col.findOne({ _id: name });
  }
}

export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
