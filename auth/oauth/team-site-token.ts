import { WeftError } from '../../common/errors';
import { refreshGrant, type OAuthEndpoints, type TokenResult } from './code-flow';

/**
 * The SharePoint team-site token (spec rules 5–7; providers.md §B9): SharePoint accepts
 * only tokens for its own host, and a SharePoint `.default` cannot share a token request
 * with Graph scopes, so it takes a second refresh-token grant. The tenant's host comes
 * from Graph: `GET /v1.0/sites/root` → `siteCollection.hostname` (through the endpoints' egress,
 * like the token calls).
 */
export async function obtainTeamSiteToken(ep: OAuthEndpoints, graphBaseUrl: string, accessToken: string, refreshToken: string): Promise<{ token: TokenResult; resource: string }> {
  const res = await ep.egress.request(new URL('/v1.0/sites/root', graphBaseUrl), { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } });
  if (res.status < 200 || res.status >= 300) throw new WeftError('teamsite_host_unknown', `Graph did not tell the SharePoint host (GET /v1.0/sites/root answered ${res.status}).`, 424);
  const site = parseJson(res.body.toString('utf8')) as { siteCollection?: { hostname?: string } } | null;
  const host = site?.siteCollection?.hostname;
  if (!host) throw new WeftError('teamsite_host_unknown', 'Graph answered GET /v1.0/sites/root without siteCollection.hostname.', 424);
  const resource = `https://${host}`;
  return { token: await refreshGrant(ep, refreshToken, `${resource}/.default`), resource };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
