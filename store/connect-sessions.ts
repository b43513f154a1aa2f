import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
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

/**
 * As stored: the per-integration defaults are a list, not an object keyed by integration.
 * Integration keys may contain "." (`my.luma`), which FerretDB refuses as a field name (and
 * MongoDB would read as a path in an update); a list keeps the keys as values.
 */
type StoredConnectSession = Omit<ConnectSessionDoc, 'integrations_config_defaults'> & {
  integrations_config_defaults: { integration: string; defaults: IntegrationDefaults }[];
};

/** One flow started with a session: `_id` is `<session _id>:<n>`, n from 1 to the cap. */
interface AttemptDoc {
  _id: string;
  created_at: Date;
}

const CONNECT_SESSION_TTL_MS = 30 * 60_000;

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
  private readonly col: Collection<StoredConnectSession>;
  private readonly attempts: Collection<AttemptDoc>;
  constructor(db: Db) {
    this.col = db.collection<StoredConnectSession>('connect_sessions');
    this.attempts = db.collection<AttemptDoc>('connect_session_attempts');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    // Expired sessions (and their attempts) are useless a day later.
    return [await ensureExpiry(this.col, 'created_at', 86_400), await ensureExpiry(this.attempts, 'created_at', 86_400)];
  }

  async create(input: NewConnectSession, now = new Date()): Promise<{ token: string; doc: ConnectSessionDoc }> {
    const token = `weft_connect_${randomBytes(24).toString('base64url')}`;
    const doc: ConnectSessionDoc = { _id: hashSessionToken(token), ...input, created_at: now, expires_at: new Date(now.getTime() + CONNECT_SESSION_TTL_MS) };
    const defaults = Object.entries(input.integrations_config_defaults).map(([integration, d]) => ({ integration, defaults: d }));
    await this.col.insertOne({ ...doc, integrations_config_defaults: defaults });
    return { token, doc };
  }

  /** The session of a token, or null when unknown. Expiry is the caller's to judge (it explains it). */
  async find(token: string): Promise<ConnectSessionDoc | null> {
    const stored = await this.col.findOne({ _id: hashSessionToken(token) });
    if (!stored) return null;
    const storedDefaults: unknown = stored.integrations_config_defaults;
    // Sessions written before the list (an object keyed by integration) read as they were.
    const defaults = Array.isArray(storedDefaults)
      ? Object.fromEntries(stored.integrations_config_defaults.map((e) => [e.integration, e.defaults]))
      : ((storedDefaults ?? {}) as Record<string, IntegrationDefaults>);
    return { ...stored, integrations_config_defaults: defaults };
  }

  /**
   * Counts one flow start: true while the session has attempts left, false once `max` were
   * used. Each attempt claims a numbered slot by inserting `<session>:<n>`; the unique `_id`
   * makes the claim atomic on both MongoDB and FerretDB, so concurrent requests can never
   * take more than `max` slots. (A conditional `$inc` is not enough there: FerretDB's SQLite
   * backend reads and writes an update in two steps, and measured 13 of 25 concurrent starts
   * getting through a cap of 10.)
   */
  async countAttempt(sessionId: string, max = CONNECT_SESSION_MAX_ATTEMPTS, now = new Date()): Promise<boolean> {
    const slots = Array.from({ length: max }, (_, i) => `${sessionId}:${i + 1}`);
    // Start at the first free slot as far as we can tell; a slot taken meanwhile moves us on.
    const taken = await this.attempts.countDocuments({ _id: { $in: slots } });
    for (let n = taken; n < max; n++) {
      try {
        await this.attempts.insertOne({ _id: slots[n], created_at: now });
        return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
    return false;
  }
}
