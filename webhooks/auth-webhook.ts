import type { AuthMode } from '../common/stored-documents';
import type { ConnectionDoc } from '../store/connections';
import { queueWebhook, type OutboxDeps, type QueueResult } from './outbox';

export type AuthOperation = 'creation' | 'override' | 'refresh';

/** The `auth` webhook body. */
export interface AuthWebhookPayload {
  from: 'weft';
  type: 'auth';
  connectionId: string;
  providerConfigKey: string;
  provider: string;
  authMode: AuthMode;
  environment: string;
  operation: AuthOperation;
  success: boolean;
  error?: { type: string; description: string };
}

export interface AuthWebhookInput {
  environment: string;
  connection: Pick<ConnectionDoc, 'connection_id' | 'provider_config_key' | 'provider' | 'auth_mode'> & Partial<Pick<ConnectionDoc, 'webhook_url_override'>>;
  operation: AuthOperation;
  success: boolean;
  /** Why authorization failed; the description must not contain tokens or keys. */
  error?: { type: string; description: string } | null;
}

function buildAuthWebhook(input: AuthWebhookInput): AuthWebhookPayload {
  const payload: AuthWebhookPayload = {
    from: 'weft',
    type: 'auth',
    connectionId: input.connection.connection_id,
    providerConfigKey: input.connection.provider_config_key,
    provider: input.connection.provider,
    authMode: input.connection.auth_mode,
    environment: input.environment,
    operation: input.operation,
    success: input.success,
  };
  if (input.error) payload.error = { type: input.error.type, description: input.error.description };
  return payload;
}

/**
 * Tells the app a connection was created, re-authorized or failed to refresh, without making
 * anyone wait for the app: the event is stored in the outbox and delivered in the background,
 * retried for a day if the app is down (webhooks/outbox.ts). Resolves once it is stored.
 * Skipped when the environment has no webhook URL or turned `send_auth_webhooks` off.
 */
export async function queueAuthWebhook(deps: OutboxDeps, input: AuthWebhookInput): Promise<QueueResult> {
  return queueWebhook(deps, {
    environment: input.environment,
    type: 'auth',
    payload: { ...buildAuthWebhook(input) },
    gate: 'send_auth_webhooks',
    urlOverride: input.connection.webhook_url_override,
    connection: { providerConfigKey: input.connection.provider_config_key, connectionId: input.connection.connection_id },
  });
}
