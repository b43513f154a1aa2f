import type { Collection, Db } from 'mongodb';
import { ensureExpiry, type ExpiryRule } from './ttl';

/**
 * One authorization in flight, keyed by its OAuth `state`: what to do when the provider
 * sends the browser back. Single use: the callback takes it (findOneAndDelete), so a
 * replayed callback or a tampered state finds nothing.
 */
export interface AuthStateDoc {
  _id: string; // the state value
  kind: 'oauth' | 'app-install';
  environment: string;
  session_id: string;
  provider_config_key: string;
  /** Generated for a new connection; the session's own for a reconnect session. */
  connection_id: string;
  /** A reconnect session's flow: it may only re-authorize `connection_id`, never create it. */
  reconnect: boolean;
  /**
   * SHA-256 (hex) of the browser-binding cookie set when the flow started (RFC 9700 §4.7):
   * the callback must come from that browser.
   */
  browser_binding_hash: string;
  /** PKCE verifier, sealed (credential cipher). */
  code_verifier_sealed: string | null;
  redirect_uri: string;
  scopes: string[];
  tenant: string | null;
  connection_config: Record<string, unknown>;
  tags: Record<string, string>;
  created_at: Date;
  expires_at: Date;
}

/** Providers keep their authorization codes about 10 minutes; the state lives as long. */
export const AUTH_STATE_TTL_MS = 10 * 60_000;

export class AuthStateStore {
  private readonly col: Collection<AuthStateDoc>;
  constructor(db: Db) {
    this.col = db.collection<AuthStateDoc>('auth_states');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    return [await ensureExpiry(this.col, 'created_at', 86_400)];
  }

  async put(doc: Omit<AuthStateDoc, 'created_at' | 'expires_at'>, now = new Date()): Promise<void> {
    await this.col.insertOne({ ...doc, created_at: now, expires_at: new Date(now.getTime() + AUTH_STATE_TTL_MS) });
  }

  /** Takes the state (once). Null when unknown, already used, or expired. */
  async take(state: string, now = new Date()): Promise<AuthStateDoc | null> {
    if (!state || state.length > 200) return null;
    const doc = await this.col.findOneAndDelete({ _id: state });
    if (!doc || doc.expires_at.getTime() < now.getTime()) return null;
    return doc;
  }
}
