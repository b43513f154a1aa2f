import { findRecentConnection } from '../../store/connection-lookup';
import { sealedAt, type CredentialCipher } from '../../auth/credential-cipher';
import { openIntegrationCredentials, type IntegrationCredentials } from '../../auth/credential-source';
import type { Credentials } from '../../auth/credentials';
import type { Stores } from '../../store/db';
import type { ConnectionDoc } from '../../store/connections';
import type { IntegrationDoc } from '../../store/integrations';

export interface ProxiedConnection {
  integration: IntegrationDoc;
  connection: ConnectionDoc;
  /** The connection's credentials, opened. */
  credentials: Credentials;
  /** The integration's own (an OAuth app's client secret, a GitHub App's key), opened; null when it has none. */
  integrationCredentials: IntegrationCredentials | null;
}

/**
 * Credentials opened from a cached document, kept as long as the document is: the read
 * cache hands out the same object for READ_CACHE_TTL_MS and a new one after a write or
 * expiry, so a changed credential is a new key here and is opened afresh. Opening (AES-GCM
 * and a JSON parse) was about a tenth of the API's CPU per proxied call, twice per call.
 * Kept in memory only, no longer than the sealed document they come from.
 */
const openedConnections = new WeakMap<ConnectionDoc, Credentials>();
const openedIntegrations = new WeakMap<IntegrationDoc, IntegrationCredentials | null>();

/**
 * The proxy's connection-lookup.ts: the same answers, but read through the stores' caches of
 * a few seconds (store/read-cache.ts), since every proxied call needs both documents. A
 * connection deleted or an integration changed by another process is proxied with its old
 * documents for at most READ_CACHE_TTL_MS; credentials refreshed elsewhere meanwhile are no
 * harm: a 401 on the old token has the session read the stored ones again (token-refresh.ts).
 */
export async function findProxiedConnection(
  stores: Pick<Stores, 'integrations' | 'connections'>,
  cipher: CredentialCipher,
  environment: string,
  providerConfigKey: string,
  connectionId: string,
): Promise<ProxiedConnection> {
  const { integration, connection } = await findRecentConnection(stores, environment, providerConfigKey, connectionId);
  let credentials = openedConnections.get(connection);
  if (credentials === undefined) {
    credentials = cipher.open<Credentials>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection));
    openedConnections.set(connection, credentials);
  }
  let integrationCredentials = openedIntegrations.get(integration);
  if (integrationCredentials === undefined) {
    integrationCredentials = openIntegrationCredentials(cipher, integration);
    openedIntegrations.set(integration, integrationCredentials);
  }
  return { integration, connection, credentials, integrationCredentials };
}
