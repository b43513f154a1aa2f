import type { StoredConnection, StoredIntegration } from '../common/stored-documents';

/**
 * What auth/ needs of stored connections and integrations. auth/ does not know the
 * database: the store's ConnectionStore and IntegrationStore satisfy these (their documents
 * extend common/'s StoredConnection and StoredIntegration), and the composition root hands
 * them in.
 */

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
