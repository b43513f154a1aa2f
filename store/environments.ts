import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db, Filter } from 'mongodb';

export interface EnvironmentDoc {
  _id: string; // the environment name: dev, prod, ...
  secret_key_hash: string;
  secret_key_hint: string;
  webhook_url: string | null;
  secondary_webhook_url: string | null;
  alert_webhook_url: string | null;
  send_auth_webhooks: boolean;
  send_sync_completion_always: boolean;
  send_sync_error_webhooks: boolean;
  /** `whsec_...`, sealed with the CredentialCipher; null until first needed. */
  webhook_signing_key_encrypted: string | null;
  webhook_signing_key_hint: string | null;
  /** The key before the last rotation: webhooks carry its signature too for a grace period. */
  previous_webhook_signing_key_encrypted: string | null;
  webhook_signing_key_rotated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** What `PATCH /environment` may change. */
export type EnvironmentSettings = Pick<
  EnvironmentDoc,
  'webhook_url' | 'secondary_webhook_url' | 'alert_webhook_url' | 'send_auth_webhooks' | 'send_sync_completion_always' | 'send_sync_error_webhooks'
>;

/** Values for fields that documents written before they existed do not have. */
const SETTING_DEFAULTS: Omit<EnvironmentDoc, '_id' | 'secret_key_hash' | 'secret_key_hint' | 'created_at' | 'updated_at'> = {
  webhook_url: null,
  secondary_webhook_url: null,
  alert_webhook_url: null,
  send_auth_webhooks: true,
  send_sync_completion_always: false,
  send_sync_error_webhooks: true,
  webhook_signing_key_encrypted: null,
  webhook_signing_key_hint: null,
  previous_webhook_signing_key_encrypted: null,
  webhook_signing_key_rotated_at: null,
};

function withDefaults(doc: EnvironmentDoc | null): EnvironmentDoc | null {
  if (!doc) return null;
  const out = { ...doc } as Record<string, unknown>;
  for (const [k, v] of Object.entries(SETTING_DEFAULTS)) if (out[k] === undefined) out[k] = v;
  return out as unknown as EnvironmentDoc;
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
        ...SETTING_DEFAULTS,
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
    return withDefaults(await this.col.findOne({ secret_key_hash: hashSecretKey(key) }));
  }

  async get(name: string): Promise<EnvironmentDoc | null> {
    return withDefaults(await this.col.findOne({ _id: name }));
  }

  async updateSettings(name: string, patch: Partial<EnvironmentSettings>): Promise<EnvironmentDoc | null> {
    await this.col.updateOne({ _id: name }, { $set: { ...patch, updated_at: new Date() } });
    return this.get(name);
  }

  /**
   * Stores a first signing key unless one exists already (two deliveries racing to create
   * it must end up with the same key). Returns the sealed key now in place.
   */
  async setSigningKeyIfAbsent(name: string, sealed: string, hint: string): Promise<string | null> {
    await this.col.updateOne(
      { _id: name, webhook_signing_key_encrypted: { $in: [null] } } as Filter<EnvironmentDoc>,
      { $set: { webhook_signing_key_encrypted: sealed, webhook_signing_key_hint: hint, updated_at: new Date() } },
    );
    return (await this.get(name))?.webhook_signing_key_encrypted ?? null;
  }

  /**
   * Replaces the signing key if it is still `expectedCurrent` (compare-and-set, so two
   * concurrent rotations cannot both win and lose a key); the replaced key becomes the
   * previous one. Returns false when the environment or the expected key is gone.
   */
  async replaceSigningKey(name: string, expectedCurrent: string | null, sealed: string, hint: string, at: Date): Promise<boolean> {
    const res = await this.col.updateOne(
      { _id: name, webhook_signing_key_encrypted: expectedCurrent === null ? { $in: [null] } : expectedCurrent } as Filter<EnvironmentDoc>,
      {
        $set: {
          webhook_signing_key_encrypted: sealed,
          webhook_signing_key_hint: hint,
          previous_webhook_signing_key_encrypted: expectedCurrent,
          webhook_signing_key_rotated_at: at,
          updated_at: at,
        },
      },
    );
    return res.matchedCount === 1;
  }
}

export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: number }).code === 11000;
}
