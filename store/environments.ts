import { createHash, randomBytes } from 'node:crypto';
import { Binary, type Collection, type Db, type Filter } from 'mongodb';
import { AlreadyExistsError } from '../common/errors';
import { isDuplicateKey } from './duplicate-key';
import { KeyAliases } from './key-aliases';
import { runOnce } from './migrations';
import { LRUCache } from 'lru-cache';
import { droppingCachesOnWrite, READ_CACHE_TTL_MS, ReadCache } from './read-cache';

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
  /** How the Connect page presents the app to its end users (`PATCH /environment` `branding`). */
  branding: EnvironmentBranding;
  /** Whether `/mcp` serves this environment's connections; null: the default (mcpEnabled). */
  mcp_enabled: boolean | null;
  created_at: Date;
  updated_at: Date;
}

export type ConnectTheme = 'light' | 'dark' | 'auto';
/** The image types a logo may be: raster only (an SVG is a document that can carry script and links). */
export type LogoContentType = 'image/png' | 'image/jpeg' | 'image/webp';

/** A logo Weft fetched once and serves itself, by the hash of its bytes (`environment_logos`). */
export interface StoredLogo {
  sha256: string;
  content_type: LogoContentType;
  size: number;
  /** Where it was fetched from, as the app gave it. */
  source_url: string;
  fetched_at: Date;
}

export interface EnvironmentBranding {
  app_name: string | null;
  logo: StoredLogo | null;
  /** `#rrggbb`, lower-case. */
  primary_color: string | null;
  theme: ConnectTheme;
}

export const DEFAULT_BRANDING: EnvironmentBranding = { app_name: null, logo: null, primary_color: null, theme: 'light' };

/** What `PATCH /environment` may change. */
export type EnvironmentSettings = Pick<
  EnvironmentDoc,
  | 'webhook_url'
  | 'secondary_webhook_url'
  | 'alert_webhook_url'
  | 'send_auth_webhooks'
  | 'send_sync_completion_always'
  | 'send_sync_error_webhooks'
  | 'branding'
  | 'mcp_enabled'
>;

/** A logo's bytes, by their SHA-256 (hex): the same image set in two environments is stored once. */
interface LogoDoc {
  _id: string;
  content_type: LogoContentType;
  data: Binary;
  created_at: Date;
}

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
  branding: DEFAULT_BRANDING,
  mcp_enabled: null,
};

/**
 * Whether the environment's connections are served as MCP tools (`/mcp`): as set with
 * `PATCH /environment`, else on everywhere but in `prod`, where agents get nothing until an
 * operator turns it on.
 */
export function mcpEnabled(env: Pick<EnvironmentDoc, '_id' | 'mcp_enabled'>): boolean {
  return env.mcp_enabled ?? env._id !== 'prod';
}

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

/**
 * How long a key found to name no environment is answered "no" from memory: a burst of requests
 * with a wrong key makes one database lookup, not one each. A key created through this process
 * works at once (its write drops the cache); one created by another process (another API,
 * `weft setup`) within this long, as a replaced key stops (READ_CACHE_TTL_MS).
 */
const UNKNOWN_KEY_TTL_MS = READ_CACHE_TTL_MS;
/** Distinct wrong keys remembered at most (64-character hashes: under 2 MB). */
const UNKNOWN_KEY_MAX = 10_000;

function generateSecretKey(environment: string): string {
  return `weft_sk_${environment}_${randomBytes(24).toString('base64url')}`;
}

/**
 * Every API request names its environment by secret key: the key's hash resolves through
 * `environment_keys` (see KeyAliases) to the environment's name, its `_id`, so
 * authentication is two reads by `_id`.
 */
export class EnvironmentStore {
  private readonly col: Collection<EnvironmentDoc>;
  /** Key hash to environment name, for READ_CACHE_TTL_MS: a key replaced by another process still opens its environment that long. */
  private readonly byKey = new ReadCache<string>();
  /** Hashes of keys that named no environment, for UNKNOWN_KEY_TTL_MS. */
  private readonly unknownKeys = new LRUCache<string, true>({ max: UNKNOWN_KEY_MAX, ttl: UNKNOWN_KEY_TTL_MS });
  /** Bumped by every write: a lookup under way across a write does not mark its key unknown (it may predate the write). */
  private unknownGeneration = 0;
  private readonly keys: KeyAliases;
  private readonly logos: Collection<LogoDoc>;
  constructor(private readonly db: Db) {
    const forgetUnknown = {
      clear: () => {
        this.unknownGeneration += 1;
        this.unknownKeys.clear();
      },
    };
    // Every request's key check is cached briefly (environmentForSecretKey), found or not; any write here drops both.
    this.col = droppingCachesOnWrite(db.collection<EnvironmentDoc>('environments'), this.byKey, forgetUnknown);
    this.keys = new KeyAliases(db, 'environment_keys');
    this.logos = db.collection<LogoDoc>('environment_logos');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ secret_key_hash: 1 }, { unique: true });
    // Environments stored before `environment_keys` existed get their key, once.
    await runOnce(this.db, 'environment_keys', async () => {
      const docs = await this.col.find({}, { projection: { secret_key_hash: 1 } }).toArray();
      await this.keys.backfill(docs.filter((d) => typeof d.secret_key_hash === 'string').map((d) => ({ key: d.secret_key_hash, target: d._id })));
    });
  }

  /** Claims a key hash for an environment; another environment with that very key is an operator error. */
  private async claimKey(hash: string, name: string): Promise<void> {
    const claim = await this.keys.claim(hash, name, async (holder) => (await this.col.findOne({ _id: holder }))?.secret_key_hash === hash);
    if (!claim.claimed)
      throw new AlreadyExistsError('duplicate_secret_key', `Environment "${name}" cannot use the secret key of environment "${claim.holder}".`);
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
        const hash = hashSecretKey(providedKey);
        await this.claimKey(hash, name);
        await this.col.updateOne({ _id: name }, { $set: { secret_key_hash: hash, secret_key_hint: providedKey.slice(-4), updated_at: new Date() } });
        // The old key stops working now: its alias no longer matches the environment's hash.
        if (existing.secret_key_hash) await this.keys.release(existing.secret_key_hash, name);
      }
      return { created: false };
    }
    const secretKey = providedKey ?? generateSecretKey(name);
    const hash = hashSecretKey(secretKey);
    await this.claimKey(hash, name);
    const now = new Date();
    try {
      await this.col.insertOne({
        _id: name,
        secret_key_hash: hash,
        secret_key_hint: secretKey.slice(-4),
        ...SETTING_DEFAULTS,
        created_at: now,
        updated_at: now,
      });
    } catch (err) {
      if (isDuplicateKey(err)) {
        // Another process created it first, maybe with another (generated) key: ours names nothing.
        if ((await this.col.findOne({ _id: name }))?.secret_key_hash !== hash) await this.keys.release(hash, name);
        return { created: false };
      }
      await this.keys.release(hash, name).catch(() => undefined);
      throw err;
    }
    return { created: true, secretKey };
  }

  /**
   * The environment's name for a secret key (every API request's check), cached briefly, and
   * so is "none" (UNKNOWN_KEY_TTL_MS). Concurrent checks of one key share one lookup.
   */
  async environmentForSecretKey(key: string): Promise<string | null> {
    const hash = hashSecretKey(key);
    if (this.unknownKeys.has(hash)) return null;
    const generation = this.unknownGeneration;
    const name = await this.byKey.get(hash, async () => (await this.findBySecretKey(key))?._id ?? null);
    if (name === null && generation === this.unknownGeneration) this.unknownKeys.set(hash, true);
    return name;
  }

  /** Whether this process has just found `key` to name an environment (no lookup is made). */
  isRecentlyVerifiedSecretKey(key: string): boolean {
    return this.byKey.has(hashSecretKey(key));
  }

  async findBySecretKey(key: string): Promise<EnvironmentDoc | null> {
    const hash = hashSecretKey(key);
    const name = await this.keys.resolve(hash);
    if (!name) return null;
    const doc = await this.col.findOne({ _id: name });
    // A replaced key's alias may outlive the replacement for a moment: the hash decides.
    return doc?.secret_key_hash === hash ? withDefaults(doc) : null;
  }

  async get(name: string): Promise<EnvironmentDoc | null> {
    return withDefaults(await this.col.findOne({ _id: name }));
  }

  async updateSettings(name: string, patch: Partial<EnvironmentSettings>): Promise<EnvironmentDoc | null> {
    const before = patch.branding ? await this.get(name) : null;
    await this.col.updateOne({ _id: name }, { $set: { ...patch, updated_at: new Date() } });
    const replaced = before?.branding.logo?.sha256;
    if (replaced && replaced !== patch.branding?.logo?.sha256) await this.dropLogoUnlessUsed(replaced);
    return this.get(name);
  }

  /** Keeps a logo's bytes (before the environment names it: a logo named is always there). */
  async putLogo(sha256: string, contentType: LogoContentType, bytes: Buffer): Promise<void> {
    await this.logos.updateOne(
      { _id: sha256 },
      { $setOnInsert: { content_type: contentType, data: new Binary(bytes), created_at: new Date() } },
      { upsert: true },
    );
  }

  async getLogo(sha256: string): Promise<{ contentType: LogoContentType; bytes: Buffer } | null> {
    const doc = await this.logos.findOne({ _id: sha256 });
    return doc ? { contentType: doc.content_type, bytes: Buffer.from(doc.data.buffer) } : null;
  }

  /**
   * A logo no environment names any more is deleted; one set again meanwhile is put back by its
   * putLogo (which comes before the environment names it).
   */
  private async dropLogoUnlessUsed(sha256: string): Promise<void> {
    if (await this.col.findOne({ 'branding.logo.sha256': sha256 } as Filter<EnvironmentDoc>, { projection: { _id: 1 } })) return;
    await this.logos.deleteOne({ _id: sha256 });
  }

  /**
   * Stores a first signing key unless one exists already (two deliveries racing to create
   * it must end up with the same key). Returns the sealed key now in place.
   */
  async setSigningKeyIfAbsent(name: string, sealed: string, hint: string): Promise<string | null> {
    await this.col.updateOne({ _id: name, webhook_signing_key_encrypted: { $in: [null] } } as Filter<EnvironmentDoc>, {
      $set: { webhook_signing_key_encrypted: sealed, webhook_signing_key_hint: hint, updated_at: new Date() },
    });
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
