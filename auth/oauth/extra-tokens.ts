import { WeftError } from '../../common/errors';
import type { ExtraTokenDefinition, OAuthConfig } from '../../runtime/types';
import { extraTokensOf, type ExtraToken, type OAuth2Credentials } from '../credentials';
import { egressFor, refreshGrant, type OAuthEndpoints, type TokenResult } from './code-flow';
import { grantsScope } from './scopes';

/**
 * Tokens for other resources than the provider API's (the definition's `oauth.extraTokens`,
 * e.g. Microsoft's SharePoint team-site token): each takes a refresh-token grant of its own
 * with a scope naming its resource, whose host the provider API tells.
 */

/** The extra tokens a finished code exchange calls for: their scope was both requested and granted. */
function extraTokensDue(oauth: OAuthConfig, requested: string[], granted: string[]): ExtraTokenDefinition[] {
  return (oauth.extraTokens ?? []).filter(
    (t) => grantsScope(requested, t.whenScopeGranted, oauth.scopeRules) && grantsScope(granted, t.whenScopeGranted, oauth.scopeRules),
  );
}

/**
 * Obtains one extra token after the code exchange: looks its resource's host up at the
 * provider API (through the endpoints' egress, like the token calls), then redeems the
 * refresh token for it.
 */
async function obtainExtraToken(
  ep: OAuthEndpoints,
  apiBaseUrl: string,
  def: ExtraTokenDefinition,
  accessToken: string,
  refreshToken: string,
): Promise<{ token: TokenResult; resource: string }> {
  const lookup = new URL(def.resourceHost.endpoint, apiBaseUrl);
  // It carries the access token: the same rule as every credentialed provider call.
  ep.egress.checkCredentialTransport(lookup, 'resource lookup');
  const res = await egressFor(ep, 'auth:resource-host').request(lookup, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
  });
  const unknown = (why: string) =>
    new WeftError(
      'extra_token_resource_unknown',
      `The provider did not tell the resource of the ${def.name} token (GET ${def.resourceHost.endpoint} ${why}).`,
      424,
    );
  if (res.status < 200 || res.status >= 300) throw unknown(`answered ${res.status}`);
  const host = valueAt(parseJson(res.body.toString('utf8')), def.resourceHost.path);
  if (typeof host !== 'string' || host === '') throw unknown(`answered without ${def.resourceHost.path}`);
  const resource = `https://${host}`;
  return { token: await refreshGrant(ep, refreshToken, scopeFor(def, resource)), resource };
}

/**
 * The post-connection step of a code exchange: every extra token whose scope was both
 * requested and granted, obtained in turn (each may rotate the refresh token). Only when
 * asked for: Microsoft reports every scope ever consented, so an organization-wide grant
 * would otherwise give every connection one.
 */
export async function obtainExtraTokens(
  ep: OAuthEndpoints,
  apiBaseUrl: string,
  credentials: OAuth2Credentials,
  scopes: { requested: string[]; granted: string[] },
): Promise<OAuth2Credentials> {
  let next = credentials;
  for (const def of extraTokensDue(ep.config, scopes.requested, scopes.granted)) {
    if (!next.refresh_token) break;
    next = withExtraToken(next, def.name, await obtainExtraToken(ep, apiBaseUrl, def, next.access_token, next.refresh_token));
  }
  return next;
}

/** Stores an obtained extra token with the credentials (the refresh token may have rotated with it). */
function withExtraToken(credentials: OAuth2Credentials, name: string, obtained: { token: TokenResult; resource: string }): OAuth2Credentials {
  const { token, resource } = obtained;
  const extra: ExtraToken = { access_token: token.accessToken, resource, ...(token.expiresAt ? { expires_at: token.expiresAt } : {}) };
  return {
    ...credentials,
    ...(token.refreshToken ? { refresh_token: token.refreshToken } : {}),
    extra_tokens: { ...credentials.extra_tokens, [name]: extra },
  };
}

/** Refreshes every extra token the credentials hold, with (and after) the main one. */
export async function refreshExtraTokens(ep: OAuthEndpoints, credentials: OAuth2Credentials): Promise<OAuth2Credentials> {
  let next = credentials;
  for (const def of ep.config.extraTokens ?? []) {
    const held = extraTokensOf(next)[def.name];
    if (!held || !next.refresh_token) continue;
    const token = await refreshGrant(ep, next.refresh_token, scopeFor(def, held.resource));
    next = withExtraToken(next, def.name, { token, resource: held.resource });
  }
  return next;
}

function scopeFor(def: ExtraTokenDefinition, resource: string): string {
  return def.scope.replace('{resource}', resource);
}

function valueAt(body: unknown, path: string): unknown {
  let at = body;
  for (const key of path.split('.')) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
