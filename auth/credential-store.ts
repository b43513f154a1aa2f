import type { AuthMode } from '../runtime/types';

/**
 * What auth/ needs of stored connections and integrations. auth/ does not know the
 * database: the store's ConnectionStore and IntegrationStore satisfy these structurally,
 * and the composition root hands them in.
 */

/** A stored connection, as far as auth/ reads it. */
export interface StoredConnection {
  _id: string;
  environment: string;
  provider_config_key: string;
  provider: string;
  connection_id: string;
  auth_mode: AuthMode;
  /** The sealed credentials (auth/credential-cipher, `sealedAt.connectionCredentials`). */
  credentials_encrypted: string;
  connection_config: Record<string, unknown>;
  /** Where the connection's webhooks go instead of the environment's URLs (a refused refresh is reported there). */
  webhook_url_override?: string | null;
}

/** A stored integration, as far as auth/ reads it. */
export interface StoredIntegration {
  _id: string;
  environment: string;
  unique_key: string;
  /** The sealed client credentials (OAuth client secret, App private key), or null. */
  credentials_encrypted: string | null;
  provider_overrides?: { auth_base_url?: string } | null;
}

/** Connection credentials: read, replaced, refreshed under a lease, marked unusable. */
export interface CredentialStore {
  getById(id: string): Promise<StoredConnection | null>;
  updateCredentials(id: string, credentialsEncrypted: string): Promise<void>;
  /** True when this owner now holds the connection's refresh lease (for `ttlMs`). */
  acquireRefreshLease(id: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseRefreshLease(id: string, owner: string): Promise<void>;
  markNeedsReauthorization(id: string, reason: string): Promise<void>;
}

export interface IntegrationLookup {
  get(environment: string, uniqueKey: string): Promise<StoredIntegration | null>;
}

/**
 * Where auth/ reports what the app must hear of (a token refresh the provider refused).
 * The composition root passes one that queues the `auth` webhook (webhooks/auth-events.ts).
 */
export interface AuthEventSink {
  refreshFailed(event: { connection: StoredConnection; code: string; message: string }): Promise<void>;
}
