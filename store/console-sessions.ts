import { createHash, randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { ensureExpiry, type ExpiryRule } from './ttl';

/**
 * What a person signed in to the console may do: `admin` signed in with the environment's
 * secret key and may change things; `read-only` signed in with WEFT_CONSOLE_PASSWORD and may
 * only look.
 */
export type ConsoleRole = 'admin' | 'read-only';

export interface ConsoleSessionDoc {
  /** SHA-256 of the cookie's token: the token itself lives only in the browser's cookie. */
  _id: string;
  environment: string;
  role: ConsoleRole;
  /** Sent back in every form of the console; a change without it is refused. */
  csrf_token: string;
  created_at: Date;
  expires_at: Date;
}

/** How long a sign-in lasts, whatever is done with it: a short life, then sign in again. */
export const CONSOLE_SESSION_TTL_MS = 2 * 3_600_000;

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Console sign-ins (`console_sessions`), found by the hash of their cookie's token. */
export class ConsoleSessionStore {
  private readonly col: Collection<ConsoleSessionDoc>;
  constructor(db: Db) {
    this.col = db.collection<ConsoleSessionDoc>('console_sessions');
  }

  async ensureIndexes(): Promise<ExpiryRule> {
    // Expired sessions are refused by find(); the documents go a day later.
    return ensureExpiry(this.col, 'created_at', 86_400);
  }

  async create(input: { environment: string; role: ConsoleRole }, now = new Date()): Promise<{ token: string; doc: ConsoleSessionDoc }> {
    const token = randomBytes(32).toString('base64url');
    const doc: ConsoleSessionDoc = {
      _id: hashToken(token),
      ...input,
      csrf_token: randomBytes(24).toString('base64url'),
      created_at: now,
      expires_at: new Date(now.getTime() + CONSOLE_SESSION_TTL_MS),
    };
    await this.col.insertOne(doc);
    return { token, doc };
  }

  /** The live session of a cookie's token; null when unknown, signed out or expired. */
  async find(token: string, now = new Date()): Promise<ConsoleSessionDoc | null> {
    const doc = await this.col.findOne({ _id: hashToken(token) });
    return doc && doc.expires_at > now ? doc : null;
  }

  async delete(token: string): Promise<void> {
    await this.col.deleteOne({ _id: hashToken(token) });
  }
}
