import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { BadRequestError } from '../common/errors';
import { outageOf } from '../common/outage';
import type { connectionCredentialsInputSchema } from '../auth/credentials';
import { sealedAt, type CredentialCipher } from '../auth/credential-cipher';
import { openIntegrationCredentials } from '../auth/credential-source';
import { verifyCredentials } from '../auth/verify-credentials';
import type { OpenProviderSession } from '../activities/provider-session';
import { resolveProvider } from '../runtime/http/provider-access';
import { integrationAuthMode } from '../runtime/auth-modes';
import type { ConnectionDoc } from '../store/connections';
import type { IntegrationDoc } from '../store/integrations';
import { queueAuthWebhook } from '../webhooks/auth-webhook';
import type { OutboxDeps } from '../webhooks/outbox';
import type { ControlDeps } from './deps';
import { connectionSyncWorkflowId } from './workflow-ids';
import { deleteSyncSchedules, startNewConnectionSyncs } from './sync-schedules';
import { addConnectionRoutes } from './provider-deliveries';
import { endConnectionSubscriptions, startConnectionSubscriptions } from './connection-subscriptions';
import { removeConnectionSubscriptions } from '../activities/subscription-activities';
import type { Logger } from '../common/logger';

/** What creating a connection needs besides controlling its syncs. */
export interface ConnectionControlDeps extends ControlDeps {
  cipher: CredentialCipher;
  /** Proves the credentials against the provider before anything is stored. */
  openProviderSession: OpenProviderSession;
  /** Where the new connection's `auth` webhook is queued. */
  outbox: OutboxDeps;
}

export interface NewConnection {
  environment: string;
  integration: IntegrationDoc;
  credentials: z.infer<typeof connectionCredentialsInputSchema>;
  /** Absent: a random one. */
  connectionId?: string;
  connectionConfig?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  tags?: Record<string, string>;
}

/**
 * A connection made from credentials the app already holds (POST /connections): refused
 * with a stable code, before anything is stored, when they are not of the integration's
 * auth mode, name another App, or the provider refuses them. Then stored, the app told
 * (`auth` webhook, queued) and its syncs scheduled, the auto-start ones started.
 */
export async function createConnection(deps: ConnectionControlDeps, input: NewConnection): Promise<ConnectionDoc> {
  const { environment, integration, credentials } = input;
  const provider = resolveProvider(deps.registry, integration);
  const mode = integrationAuthMode(provider.definition, openIntegrationCredentials(deps.cipher, integration)?.type);
  if (mode !== credentials.type) {
    throw new BadRequestError(
      'invalid_credentials_type',
      `Integration "${integration.unique_key}" uses ${mode}; credentials of type ${credentials.type} do not apply.`,
    );
  }
  if (credentials.type === 'APP') {
    const app = openIntegrationCredentials(deps.cipher, integration);
    if (app?.type !== 'APP')
      throw new BadRequestError(
        'app_credentials_missing',
        `Integration "${integration.unique_key}" has no App credentials (app_id, app_link, private_key) to mint installation tokens with.`,
      );
    if (app.app_id !== credentials.app_id)
      throw new BadRequestError('app_id_mismatch', `app_id ${credentials.app_id} is not the App of integration "${integration.unique_key}" (${app.app_id}).`);
  }
  // Proven before stored: a refused key or unknown installation changes nothing.
  const session = deps.openProviderSession({
    environment,
    integration,
    credentials,
    connectionId: input.connectionId ?? null,
    operation: 'auth',
    runId: null,
  });
  await verifyCredentials(session);
  const _id = randomUUID();
  const connection = await deps.stores.connections.create({
    _id,
    environment,
    provider_config_key: integration.unique_key,
    provider: integration.provider,
    connection_id: input.connectionId ?? randomUUID(),
    auth_mode: credentials.type,
    credentials_encrypted: deps.cipher.seal(credentials, sealedAt.connectionCredentials({ _id, environment })),
    connection_config: input.connectionConfig ?? {},
    metadata: input.metadata ?? {},
    tags: input.tags ?? {},
  });
  // The app hears of every new connection, as from a connect flow; queued, never waited on.
  // Independent of its syncs' start (a database write beside Temporal calls): both at once.
  await Promise.all([
    queueAuthWebhook(deps.outbox, { environment, connection, operation: 'creation', success: true }),
    startNewConnectionSyncs(deps, connection),
    addConnectionRoutes(deps, connection, credentials),
    startConnectionSubscriptions(deps, connection),
  ]);
  return connection;
}

/** What deleting a connection needs besides controlling its syncs: its webhook subscriptions are deleted at the provider. */
export interface ConnectionDeletionDeps extends ControlDeps {
  cipher: CredentialCipher;
  openProviderSession: OpenProviderSession;
  logger: Logger;
  /** WEFT_PUBLIC_URL */
  publicUrl: string | undefined;
}

/**
 * Deletes a connection (DELETE /connections/:id) with everything of it: its syncs'
 * schedules first, so none starts another run; then its running syncs, so nothing writes
 * records for a connection that is gone; then its webhook subscriptions (the workflow that
 * renews them ended, then each deleted at the provider); then its records, sync states and
 * the connection. Temporal out of reach stops it (503) before anything is deleted from the store.
 */
export async function deleteConnection(deps: ConnectionDeletionDeps, connection: ConnectionDoc): Promise<void> {
  const syncs = await deps.stores.syncs.listForConnection(connection._id);
  await deleteSyncSchedules(deps, connection, syncs);
  await endConnectionSubscriptions(deps, connection);
  await Promise.all(
    syncs.map((s) =>
      deps.temporal.workflow
        .getHandle(connectionSyncWorkflowId(deps.settings.temporalIdPrefix, connection, s))
        .terminate('connection deleted')
        // Not running is fine; Temporal out of reach is not: answer 503 before deleting anything.
        .catch((err: unknown) => {
          if (outageOf(err)) throw err;
        }),
    ),
  );
  await removeConnectionSubscriptions(deps, connection);
  await deps.stores.records.deleteScope({ environment: connection.environment, connection: connection._id });
  await deps.stores.syncs.deleteForConnection(connection._id);
  await deps.stores.connections.delete(connection._id);
}
