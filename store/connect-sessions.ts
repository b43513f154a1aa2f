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
  expires_at: Date;
  created_at: Date;
}

export type NewConnectSession = Omit<ConnectSessionDoc, '_id' | 'expires_at' | 'created_at'>;

export const CONNECT_SESSION_TTL_MS = 30 * 60_000;

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
    const doc: ConnectSessionDoc = { _id: hashSessionToken(token), ...input, created_at: now, expires_at: new Date(now.getTime() + CONNECT_SESSION_TTL_MS) };
    await this.col.insertOne(doc);
    return { token, doc };
  }

  /** The session of a token, or null when unknown. Expiry is the caller's to judge (it explains it). */
  async find(token: string): Promise<ConnectSessionDoc | null> {
    return this.col.findOne({ _id: hashSessionToken(token) });
  }

  /** @internal tests: move a session's expiry. */
  async setExpiry(token: string, expiresAt: Date): Promise<void> {
    await this.col.updateOne({ _id: hashSessionToken(token) }, { $set: { expires_at: expiresAt } });
  }
}
