import { randomUUID } from 'node:crypto';
import type { Credentials } from '../../auth/credentials';
import { sealedAt } from '../../auth/credential-cipher';
import { ConflictError } from '../../common/errors';
import type { ConnectionDoc } from '../../store/connections';
import type { IntegrationDoc } from '../../store/integrations';
import { queueAuthWebhook } from '../../webhooks/auth-webhook';
import { temporalWebhookDelivery, type WebhookDeliveryStarter } from '../../webhooks/delivery-starter';
import type { OutboxDeps } from '../../webhooks/outbox';
import type { ApiDeps } from '../deps';
import { reconnectTargetMissing } from './connect-session-access';
import { addConnectionRoutes, startConnectionSubscriptions, startNewConnectionSyncs } from '../../control';

export interface AuthorizedConnection {
  environment: string;
  integration: IntegrationDoc;
  connectionId: string;
  /** A reconnect session's flow: re-authorize this existing connection, never create it. */
  reconnect: boolean;
  credentials: Credentials;
  connectionConfig: Record<string, unknown>;
  tags: Record<string, string>;
}

/**
 * Stores the outcome of a successful authorization flow: a new connection (`creation`),
 * or new credentials for the reconnect session's connection (`override`), then starts the
 * auto-start syncs of a new connection and tells the app with the `auth` webhook. A new
 * connection never overwrites one that exists, and a reconnect never creates one.
 */
export async function storeAuthorizedConnection(
  deps: ApiDeps,
  input: AuthorizedConnection,
): Promise<{ connection: ConnectionDoc; operation: 'creation' | 'override' }> {
  const existing = await deps.stores.connections.find({
    environment: input.environment,
    providerConfigKey: input.integration.unique_key,
    connectionId: input.connectionId,
  });
  // Deleted while the user was at the provider: a reconnect link never creates it again.
  if (!existing && input.reconnect) throw reconnectTargetMissing(input.integration, input.connectionId);
  if (existing && !input.reconnect) {
    throw new ConflictError(
      'duplicate_connection',
      `Connection "${input.connectionId}" already exists for integration "${input.integration.unique_key}"; only a reconnect session re-authorizes it.`,
    );
  }
  // Sealed for the document it goes into: the existing connection's, or the new one's.
  const _id = existing?._id ?? randomUUID();
  const sealed = deps.cipher.seal(input.credentials, sealedAt.connectionCredentials({ _id, environment: input.environment }));
  let connection: ConnectionDoc;
  let operation: 'creation' | 'override';
  if (existing) {
    operation = 'override';
    connection = (await deps.stores.connections.reauthorize(existing._id, sealed, { ...existing.connection_config, ...input.connectionConfig })) ?? existing;
  } else {
    operation = 'creation';
    connection = await deps.stores.connections.create({
      _id,
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
  }
  // Queued before the first sync starts: should Temporal be unreachable (503), the app still
  // hears of the connection that was stored.
  await queueAuthWebhook(webhookDeps(deps), { environment: input.environment, connection, operation, success: true });
  // Provider webhooks naming its credentials (a GitHub App installation) now reach it.
  await addConnectionRoutes(deps, connection, input.credentials);
  if (operation === 'creation') await Promise.all([startNewConnectionSyncs(deps, connection), startConnectionSubscriptions(deps, connection)]);
  return { connection, operation };
}

/** A flow that ended without a connection still tells the app (success: false). */
export async function reportFailedAuthorization(
  deps: ApiDeps,
  input: {
    environment: string;
    integration: IntegrationDoc;
    connectionId: string;
    reconnect: boolean;
    authMode: ConnectionDoc['auth_mode'];
    error: { type: string; description: string };
  },
): Promise<void> {
  await queueAuthWebhook(webhookDeps(deps), {
    environment: input.environment,
    connection: {
      connection_id: input.connectionId,
      provider_config_key: input.integration.unique_key,
      provider: input.integration.provider,
      auth_mode: input.authMode,
    },
    operation: input.reconnect ? 'override' : 'creation',
    success: false,
    error: input.error,
  });
}

/** Each event is delivered by its own workflow, run by the workers with the syncs' workflows. */
export function webhookDeliveryStarter(deps: Pick<ApiDeps, 'temporal' | 'settings'>): WebhookDeliveryStarter {
  return temporalWebhookDelivery(deps.temporal, { temporalIdPrefix: deps.settings.temporalIdPrefix, taskQueue: deps.settings.syncTaskQueue });
}

export function webhookDeps(deps: Pick<ApiDeps, 'stores' | 'cipher' | 'logger' | 'egress' | 'temporal' | 'settings'>): OutboxDeps {
  return {
    stores: deps.stores,
    cipher: deps.cipher,
    logger: deps.logger,
    egress: deps.egress.webhooks,
    startDelivery: webhookDeliveryStarter(deps),
  };
}
