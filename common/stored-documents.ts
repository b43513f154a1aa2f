/**
 * The stored connection and integration fields that layers below store/ read. auth/ does not
 * know the database: store/'s ConnectionDoc and IntegrationDoc extend these, so the stores
 * satisfy what auth/ asks for, and the composition root hands them in.
 */

/** How a connection authenticates (GitHub: an App installation or a user's OAuth token). */
export type AuthMode = 'API_KEY' | 'OAUTH2' | 'APP';

/** Per-integration overrides of the provider's defaults (sandbox, self-hosted provider, tests). */
export interface ProviderOverrides {
  base_url?: string;
  /** Origin of the provider's authorization server (its login pages and token endpoint). */
  auth_base_url?: string;
  rate_limit?: { requests: number; window_ms: number; lockout_ms?: number };
}

/** A stored connection, as far as auth/ and webhooks/ read it. */
export interface StoredConnection {
  _id: string;
  environment: string;
  provider_config_key: string;
  provider: string;
  connection_id: string;
  auth_mode: AuthMode;
  /** The credentials object, JSON-encoded then AES-256-GCM encrypted (auth/credential-cipher, `sealedAt.connectionCredentials`). */
  credentials_encrypted: string;
  connection_config: Record<string, unknown>;
  /** Where this connection's webhooks go instead of the environment's URLs; absent or null: the environment's. */
  webhook_url_override?: string | null;
}

/** A stored integration, as far as auth/ reads it. */
export interface StoredIntegration {
  _id: string;
  environment: string;
  unique_key: string;
  /** Client credentials (OAuth client secret, App private key), encrypted; null when the integration has none. */
  credentials_encrypted: string | null;
  provider_overrides?: ProviderOverrides | null;
}
