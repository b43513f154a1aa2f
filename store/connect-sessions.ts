import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { ensureExpiry, type ExpiryRule } from './ttl';

/** What an app lets one end user connect (POST /connect/sessions). */
export interface IntegrationDefaults {
  user_scopes?: string[];
  authorization_params?: Record<string, string>;
  connection_config?: Record<string, unknown>;
}

export interface ConnectSessionDoc {
  /** SHA-256 of the token: the token itself is shown once and never stored. */
  _id: string;
  environment: string;
  allowed_integrations: string[] | null;
  integrations_config_defaults: Record<string, IntegrationDefaults>;
  tags: Record<string, string>;
  end_user: { id: string; email?: string; display_name?: string } | null;
  /** Re-authorize this connection instead of creating a new one. */
  connection_id: string | null;
  /** Flows started with this session so far (see CONNECT_SESSION_MAX_ATTEMPTS). */
  attempts: number;
  expires_at: Date;
  created_at: Date;
}

export type NewConnectSession = Omit<ConnectSessionDoc, '_id' | 'expires_at' | 'created_at' | 'attempts'>;

export const CONNECT_SESSION_TTL_MS = 30 * 60_000;

/**
 * Flows one session may start (an OAuth redirect, an install, an API-key submission): enough
 * for a user who mistypes a key or cancels a consent page a few times, few enough that a
 * leaked link cannot be used to hammer providers or guess keys.
 */
export const CONNECT_SESSION_MAX_ATTEMPTS = 10;

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class ConnectSessionStore {
  private readonly col: Collection<ConnectSessionDoc>;
  constructor(db: Db) {
    this.col = db.collection<ConnectSessionDoc>('connect_sessions');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    // Expired sessions are useless a day later.
    return [await ensureExpiry(this.col, 'created_at', 86_400)];
  }

  async create(input: NewConnectSession, now = new Date()): Promise<{ token: string; doc: ConnectSessionDoc }> {
    const token = `weft_connect_${randomBytes(24).toString('base64url')}`;
    const doc: ConnectSessionDoc = { _id: hashSessionToken(token), ...input, attempts: 0, created_at: now, expires_at: new Date(now.getTime() + CONNECT_SESSION_TTL_MS) };
    await this.col.insertOne(doc);
    return { token, doc };
  }

  /** The session of a token, or null when unknown. Expiry is the caller's to judge (it explains it). */
  async find(token: string): Promise<ConnectSessionDoc | null> {
    return this.col.findOne({ _id: hashSessionToken(token) });
  }

  /**
   * Counts one flow start, atomically (one conditional update by `_id`): true while the
   * session has attempts left, false once `max` were used. Concurrent requests cannot
   * overshoot: each increment only matches while the count is below the cap.
   */
  async countAttempt(sessionId: string, max = CONNECT_SESSION_MAX_ATTEMPTS): Promise<boolean> {
    const res = await this.col.updateOne(
      // Sessions created before attempts were counted have no field yet.
      { _id: sessionId, $or: [{ attempts: { $lt: max } }, { attempts: { $exists: false } }] },
      { $inc: { attempts: 1 } },
    );
    return res.modifiedCount === 1;
  }

  /** @internal tests: move a session's expiry. */
  async setExpiry(token: string, expiresAt: Date): Promise<void> {
    await this.col.updateOne({ _id: hashSessionToken(token) }, { $set: { expires_at: expiresAt } });
  }
}
