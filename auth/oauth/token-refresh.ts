import { randomUUID } from 'node:crypto';
import { WeftError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import type { Egress } from '../../egress/egress';
import { ProviderAuthError } from '../../runtime/errors';
import type { IntegrationRegistry } from '../../runtime/registry';
import { sealedAt, type CredentialCipher } from '../credential-cipher';
import { openIntegrationCredentials } from '../credential-source';
import type { StoredConnection } from '../../common/stored-documents';
import type { AuthEventSink, CredentialStore, IntegrationLookup } from '../credential-store';
import { expiresWithin, type Credentials, type OAuth2Credentials } from '../credentials';
import { oauthEndpoints, OAuthProviderError, refreshGrant, type OAuthEndpoints } from './code-flow';
import { refreshExtraTokens } from './extra-tokens';

export type { OAuth2Credentials };

export interface TokenRefreshDeps {
  connections: CredentialStore;
  integrations: IntegrationLookup;
  cipher: CredentialCipher;
  registry: IntegrationRegistry;
  logger: Logger;
  /** The token endpoint is called through it. */
  egress: Egress<'providers'>;
  /** Hears of refreshes the provider refused (the composition root sends the `auth` webhook). */
  events: AuthEventSink;
  /** How long a refresh may hold the lease before another process may take over. */
  leaseMs?: number;
  /** How often a process waiting for another's refresh looks again. */
  pollMs?: number;
  /** Hears of each token endpoint call (the request log of the run or call that needed the refresh). */
  record?: OAuthEndpoints['record'];
}

export interface RefreshOptions {
  /** Refresh even when the token is not near its expiry (after a 401, or `force_refresh`). */
  force?: boolean;
  /** The token the caller found wanting: once the stored one differs, someone refreshed it. */
  staleAccessToken?: string;
  /** Refresh when the token expires within this much (default: the provider's margin, 15 min). */
  marginMs?: number;
}

/** Refresh failures that only the end user can fix (as opposed to the provider being down). */
const REAUTHORIZE_ERRORS = new Set(['invalid_grant', 'interaction_required', 'consent_required', 'invalid_client', 'unauthorized_client', 'login_required']);

/**
 * Fresh OAuth credentials of a connection, refreshed at most once at a time per connection
 * across every process: a lease on the connection document decides who calls the token
 * endpoint; the others wait and read what it stored. The provider's extra tokens are
 * refreshed with the main one. A refusal by the provider marks the connection as needing
 * re-authorization and is reported to the auth-event sink (the `auth` webhook, operation
 * `refresh`, success false).
 */
export async function freshOAuthCredentials(deps: TokenRefreshDeps, connectionRef: string, opts: RefreshOptions = {}): Promise<OAuth2Credentials> {
  const leaseMs = deps.leaseMs ?? 30_000;
  const pollMs = deps.pollMs ?? 200;
  const deadline = Date.now() + 2 * leaseMs;
  for (;;) {
    const { connection, credentials } = await load(deps, connectionRef);
    const margin = opts.marginMs ?? marginOf(deps, connection);
    const replaced = opts.staleAccessToken !== undefined && credentials.access_token !== opts.staleAccessToken;
    if (replaced || (!opts.force && !expiresWithin(credentials, margin))) return credentials;

    const owner = randomUUID();
    if (!(await deps.connections.acquireRefreshLease(connection._id, owner, leaseMs))) {
      if (Date.now() > deadline) throw new WeftError('refresh_lease_timeout', 'Another process has been refreshing this connection for too long.', 503);
      await new Promise((r) => setTimeout(r, pollMs));
      continue;
    }
    try {
      // Someone may have refreshed between our read and the lease.
      const current = await load(deps, connectionRef);
      if (current.credentials.access_token !== credentials.access_token) return current.credentials;
      return await refresh(deps, current.connection, current.credentials);
    } finally {
      await deps.connections.releaseRefreshLease(connection._id, owner);
    }
  }
}

async function refresh(deps: TokenRefreshDeps, connection: StoredConnection, credentials: OAuth2Credentials): Promise<OAuth2Credentials> {
  const integration = await deps.integrations.get(connection.environment, connection.provider_config_key);
  const oauth = deps.registry.get(connection.provider)?.provider.oauth;
  if (!integration || !oauth)
    throw new WeftError(
      'oauth_not_configured',
      `Connection "${connection.connection_id}" cannot be refreshed: its integration has no OAuth configuration.`,
      424,
    );
  if (!credentials.refresh_token)
    return fail(
      deps,
      connection,
      'refresh_token_missing',
      'The connection has no refresh token (offline_access was not granted); the end user must authorize again.',
    );

  const tenant = typeof connection.connection_config.tenant === 'string' ? connection.connection_config.tenant : undefined;
  const ep = { ...oauthEndpoints(oauth, integration, openIntegrationCredentials(deps.cipher, integration), deps.egress, tenant), record: deps.record };
  try {
    const tokens = await refreshGrant(ep, credentials.refresh_token);
    const next: OAuth2Credentials = {
      ...credentials,
      access_token: tokens.accessToken,
      // Microsoft rotates refresh tokens on every use; keep the old one only if none came.
      refresh_token: tokens.refreshToken ?? credentials.refresh_token,
      ...(tokens.expiresAt ? { expires_at: tokens.expiresAt } : {}),
      raw: { ...credentials.raw, ...tokens.raw },
    };
    const withExtras = await refreshExtraTokens(ep, next);
    await deps.connections.updateCredentials(connection._id, deps.cipher.seal(withExtras, sealedAt.connectionCredentials(connection)));
    deps.logger.info(
      { connectionId: connection.connection_id, integration: connection.provider_config_key, expiresAt: withExtras.expires_at },
      'refreshed OAuth credentials',
    );
    return withExtras;
  } catch (err) {
    if (err instanceof OAuthProviderError && REAUTHORIZE_ERRORS.has(err.oauthError)) {
      return fail(
        deps,
        connection,
        'refresh_failed',
        `The provider refused to refresh the token (${err.oauthError}${err.codes.length ? `, ${err.codes.map((c) => `${oauth.errorCodes?.prefix ?? 'code '}${c}`).join('/')}` : ''}); the end user must authorize again.`,
      );
    }
    throw err;
  }
}

async function fail(deps: TokenRefreshDeps, connection: StoredConnection, code: string, message: string): Promise<never> {
  await deps.connections.markNeedsReauthorization(connection._id, message);
  await deps.events.refreshFailed({ connection, code, message });
  throw new ProviderAuthError(401, `${message} [${code}]`);
}

async function load(deps: TokenRefreshDeps, connectionRef: string): Promise<{ connection: StoredConnection; credentials: OAuth2Credentials }> {
  const connection = await deps.connections.getById(connectionRef);
  if (!connection) throw new WeftError('unknown_connection', 'The connection no longer exists.', 404);
  const credentials = deps.cipher.open<Credentials>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection));
  if (credentials.type !== 'OAUTH2') throw new WeftError('invalid_auth_mode', 'Only OAuth connections are refreshed.', 400);
  return { connection, credentials };
}

function marginOf(deps: TokenRefreshDeps, connection: StoredConnection): number {
  return deps.registry.get(connection.provider)?.provider.oauth?.refreshMarginMs ?? 15 * 60_000;
}
