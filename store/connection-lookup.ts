import { NotFoundError } from '../common/errors';
import type { Stores } from './db';
import type { ConnectionDoc } from './connections';
import type { IntegrationDoc } from './integrations';

/** Finds a connection of this environment; another environment's is simply not found. */
export async function findConnection(
  stores: Stores,
  environment: string,
  providerConfigKey: string,
  connectionId: string,
): Promise<{ integration: IntegrationDoc; connection: ConnectionDoc }> {
  // Both by key, independent of each other: read together (an unknown integration still answers first).
  const [integration, connection] = await Promise.all([
    findIntegration(stores, environment, providerConfigKey),
    stores.connections.find({ environment, providerConfigKey, connectionId }),
  ]);
  if (!connection) throw new NotFoundError('unknown_connection', `No connection "${connectionId}" for integration "${providerConfigKey}".`);
  return { integration, connection };
}

export async function findIntegration(stores: Stores, environment: string, providerConfigKey: string): Promise<IntegrationDoc> {
  const integration = await stores.integrations.get(environment, providerConfigKey);
  if (!integration) throw new NotFoundError('unknown_provider_config', `No integration "${providerConfigKey}" in this environment.`);
  return integration;
}

/**
 * The integration and connection a request names, read through the stores' caches of a few
 * seconds (store/read-cache.ts), for the hot paths that read both on every call (the proxy,
 * record pages); the same errors as findConnection, the unknown integration first.
 */
export async function findRecentConnection(
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
