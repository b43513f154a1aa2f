import { accountKeyFor, credentialSourceFor, openIntegrationCredentials, persistCredentials } from '../auth/credential-source';
import { sealedAt, type CredentialCipher } from '../auth/credential-cipher';
import type { Credentials } from '../auth/credentials';
import { freshOAuthCredentials } from '../auth/oauth/token-refresh';
import { accountThrottle } from '../runtime/http/account-throttle';
import { ProviderClient, type RequestLogEntry } from '../runtime/http/provider-client';
import { resolveProvider, sharedBudgetFor } from '../runtime/http/provider-access';
import type { IntegrationRegistry } from '../runtime/registry';
import type { ConnectionDoc } from '../store/connections';
import type { Stores } from '../store/db';
import type { AppendFailure } from '../store/request-logs';
import type { Egresses } from '../egress/egress';
import type { EgressCall } from '../egress/recorded-egress';
import type { Logger } from '../common/logger';
import { tokenRefreshDeps } from '../webhooks/auth-events';
import type { WebhookDeliveryStarter } from '../webhooks/delivery-starter';
import type { OpenProviderSession, ProviderSession, ProviderSessionRequest } from '../activities/provider-session';

export interface ProviderSessionDeps {
  stores: Stores;
  cipher: CredentialCipher;
  registry: IntegrationRegistry;
  logger: Logger;
  maxInlineWaitMs: number;
  /** Provider API calls, token mint and refresh go out through `providers`; a refused refresh's webhook and alert through `webhooks`. */
  egress: Egresses;
  /** A refused refresh's `auth` webhook is delivered by its workflow (webhooks/delivery-starter.ts). */
  startWebhookDelivery: WebhookDeliveryStarter;
  /** WEFT_ALERT_WINDOW_MINUTES in ms: a refused refresh's chat alert counts into an open one within it. */
  alertWindowMs?: number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The opener activities and the API are handed (activities/provider-session.ts declares it),
 * bound to its process's parts and inline-wait bound.
 */
export function providerSessionOpener(deps: ProviderSessionDeps): OpenProviderSession {
  // One handler for every session: a failed batch of entries is one warning, not one per call.
  const onLogFailure: AppendFailure = (err, entries) => deps.logger.warn({ err, entries }, 'could not write request log');
  return (req) => openProviderSession(deps, req, onLogFailure);
}

/**
 * Everything a call to a connection's provider needs, wired once: the provider with the
 * integration's overrides, credentials per auth mode (minted or refreshed as needed and
 * stored back sealed), the account's throttle state and shared request budget, and a
 * request log entry per attempt. Used by sync and action activities and by the API.
 */
function openProviderSession(deps: ProviderSessionDeps, req: ProviderSessionRequest, onLogFailure: AppendFailure): ProviderSession {
  const provider = resolveProvider(deps.registry, req.integration);
  const connection = req.connection as ConnectionDoc;
  const credentials = req.credentials ?? deps.cipher.open<Credentials>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection));
  const accountKey = accountKeyFor(provider, credentials, req.connection?._id ?? req.connectionId ?? 'unsaved');
  const sleep = req.sleep ?? defaultSleep;
  const throttle = accountThrottle(accountKey);
  const logRequest = (entry: RequestLogEntry, operation = req.operation) => {
    // Batched with other entries (store/request-logs.ts): the call does not wait for its log line.
    deps.stores.requestLogs.append(
      {
        at: new Date(),
        environment: req.environment,
        connection: req.connection?._id ?? null,
        connection_id: req.connectionId,
        integration: req.integration.unique_key,
        operation,
        run_id: req.runId,
        method: entry.method,
        url: entry.url,
        status: entry.status,
        duration_ms: entry.durationMs,
        attempt: entry.attempt,
        rate_limit_wait_ms: entry.rateLimitWaitMs,
        error: entry.error,
        provider_request_id: entry.providerRequestId,
      },
      onLogFailure,
    );
  };
  // A refresh the session needed is an entry of its run, named for the token endpoint.
  const logTokenCall = (operation: string, call: EgressCall) => logRequest({ ...call, attempt: 1, rateLimitWaitMs: 0, providerRequestId: null }, operation);
  const source = credentialSourceFor({
    provider,
    credentials,
    integrationCredentials: req.integrationCredentials !== undefined ? req.integrationCredentials : openIntegrationCredentials(deps.cipher, req.integration),
    persist: req.connection ? persistCredentials(deps.stores.connections, deps.cipher, req.connection, deps.logger) : undefined,
    refreshOAuth:
      req.connection && provider.definition.oauth
        ? (opts) => freshOAuthCredentials({ ...tokenRefreshDeps(deps), record: logTokenCall }, (req.connection as ConnectionDoc)._id, opts)
        : undefined,
    oauthRefreshMarginMs: provider.definition.oauth?.refreshMarginMs,
    throttle,
    logRequest,
    maxInlineWaitMs: deps.maxInlineWaitMs,
    sleep,
    egress: deps.egress.providers,
  });
  const client = new ProviderClient({
    provider,
    authorize: (headers) => source.authorize(headers),
    reauthorize: source.reauthorize ? () => source.reauthorize!() : undefined,
    budget: sharedBudgetFor(provider, accountKey, { store: deps.stores.rateBudgets, maxInlineWaitMs: deps.maxInlineWaitMs, sleep }),
    throttle,
    logRequest,
    maxInlineWaitMs: deps.maxInlineWaitMs,
    sleep,
    egress: deps.egress.providers,
    signal: req.signal,
  });
  return { provider, client, accountKey, authMode: credentials.type, refreshCredentials: async () => void (await source.authorize({})) };
}
