import type { Credentials } from '../../auth/credentials';
import type { ConnectionDoc } from '../../store/connections';
import type { IntegrationDoc } from '../../store/integrations';
import { sendAuthWebhook } from '../../webhooks/auth-webhook';
import type { ApiDeps } from '../deps';
import { startNewConnectionSyncs } from './sync-control';

export interface AuthorizedConnection {
  environment: string;
  integration: IntegrationDoc;
  connectionId: string;
  credentials: Credentials;
  connectionConfig: Record<string, unknown>;
  tags: Record<string, string>;
}

/**
 * Stores the outcome of a successful authorization flow: a new connection (`creation`),
 * or new credentials for an existing one (`override`, a re-authorization), then starts the
 * auto-start syncs of a new connection and tells the app with the `auth` webhook.
 */
export async function storeAuthorizedConnection(deps: ApiDeps, input: AuthorizedConnection): Promise<{ connection: ConnectionDoc; operation: 'creation' | 'override' }> {
  const existing = await deps.stores.connections.find({ environment: input.environment, providerConfigKey: input.integration.unique_key, connectionId: input.connectionId });
  const sealed = deps.cipher.seal(input.credentials);
  let connection: ConnectionDoc;
  let operation: 'creation' | 'override';
  if (existing) {
    operation = 'override';
    connection = (await deps.stores.connections.reauthorize(existing._id, sealed, { ...existing.connection_config, ...input.connectionConfig })) ?? existing;
  } else {
    operation = 'creation';
    connection = await deps.stores.connections.create({
      environment: input.environment,
      provider_config_key: input.integration.unique_key,
      provider: input.integration.provider,
      connection_id: input.connectionId,
      auth_mode: input.credentials.type,
      credentials_encrypted: sealed,
      connection_config: input.connectionConfig,
      metadata: {},
      tags: input.tags,
    });
    await startNewConnectionSyncs(deps, connection);
  }
  await sendAuthWebhook(webhookDeps(deps), { environment: input.environment, connection, operation, success: true });
  return { connection, operation };
}

/** A flow that ended without a connection still tells the app (success: false). */
export async function reportFailedAuthorization(
  deps: ApiDeps,
  input: { environment: string; integration: IntegrationDoc; connectionId: string; authMode: ConnectionDoc['auth_mode']; error: { type: string; description: string } },
): Promise<void> {
  const existing = await deps.stores.connections.find({ environment: input.environment, providerConfigKey: input.integration.unique_key, connectionId: input.connectionId });
  await sendAuthWebhook(webhookDeps(deps), {
    environment: input.environment,
    connection: { connection_id: input.connectionId, provider_config_key: input.integration.unique_key, provider: input.integration.provider, auth_mode: input.authMode },
    operation: existing ? 'override' : 'creation',
    success: false,
    error: input.error,
  });
}

export function webhookDeps(deps: Pick<ApiDeps, 'stores' | 'cipher' | 'logger'>) {
  return { stores: deps.stores, cipher: deps.cipher, logger: deps.logger };
}
