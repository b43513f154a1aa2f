import { createHash } from 'node:crypto';
import { WeftError } from '../common/errors';
import type { Logger } from '../common/logger';
import { ProviderAuthError, ProviderHttpError } from '../runtime/errors';
import type { AccountThrottle } from '../runtime/http/account-throttle';
import { ProviderClient, type ProviderEgress, type RequestLogEntry, type ResolvedProvider } from '../runtime/http/provider-client';
import { sealedAt, type CredentialCipher } from './credential-cipher';
import type { CredentialStore } from './credential-store';
import { expiresWithin, extraTokensOf, type Credentials } from './credentials';
import { createAppJwt, readAppPrivateKey } from './github-app';

/** What the HTTP client needs from a connection's credentials. */
export interface CredentialSource {
  /** Adds credentials to outgoing headers; returns the secret values to scrub from errors. */
  authorize(headers: Record<string, string>): Promise<string[]>;
  /** After a 401: get fresh credentials if that is possible. */
  reauthorize?(): Promise<boolean>;
}

/** Client credentials of an integration (what `POST /integrations` stores, sealed). */
export type IntegrationCredentials =
  | { type: 'OAUTH2'; client_id: string; client_secret: string; scopes?: string; tenant?: string; webhook_secret?: string }
  | {
      type: 'APP';
      app_id: string;
      app_link: string;
      private_key: string;
      /** The App's OAuth client (user authorization). */ client_id?: string;
      client_secret?: string;
      /** What the provider signs its webhook deliveries with. */
      webhook_secret?: string;
    };

export interface CredentialSourceDeps {
  provider: ResolvedProvider;
  credentials: Credentials;
  integrationCredentials: IntegrationCredentials | null;
  /**
   * OAuth connections: fresh credentials from the shared store, refreshed under the
   * connection's lease when due (auth/oauth/token-refresh.ts); absent when verifying.
   */
  refreshOAuth?(opts: { force?: boolean; staleAccessToken?: string }): Promise<Extract<Credentials, { type: 'OAUTH2' }>>;
  /** Refresh OAuth tokens this long before they expire. */
  oauthRefreshMarginMs?: number;
  /** Persists refreshed credentials (sealed) so other workers reuse them; absent when verifying. */
  persist?(credentials: Credentials): Promise<void>;
  throttle: AccountThrottle;
  /** `operation` names calls made for the credentials themselves (`auth:token`); others are the session's. */
  logRequest(entry: RequestLogEntry, operation?: string): void;
  maxInlineWaitMs: number;
  sleep(ms: number): Promise<void>;
  /** The installation-token mint goes out through it like any provider call. */
  egress: ProviderEgress;
  now?: () => number;
}

/** Picks the way credentials reach the provider from the connection's auth mode. */
export function credentialSourceFor(deps: CredentialSourceDeps): CredentialSource {
  const { credentials, provider } = deps;
  switch (credentials.type) {
    case 'API_KEY': {
      const header = provider.definition.apiKey?.header;
      return {
        async authorize(headers) {
          if (header) headers[header] = credentials.apiKey;
          else headers.authorization = `Bearer ${credentials.apiKey}`;
          return [credentials.apiKey];
        },
      };
    }
    case 'OAUTH2':
      return oauthSource(deps, credentials);
    case 'APP':
      return appInstallationSource(deps, credentials);
  }
}

/**
 * OAuth bearer tokens, refreshed before they expire (the margin) and once more when the
 * provider answers 401 anyway (revoked early, clock skew).
 */
function oauthSource(deps: CredentialSourceDeps, initial: Extract<Credentials, { type: 'OAUTH2' }>): CredentialSource {
  const now = deps.now ?? Date.now;
  const margin = deps.oauthRefreshMarginMs ?? 15 * 60_000;
  let current = initial;
  const secrets = () =>
    [current.access_token, current.refresh_token ?? '', ...Object.values(extraTokensOf(current)).map((t) => t.access_token)].filter(Boolean);
  return {
    async authorize(headers) {
      if (expiresWithin(current, margin, now()) && deps.refreshOAuth) current = await deps.refreshOAuth({});
      headers.authorization = `Bearer ${current.access_token}`;
      return secrets();
    },
    reauthorize: deps.refreshOAuth
      ? async () => {
          current = await deps.refreshOAuth!({ force: true, staleAccessToken: current.access_token });
          return true;
        }
      : undefined,
  };
}

/**
 * GitHub App installations: an installation token minted from the app JWT, kept (sealed)
 * on the connection and re-minted before its hour ends or when GitHub refuses it.
 */
function appInstallationSource(deps: CredentialSourceDeps, initial: Extract<Credentials, { type: 'APP' }>): CredentialSource {
  const now = deps.now ?? Date.now;
  let current = initial;
  const margin = deps.provider.definition.app?.refreshMarginMs ?? 5 * 60_000;
  let minting: Promise<void> | null = null;

  async function mint(): Promise<void> {
    const token = await mintInstallationToken(deps, current.installation_id);
    current = { ...current, access_token: token.token, expires_at: token.expires_at };
    await deps.persist?.(current);
  }
  const ensureMinted = (force: boolean) => {
    const fresh = current.access_token && current.expires_at && Date.parse(current.expires_at) - now() > margin;
    if (fresh && !force) return Promise.resolve();
    minting ??= mint().finally(() => (minting = null));
    return minting;
  };

  return {
    async authorize(headers) {
      await ensureMinted(false);
      headers.authorization = `Bearer ${current.access_token}`;
      return [current.access_token as string];
    },
    async reauthorize() {
      await ensureMinted(true);
      return true;
    },
  };
}

/** `POST /app/installations/{id}/access_tokens` with the app JWT → a one-hour token. */
async function mintInstallationToken(deps: CredentialSourceDeps, installationId: string): Promise<{ token: string; expires_at: string }> {
  const app = deps.integrationCredentials;
  const endpoint = deps.provider.definition.app?.accessTokenEndpoint;
  if (!endpoint || app?.type !== 'APP') {
    throw new WeftError(
      'app_credentials_missing',
      `Integration has no App credentials (app_id, app_link, private_key); installation tokens cannot be minted.`,
      400,
    );
  }
  const key = readAppPrivateKey(app.private_key);
  const client = new ProviderClient({
    provider: deps.provider,
    authorize: async (headers) => {
      const jwt = await createAppJwt(app.app_id, key);
      headers.authorization = `Bearer ${jwt}`;
      return [jwt];
    },
    budget: null,
    throttle: deps.throttle,
    logRequest: (entry) => deps.logRequest(entry, 'auth:token'),
    maxInlineWaitMs: deps.maxInlineWaitMs,
    sleep: deps.sleep,
    egress: deps.egress,
  });
  try {
    const res = await client.request<{ token?: string; expires_at?: string }>({
      method: 'POST',
      endpoint: endpoint.replace('{installation_id}', encodeURIComponent(installationId)),
      retries: 2,
    });
    if (!res.data?.token || !res.data.expires_at)
      throw new WeftError('app_token_unreadable', `${deps.provider.definition.displayName} answered the token request without a token.`, 424);
    return { token: res.data.token, expires_at: res.data.expires_at };
  } catch (err) {
    if (err instanceof ProviderAuthError) {
      throw new ProviderAuthError(401, `${deps.provider.definition.displayName} refused the App's JWT: check the App ID and private key of the integration.`);
    }
    if (err instanceof ProviderHttpError && err.providerStatus === 404) {
      throw new ProviderAuthError(404, `Installation ${installationId} of the App was not found (uninstalled?); the connection must be re-authorized.`);
    }
    throw err;
  }
}

/**
 * Who the provider counts requests against: the API key, the app installation, or (for
 * OAuth) the connection. Hashed: the key goes into in-memory maps and MongoDB documents.
 */
export function accountKeyFor(provider: ResolvedProvider, credentials: Credentials, connectionRef: string): string {
  const identity =
    credentials.type === 'API_KEY'
      ? `key:${credentials.apiKey}`
      : credentials.type === 'APP'
        ? `installation:${credentials.installation_id}`
        : `connection:${connectionRef}`;
  return `${provider.definition.name}:${createHash('sha256').update(identity).digest('hex').slice(0, 24)}`;
}

/** Opens sealed integration credentials, or null when the integration has none. */
export function openIntegrationCredentials(
  cipher: CredentialCipher,
  integration: { _id: string; environment: string; credentials_encrypted: string | null },
): IntegrationCredentials | null {
  const sealed = integration.credentials_encrypted;
  return sealed ? cipher.open<IntegrationCredentials>(sealed, sealedAt.integrationCredentials(integration)) : null;
}

/** Saves refreshed connection credentials, sealed. */
export function persistCredentials(
  connections: Pick<CredentialStore, 'updateCredentials'>,
  cipher: CredentialCipher,
  connection: { _id: string; environment: string },
  logger: Logger,
) {
  return async (credentials: Credentials) => {
    await connections
      .updateCredentials(connection._id, cipher.seal(credentials, sealedAt.connectionCredentials(connection)))
      .catch((err: unknown) => logger.warn({ err }, 'could not store refreshed credentials'));
  };
}
