import { createHash, randomBytes } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { sealedAt, type CredentialCipher } from '../auth/credential-cipher';
import type { Credentials } from '../auth/credentials';
import { WeftError } from '../common/errors';
import type { Logger } from '../common/logger';
import type { ProviderClient } from '../runtime/http/provider-client';
import type { IntegrationRegistry } from '../runtime/registry';
import type { ProviderSubscription, SubscriptionContext, WebhookSubscriptionHooks } from '../runtime/types';
import type { ConnectionDoc } from '../store/connections';
import type { Stores } from '../store/db';
import type { ProviderSubscriptionDoc } from '../store/provider-deliveries';
import { withActivityFailures } from './failures';
import type { OpenProviderSession } from './provider-session';
import type { ConnectionSubscriptionsInput, NextRenewal, SubscriptionLifecycle } from './subscription-contracts';

export interface SubscriptionActivityDeps {
  stores: Stores;
  cipher: CredentialCipher;
  registry: IntegrationRegistry;
  logger: Logger;
  openProviderSession: OpenProviderSession;
  /** WEFT_PUBLIC_URL: where providers reach the intake. */
  publicUrl: string | undefined;
}

/** Nothing to renew: look again after this long all the same (a subscription added meanwhile, a clock change). */
const IDLE_RECHECK_MS = 24 * 60 * 60_000;

/**
 * What the connectionSubscriptions workflow does at the provider, through the integration's
 * subscription hooks (runtime/types.ts WebhookSubscriptionHooks), each with the
 * connection's provider session (credentials, request log, egress). Every one resolves with
 * when the workflow should next renew, or null once the connection is gone.
 */
export function createSubscriptionActivities(deps: SubscriptionActivityDeps) {
  const { stores } = deps;

  /** The connection, its integration's hooks, and a context for them; null when the connection is gone. */
  async function open(input: ConnectionSubscriptionsInput) {
    const connection = await stores.connections.getById(input.connection);
    const hooks = deps.registry.get(input.provider)?.subscriptions;
    if (!connection || connection.environment !== input.environment || !hooks) return null;
    const integration = await stores.integrations.get(input.environment, input.providerConfigKey);
    if (!integration) return null;
    const session = deps.openProviderSession({
      environment: input.environment,
      integration,
      connection,
      credentials: deps.cipher.open<Credentials>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection)),
      connectionId: input.connectionId,
      operation: 'subscriptions',
      runId: Context.current().info.workflowExecution?.workflowId ?? null,
      signal: Context.current().cancellationSignal,
    });
    const ctx = subscriptionContext(deps, input, session.client);
    return { connection, hooks, ctx };
  }

  async function make(opened: NonNullable<Awaited<ReturnType<typeof open>>>): Promise<void> {
    const made = await opened.hooks.onConnectionCreated(opened.ctx);
    for (const subscription of made) await save(deps, opened.connection, subscription);
    opened.ctx.log('webhook subscriptions made', { subscriptions: made.map((s) => s.id) });
  }

  async function renew(opened: NonNullable<Awaited<ReturnType<typeof open>>>, doc: ProviderSubscriptionDoc): Promise<void> {
    const renewed = await opened.hooks.renew(opened.ctx, asSubscription(doc));
    await stores.providerDeliveries.renewSubscription(doc, new Date(renewed.expiresAt));
  }

  return withActivityFailures({
    /** Makes the connection's subscriptions unless it has them. */
    async ensureSubscriptions(input: ConnectionSubscriptionsInput): Promise<NextRenewal> {
      if (!deps.publicUrl) {
        // Providers could not reach the intake: no subscriptions, and nothing for the workflow to keep.
        deps.logger.info(
          { connectionId: input.connectionId, providerConfigKey: input.providerConfigKey },
          'WEFT_PUBLIC_URL is not set on the worker: no webhook subscriptions are made',
        );
        return null;
      }
      const opened = await open(input);
      if (!opened) return null;
      if ((await stores.providerDeliveries.subscriptionsOf(input.connection)).length === 0) await make(opened);
      return nextRenewal(opened.hooks, await stores.providerDeliveries.subscriptionsOf(input.connection));
    },

    /** Renews each subscription within the hooks' margin of its expiry. */
    async renewDueSubscriptions(input: ConnectionSubscriptionsInput): Promise<NextRenewal> {
      const opened = await open(input);
      if (!opened) return null;
      const subscriptions = await stores.providerDeliveries.subscriptionsOf(input.connection);
      const dueBy = Date.now() + opened.hooks.renewBeforeMs;
      for (const doc of subscriptions) if (doc.expires_at.getTime() <= dueBy) await renew(opened, doc);
      return nextRenewal(opened.hooks, await stores.providerDeliveries.subscriptionsOf(input.connection));
    },

    /** Renews or remakes the subscriptions the provider named in lifecycle notifications. */
    async applySubscriptionLifecycle(input: ConnectionSubscriptionsInput, events: SubscriptionLifecycle[]): Promise<NextRenewal> {
      const opened = await open(input);
      if (!opened) return null;
      for (const event of events) {
        const doc = (await stores.providerDeliveries.subscriptionsOf(input.connection)).find((d) => d.subscription_id === event.subscriptionId);
        if (!doc) continue;
        if (event.action === 'renew') {
          await renew(opened, doc);
        } else {
          // The replacement first: notifications never stop reaching the connection for want of a subscription record.
          const replacement = await opened.hooks.remake(opened.ctx, asSubscription(doc));
          await save(deps, opened.connection, replacement);
          await stores.providerDeliveries.removeSubscription(doc);
          opened.ctx.log('webhook subscription removed by the provider; made again', { removed: doc.subscription_id, subscription: replacement.id });
        }
      }
      return nextRenewal(opened.hooks, await stores.providerDeliveries.subscriptionsOf(input.connection));
    },
  });
}

export type SubscriptionActivities = ReturnType<typeof createSubscriptionActivities>;

/**
 * Deletes a connection's subscriptions at the provider and forgets them (the connection is
 * being deleted; its workflow was ended first). Best effort: a provider that cannot be
 * reached keeps the subscription until it expires, and its notifications reach no
 * connection any more.
 */
export async function removeConnectionSubscriptions(
  deps: Omit<SubscriptionActivityDeps, 'logger'> & { logger: Logger },
  connection: ConnectionDoc,
): Promise<number> {
  const subscriptions = await deps.stores.providerDeliveries.subscriptionsOf(connection._id);
  if (subscriptions.length === 0) return 0;
  const hooks = deps.registry.get(connection.provider)?.subscriptions;
  const integration = await deps.stores.integrations.get(connection.environment, connection.provider_config_key);
  if (hooks && integration) {
    const input = {
      environment: connection.environment,
      connection: connection._id,
      connectionId: connection.connection_id,
      providerConfigKey: connection.provider_config_key,
      provider: connection.provider,
    };
    const session = deps.openProviderSession({
      environment: connection.environment,
      integration,
      connection,
      connectionId: connection.connection_id,
      operation: 'subscriptions',
      runId: null,
    });
    const ctx = subscriptionContext(deps, input, session.client);
    try {
      await hooks.onConnectionDeleted(ctx, subscriptions.map(asSubscription));
    } catch (err) {
      deps.logger.warn(
        { err: (err as Error)?.message, connection: connection._id },
        'could not delete the webhook subscriptions at the provider; they expire on their own',
      );
    }
  }
  for (const doc of subscriptions) await deps.stores.providerDeliveries.removeSubscription(doc);
  return subscriptions.length;
}

function subscriptionContext(
  deps: Pick<SubscriptionActivityDeps, 'publicUrl' | 'logger'>,
  input: ConnectionSubscriptionsInput,
  transport: Pick<ProviderClient, 'request'>,
): SubscriptionContext {
  const logger = deps.logger.child({ connectionId: input.connectionId, providerConfigKey: input.providerConfigKey, operation: 'subscriptions' });
  return {
    connectionId: input.connectionId,
    providerConfigKey: input.providerConfigKey,
    get: (config) => transport.request({ ...config, method: 'GET' }),
    post: (config) => transport.request({ ...config, method: 'POST' }),
    patch: (config) => transport.request({ ...config, method: 'PATCH' }),
    delete: (config) => transport.request({ ...config, method: 'DELETE' }),
    getWebhookURL() {
      if (!deps.publicUrl) {
        throw new WeftError('public_url_not_set', 'WEFT_PUBLIC_URL is not set on the worker: providers need it to reach the webhook intake.', 500);
      }
      const path = `/webhooks/providers/${encodeURIComponent(input.environment)}/${encodeURIComponent(input.providerConfigKey)}`;
      return new URL(path, deps.publicUrl).href;
    },
    newClientState: () => randomBytes(24).toString('base64url'),
    log: (message, fields) => logger.info(fields ?? {}, message),
  };
}

async function save(deps: Pick<SubscriptionActivityDeps, 'stores'>, connection: ConnectionDoc, subscription: ProviderSubscription & { clientState: string }) {
  await deps.stores.providerDeliveries.saveSubscription({
    environment: connection.environment,
    provider_config_key: connection.provider_config_key,
    connection: connection._id,
    subscription_id: subscription.id,
    resource: subscription.resource,
    client_state_sha256: createHash('sha256').update(subscription.clientState).digest('hex'),
    expires_at: new Date(subscription.expiresAt),
    created_at: new Date(),
  });
}

function asSubscription(doc: ProviderSubscriptionDoc): ProviderSubscription {
  return { id: doc.subscription_id, resource: doc.resource, expiresAt: doc.expires_at.toISOString() };
}

/** When the first subscription comes within the renewal margin of its expiry. */
function nextRenewal(hooks: WebhookSubscriptionHooks, subscriptions: ProviderSubscriptionDoc[]): number {
  if (subscriptions.length === 0) return Date.now() + IDLE_RECHECK_MS;
  return Math.min(...subscriptions.map((d) => d.expires_at.getTime() - hooks.renewBeforeMs));
}
