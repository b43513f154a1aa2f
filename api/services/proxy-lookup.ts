import { NotFoundError } from '../../common/errors';
import type { Stores } from '../../store/db';
import type { ConnectionDoc } from '../../store/connections';
import type { IntegrationDoc } from '../../store/integrations';

/**
 * The proxy's connection-lookup.ts: the same answers, but read through the stores' caches of
 * a few seconds (store/read-cache.ts), since every proxied call needs both documents. A
 * connection deleted or an integration changed by another process is proxied with its old
 * documents for at most READ_CACHE_TTL_MS; credentials refreshed elsewhere meanwhile are no
 * harm: a 401 on the old token has the session read the stored ones again (token-refresh.ts).
 */
export async function findProxiedConnection(
  stores: Pick<Stores, 'integrations' | 'connections'>,
  environment: string,
  providerConfigKey: string,
  connectionId: string,
): Promise<{ integration: IntegrationDoc; connection: ConnectionDoc }> {
  const [integration, connection] = await Promise.all([
    stores.integrations.getRecent(environment, providerConfigKey),
    stores.connections.findRecent({ environment, providerConfigKey, connectionId }),
  ]);
  if (!integration) throw new NotFoundError('unknown_provider_config', `No integration "${providerConfigKey}" in this environment.`);
  if (!connection) throw new NotFoundError('unknown_connection', `No connection "${connectionId}" for integration "${providerConfigKey}".`);
  return { integration, connection };
}
