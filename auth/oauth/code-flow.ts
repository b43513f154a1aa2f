import * as oauth from 'oauth4webapi';
import { WeftError } from '../../common/errors';
import type { Egress } from '../../egress/egress';
import { EgressRefusedError } from '../../egress/errors';
import { recordedEgress, type EgressCall } from '../../egress/recorded-egress';
import type { OAuthConfig } from '../../runtime/types';
import type { IntegrationCredentials } from '../credential-source';
import type { StoredIntegration } from '../../common/stored-documents';

/** One provider's authorization server as an integration reaches it (tenant and origin applied). */
export interface OAuthEndpoints {
  config: OAuthConfig;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  clientAuth: oauth.ClientAuth;
  tenant: string | undefined;
  /** A plain-http token endpoint the providers' allow-list names (a sandbox simulator): oauth4webapi must be told. */
  insecure: boolean;
  /** Token endpoint calls (and the extra tokens' resource lookups) go out through it. */
  egress: Egress<'providers'>;
  /** Hears of every such call once it has ended (the request log), named by what it was for. */
  record?: (operation: OAuthCallOperation, call: EgressCall) => void;
}

/** What a call of the authorization server's side was for, as the request log names it. */
export type OAuthCallOperation = 'auth:token' | 'auth:resource-host';

/** The endpoints' egress, each call reported as `operation` when the endpoints are recorded. */
export function egressFor(ep: OAuthEndpoints, operation: OAuthCallOperation): Egress<'providers'> {
  const record = ep.record;
  return record ? recordedEgress(ep.egress, (call) => record(operation, call)) : ep.egress;
}

/** The token endpoint's answer, normalised. */
export interface TokenResult {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: string;
  scopes: string[];
  raw: Record<string, unknown>;
}

/**
 * An OAuth failure reported by the provider (`error` + `error_description`, plus numbered
 * `error_codes` where the provider sends them: Microsoft's AADSTS), so callers branch on
 * codes, never text.
 */
export class OAuthProviderError extends WeftError {
  constructor(
    readonly oauthError: string,
    readonly description: string,
    readonly codes: number[] = [],
    readonly suberror?: string,
  ) {
    super('oauth_provider_error', `${oauthError}: ${firstLine(description)}`, 424, { error: oauthError, error_codes: codes, suberror });
  }
}

export function oauthEndpoints(
  config: OAuthConfig,
  integration: Pick<StoredIntegration, 'unique_key' | 'provider_overrides'>,
  app: IntegrationCredentials | null,
  egress: Egress<'providers'>,
  tenantOverride?: string,
): OAuthEndpoints {
  if (app?.type !== 'OAUTH2') {
    throw new WeftError('oauth_client_missing', `Integration "${integration.unique_key}" has no OAuth client credentials (client_id, client_secret).`, 400);
  }
  const tenant = tenantOverride ?? app.tenant ?? config.defaultTenant;
  const at = (template: string) => {
    const url = new URL(template.replace('{tenant}', encodeURIComponent(tenant ?? '')));
    const origin = integration.provider_overrides?.auth_base_url;
    return origin ? new URL(url.pathname + url.search, origin) : url;
  };
  const authorization = at(config.authorizationUrl);
  const token = at(config.tokenUrl);
  // The token endpoint receives the client secret: over https, or plain http only to a
  // host:port WEFT_EGRESS_ALLOW_PROVIDERS names (the same rule as every credentialed call).
  egress.checkCredentialTransport(token, 'token endpoint');
  return {
    config,
    as: { issuer: authorization.origin, authorization_endpoint: authorization.href, token_endpoint: token.href },
    client: { client_id: app.client_id },
    clientAuth: oauth.ClientSecretPost(app.client_secret),
    tenant,
    insecure: token.protocol === 'http:',
    egress,
  };
}

export interface AuthorizationStart {
  url: string;
  state: string;
  codeVerifier?: string;
}

/** The authorize URL with state and (when the provider takes it) a PKCE S256 challenge. */
export async function startAuthorization(
  ep: OAuthEndpoints,
  opts: { redirectUri: string; scopes: string[]; extraParams?: Record<string, string> },
): Promise<AuthorizationStart> {
  const state = oauth.generateRandomState();
  const url = new URL(ep.as.authorization_endpoint as string);
  // Provider-specific extras (prompt=login, login_hint...) first: the protocol fields below win.
  for (const [k, v] of Object.entries(opts.extraParams ?? {})) url.searchParams.set(k, v);
  url.searchParams.set('client_id', ep.client.client_id);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('redirect_uri', opts.redirectUri);
  url.searchParams.set('scope', opts.scopes.join(' '));
  url.searchParams.set('state', state);
  let codeVerifier: string | undefined;
  if (ep.config.pkce) {
    codeVerifier = oauth.generateRandomCodeVerifier();
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return { url: url.href, state, codeVerifier };
}

/** Redeems an authorization code (with its PKCE verifier) at the token endpoint. */
export async function exchangeCode(
  ep: OAuthEndpoints,
  opts: { code: string; state: string; redirectUri: string; codeVerifier?: string },
): Promise<TokenResult> {
  const params = new URLSearchParams({ code: opts.code, state: opts.state });
  const validated = oauth.validateAuthResponse(ep.as, ep.client, params, opts.state);
  return tokenCall(ep, () =>
    oauth.authorizationCodeGrantRequest(ep.as, ep.client, ep.clientAuth, validated, opts.redirectUri, opts.codeVerifier ?? oauth.nopkce, requestOptions(ep)),
  );
}

/** A refresh-token grant; `scope` asks for a token of another resource (an extra token). */
export async function refreshGrant(ep: OAuthEndpoints, refreshToken: string, scope?: string): Promise<TokenResult> {
  const options = { ...requestOptions(ep), ...(scope ? { additionalParameters: { scope } } : {}) };
  return tokenCall(ep, () => oauth.refreshTokenGrantRequest(ep.as, ep.client, ep.clientAuth, refreshToken, options));
}

async function tokenCall(ep: OAuthEndpoints, send: () => Promise<Response>): Promise<TokenResult> {
  let response: Response;
  try {
    response = await send();
  } catch (err) {
    if (err instanceof EgressRefusedError) throw err;
    throw new WeftError('oauth_token_endpoint_unreachable', `The token endpoint could not be reached: ${(err as Error).message}`, 424);
  }
  // Read the body once ourselves: providers put the OAuth error in it (GitHub even with 200).
  const body = (await response
    .clone()
    .json()
    .catch(() => null)) as Record<string, unknown> | null;
  if (body && typeof body.error === 'string') {
    throw new OAuthProviderError(
      body.error,
      String(body.error_description ?? ''),
      Array.isArray(body.error_codes) ? (body.error_codes as number[]) : [],
      body.suberror as string | undefined,
    );
  }
  try {
    const result = await oauth.processGenericTokenEndpointResponse(ep.as, ep.client, response);
    return toTokenResult(result);
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError) throw new OAuthProviderError(err.error, err.error_description ?? '');
    throw new WeftError('oauth_token_response_invalid', `The token endpoint answered with something that is not a token: ${(err as Error).message}`, 424);
  }
}

function toTokenResult(r: oauth.TokenEndpointResponse): TokenResult {
  const raw: Record<string, unknown> = { ...r };
  // Tokens are kept in their own fields, never twice.
  delete raw.access_token;
  delete raw.refresh_token;
  delete raw.id_token;
  return {
    accessToken: r.access_token,
    refreshToken: r.refresh_token,
    expiresAt: typeof r.expires_in === 'number' ? new Date(Date.now() + r.expires_in * 1000).toISOString() : undefined,
    scopes: typeof r.scope === 'string' ? r.scope.split(/[\s,]+/).filter(Boolean) : [],
    raw,
  };
}

function requestOptions(ep: OAuthEndpoints) {
  return { [oauth.customFetch]: egressFor(ep, 'auth:token').fetch, ...(ep.insecure ? { [oauth.allowInsecureRequests]: true } : {}) };
}

function firstLine(text: string): string {
  return text.split(/\r?\n/)[0] ?? '';
}
