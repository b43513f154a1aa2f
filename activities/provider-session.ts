import type { Credentials } from '../auth/credentials';
import type { IntegrationCredentials } from '../auth/credential-source';
import type { ProviderClient, ResolvedProvider } from '../runtime/http/provider-client';
import type { ConnectionDoc } from '../store/connections';
import type { IntegrationDoc } from '../store/integrations';

/**
 * What activities and the API need to call a connection's provider. The composition root
 * (app/provider-session.ts) implements it; activities and the API are handed an opener.
 */
export interface ProviderSessionRequest {
  environment: string;
  integration: IntegrationDoc;
  /** The stored connection; absent while verifying credentials before it exists. */
  connection?: ConnectionDoc;
  /** The connection's credentials (opened from `connection` when not given). */
  credentials?: Credentials;
  /** The integration's own credentials, null for none (opened from `integration` when not given). */
  integrationCredentials?: IntegrationCredentials | null;
  connectionId: string | null;
  /** For the request log: `sync:<name>`, `action:<name>`, `proxy`, `auth`. */
  operation: string;
  runId: string | null;
  sleep?(ms: number): Promise<void>;
  signal?: AbortSignal;
}

export interface ProviderSession {
  provider: ResolvedProvider;
  /** The auth mode of the credentials this session sends. */
  authMode: Credentials['type'];
  /** Makes the credentials current (mints or refreshes them as a request would, storing the result). */
  refreshCredentials(): Promise<void>;
  client: ProviderClient;
  accountKey: string;
}

export type OpenProviderSession = (req: ProviderSessionRequest) => ProviderSession;
