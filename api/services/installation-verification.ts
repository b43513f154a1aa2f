import type { IntegrationCredentials } from '../../auth/credential-source';
import { exchangeCode, oauthEndpoints, OAuthProviderError } from '../../auth/oauth/code-flow';
import { WeftError } from '../../common/errors';
import { paginatePages } from '../../runtime/paginate';
import { resolveProvider } from '../../runtime/http/provider-access';
import { recordedConnectCalls } from './connect-call-log';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';

/** Pages of the user's installations read before giving up (100 each: 2,000 installations). */
const MAX_INSTALLATION_PAGES = 20;

/** The install callback could not prove the installation is the user's: nothing is stored. */
export class InstallationNotVerified extends WeftError {
  constructor(reason: string) {
    super('installation_not_verified', `The installation could not be verified: ${reason} No connection was made.`, 400);
  }
}

export interface InstallationClaim {
  environment: string;
  integration: IntegrationDoc;
  app: Extract<IntegrationCredentials, { type: 'APP' }>;
  /** What the callback says was installed (GitHub warns it can be spoofed). */
  installationId: string;
  /** The user-authorization code GitHub adds when the App requests it during installation. */
  code: string | undefined;
  state: string;
  /** The URL the browser came back to (the App's callback URL). */
  redirectUri: string;
  connectionId: string;
}

/**
 * Proves that the person who came back from the install page can reach the installation
 * named in the callback (whoever sends the callback chooses that id): the code is redeemed with the App's OAuth client
 * for a user token, and the installation must be among those `GET /user/installations` lists
 * for that user. The user token is used for this check only and never stored.
 */
export async function verifyInstallationOwner(deps: ApiDeps, claim: InstallationClaim): Promise<void> {
  const provider = resolveProvider(deps.registry, claim.integration);
  const oauth = provider.definition.oauth;
  const listing = provider.definition.app?.userInstallations;
  if (!oauth || !listing) throw new InstallationNotVerified(`${provider.definition.displayName} has no way to list a user's installations.`);
  if (!claim.app.client_id || !claim.app.client_secret) {
    throw new InstallationNotVerified(
      `the integration has no OAuth client id and secret of the ${provider.definition.displayName} App, which Weft needs to check who installed it.`,
    );
  }
  if (!claim.code) {
    throw new InstallationNotVerified(
      `${provider.definition.displayName} sent no authorization code; the App must request user authorization (OAuth) during installation.`,
    );
  }

  const ep = recordedConnectCalls(
    deps,
    oauthEndpoints(oauth, claim.integration, { type: 'OAUTH2', client_id: claim.app.client_id, client_secret: claim.app.client_secret }, deps.egress.providers),
    { environment: claim.environment, integration: claim.integration.unique_key, connectionId: claim.connectionId },
  );
  let userToken: string;
  try {
    userToken = (await exchangeCode(ep, { code: claim.code, state: claim.state, redirectUri: claim.redirectUri })).accessToken;
  } catch (err) {
    if (err instanceof OAuthProviderError)
      throw new InstallationNotVerified(`${provider.definition.displayName} refused the authorization code (${err.oauthError}).`);
    if (err instanceof WeftError) throw new InstallationNotVerified(err.message);
    throw err;
  }

  const session = deps.openProviderSession({
    environment: claim.environment,
    integration: claim.integration,
    credentials: { type: 'OAUTH2', access_token: userToken },
    connectionId: claim.connectionId,
    operation: 'auth',
    runId: null,
  });
  try {
    let pages = 0;
    const listed = paginatePages<{ id?: unknown }>(
      (c) => session.client.request(c),
      { endpoint: listing.endpoint, paginate: { responsePath: listing.responsePath } },
      provider.definition.pagination,
    );
    for await (const page of listed) {
      if (page.items.some((i) => String(i.id) === claim.installationId)) return;
      if (++pages >= MAX_INSTALLATION_PAGES) break;
    }
  } catch (err) {
    if (err instanceof WeftError)
      throw new InstallationNotVerified(`${provider.definition.displayName} did not list the user's installations (${err.message}).`);
    throw err;
  }
  throw new InstallationNotVerified(`installation ${claim.installationId} is not one the signed-in ${provider.definition.displayName} user can access.`);
}
