import { randomBytes, randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import { describeAuthorizationFailure, type AuthorizationFailure } from '../../auth/oauth/authorization-errors';
import { exchangeCode, oauthEndpoints, OAuthProviderError, startAuthorization } from '../../auth/oauth/code-flow';
import { decideScopes, grantsScope } from '../../auth/oauth/scopes';
import { obtainTeamSiteToken } from '../../auth/oauth/team-site-token';
import { openIntegrationCredentials } from '../../auth/credential-source';
import type { Credentials } from '../../auth/credentials';
import { verifyCredentials } from '../../auth/verify-credentials';
import { WeftError } from '../../common/errors';
import { openProviderSession } from '../../common/provider-session';
import { resolveProvider } from '../../runtime/http/provider-access';
import type { AuthStateDoc } from '../../store/auth-states';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';
import { resultPage } from '../pages/html';
import { oauthConnectQuery } from '../schemas/connect';
import { openConnectSession, sessionIntegration } from '../services/connect-session-access';
import { reportFailedAuthorization, storeAuthorizedConnection } from '../services/connection-authorization';
import { sessionDeps } from '../services/provider-sessions';
import { oauthCallbackUrl } from '../services/public-url';
import { parseInput } from '../validate';
import { asPage } from '../pages/as-page';

/**
 * The redirect legs of the connect flow: to the provider (`/oauth/connect/:key`) and back
 * (`/oauth/callback` for OAuth 2.0, `/app-auth/connect` for a GitHub App installation).
 * The state is random, single use and bound to the session and integration; the PKCE
 * verifier never leaves the server (sealed in the state document).
 */
export function oauthFlowRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/oauth/connect/:key', async (req, res) => {
    await asPage(res, async () => {
      const q = parseInput(oauthConnectQuery, req.query, 'invalid_query_params');
      const session = await openConnectSession(deps, q.connect_session_token);
      const integration = await sessionIntegration(deps, session, String(req.params.key));
      const provider = resolveProvider(deps.registry, integration);
      const defaults = session.integrations_config_defaults[integration.unique_key] ?? {};
      const connectionId = q.connection_id ?? session.connection_id ?? randomUUID();
      const base = { environment: session.environment, session_id: session._id, provider_config_key: integration.unique_key, connection_id: connectionId, tags: session.tags };
      const app = openIntegrationCredentials(deps.cipher, integration.credentials_encrypted);

      if (app?.type === 'APP') {
        if (app?.type !== 'APP') throw new WeftError('app_credentials_missing', `Integration "${integration.unique_key}" has no GitHub App registered.`, 400);
        const state = randomBytes(24).toString('base64url');
        await deps.stores.authStates.put({ ...base, _id: state, kind: 'app-install', code_verifier_sealed: null, redirect_uri: '', scopes: [], tenant: null, connection_config: defaults.connection_config ?? {} });
        const install = new URL(`${app.app_link.replace(/\/+$/, '')}/installations/new`);
        install.searchParams.set('state', state);
        res.redirect(302, install.href);
        return;
      }
      const oauth = provider.definition.oauth;
      if (app?.type !== 'OAUTH2' || !oauth) throw new WeftError('invalid_auth_mode', `Integration "${integration.unique_key}" is not connected through a provider's authorization page.`, 400);

      const requested = defaults.user_scopes ?? (app?.type === 'OAUTH2' && app.scopes ? app.scopes.split(/[\s,]+/) : oauth.defaultScopes);
      const { scopes, warnings } = decideScopes(requested, oauth.scopeRules);
      const tenant = typeof defaults.connection_config?.tenant === 'string' ? defaults.connection_config.tenant : undefined;
      const ep = oauthEndpoints(oauth, integration, app, tenant);
      const redirectUri = oauthCallbackUrl(deps, req);
      const start = await startAuthorization(ep, { redirectUri, scopes, extraParams: defaults.authorization_params });
      await deps.stores.authStates.put({
        ...base,
        _id: start.state,
        kind: 'oauth',
        code_verifier_sealed: start.codeVerifier ? deps.cipher.seal(start.codeVerifier) : null,
        redirect_uri: redirectUri,
        scopes,
        tenant: ep.tenant ?? null,
        connection_config: { ...(defaults.connection_config ?? {}), ...(ep.tenant ? { tenant: ep.tenant } : {}) },
      });
      for (const warning of warnings) deps.logger.info({ integration: integration.unique_key }, warning);
      res.redirect(302, start.url);
    });
  });

  router.get('/oauth/callback', async (req, res) => {
    await asPage(res, async () => {
      const q = stringParams(req);
      const state = await takeState(deps, q.state, 'oauth');
      const integration = await integrationOf(deps, state);
      if (q.error) {
        const failure = describeAuthorizationFailure({ error: q.error, description: q.error_description });
        await fail(deps, state, integration, 'OAUTH2', failure);
        return void res.status(400).type('html').send(failurePage(failure));
      }
      try {
        const credentials = await redeem(deps, state, integration, q.code ?? '');
        await verifyWith(deps, state, integration, credentials);
        const { connection } = await storeAuthorizedConnection(deps, { environment: state.environment, integration, connectionId: state.connection_id, credentials, connectionConfig: state.connection_config, tags: state.tags });
        res.type('html').send(resultPage({ success: true, title: 'Connected', message: `Your ${integration.display_name} account is connected.`, connectionId: connection.connection_id }));
      } catch (err) {
        if (!(err instanceof WeftError)) throw err;
        const failure =
          err instanceof OAuthProviderError
            ? describeAuthorizationFailure({ error: err.oauthError, description: err.description, codes: err.aadsts })
            : { code: 'oauth_error' as const, title: 'The account was not connected', message: err.message, next: 'Try again from the application.' };
        await fail(deps, state, integration, 'OAUTH2', failure);
        res.status(400).type('html').send(failurePage(failure));
      }
    });
  });

  router.get('/app-auth/connect', async (req, res) => {
    await asPage(res, async () => {
      const q = stringParams(req);
      const state = await takeState(deps, q.state, 'app-install');
      const integration = await integrationOf(deps, state);
      const app = openIntegrationCredentials(deps.cipher, integration.credentials_encrypted);
      if (app?.type !== 'APP') throw new WeftError('app_credentials_missing', `Integration "${integration.unique_key}" has no GitHub App registered.`, 400);
      if (!q.installation_id || !/^\d+$/.test(q.installation_id)) {
        const failure = { code: 'access_denied' as const, title: 'The app was not installed', message: 'GitHub did not report an installation.', next: 'Install the app from the application again.' };
        await fail(deps, state, integration, 'APP', failure);
        return void res.status(400).type('html').send(failurePage(failure));
      }
      const credentials: Credentials = { type: 'APP', app_id: app.app_id, installation_id: q.installation_id };
      try {
        await verifyWith(deps, state, integration, credentials);
      } catch (err) {
        if (!(err instanceof WeftError)) throw err;
        const failure = { code: 'oauth_error' as const, title: 'The installation could not be used', message: err.message, next: 'Install the app again from the application.' };
        await fail(deps, state, integration, 'APP', failure);
        return void res.status(400).type('html').send(failurePage(failure));
      }
      const { connection } = await storeAuthorizedConnection(deps, { environment: state.environment, integration, connectionId: state.connection_id, credentials, connectionConfig: state.connection_config, tags: state.tags });
      res.type('html').send(resultPage({ success: true, title: 'Connected', message: `The ${integration.display_name} app is installed and connected.`, connectionId: connection.connection_id }));
    });
  });

  return router;
}

/** Code → tokens (with the PKCE verifier), plus the team-site token when its scope was granted. */
async function redeem(deps: ApiDeps, state: AuthStateDoc, integration: IntegrationDoc, code: string): Promise<Credentials> {
  const provider = resolveProvider(deps.registry, integration);
  const oauth = provider.definition.oauth;
  if (!oauth) throw new WeftError('invalid_auth_mode', `Integration "${integration.unique_key}" has no OAuth configuration.`, 400);
  const ep = oauthEndpoints(oauth, integration, openIntegrationCredentials(deps.cipher, integration.credentials_encrypted), state.tenant ?? undefined);
  const codeVerifier = state.code_verifier_sealed ? deps.cipher.open<string>(state.code_verifier_sealed) : undefined;
  const tokens = await exchangeCode(ep, { code, state: state._id, redirectUri: state.redirect_uri, codeVerifier });
  const granted = tokens.scopes.length ? tokens.scopes : state.scopes;
  const credentials: Extract<Credentials, { type: 'OAUTH2' }> = {
    type: 'OAUTH2',
    access_token: tokens.accessToken,
    ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
    ...(tokens.expiresAt ? { expires_at: tokens.expiresAt } : {}),
    raw: { ...tokens.raw, scope: granted.join(' ') },
  };
  // Only when it was asked for (spec rule 6): Microsoft reports every scope ever consented,
  // so an organization-wide grant would otherwise give every connection one.
  const site = oauth.teamSiteTokenScope;
  if (site && tokens.refreshToken && grantsScope(state.scopes, site) && grantsScope(granted, site)) {
    const teamSite = await obtainTeamSiteToken(ep, provider.baseUrl, tokens.accessToken, tokens.refreshToken);
    credentials.teamsite = { access_token: teamSite.token.accessToken, resource: teamSite.resource, ...(teamSite.token.expiresAt ? { expires_at: teamSite.token.expiresAt } : {}) };
    // Microsoft rotates the refresh token on every use: keep the newest.
    if (teamSite.token.refreshToken) credentials.refresh_token = teamSite.token.refreshToken;
  }
  return credentials;
}

async function verifyWith(deps: ApiDeps, state: AuthStateDoc, integration: IntegrationDoc, credentials: Credentials): Promise<void> {
  await verifyCredentials(openProviderSession(sessionDeps(deps), { environment: state.environment, integration, credentials, connectionId: state.connection_id, operation: 'auth', runId: null }));
}

/** The state of this callback, taken once; a tampered, replayed or expired one ends here. */
async function takeState(deps: ApiDeps, state: string | undefined, kind: AuthStateDoc['kind']): Promise<AuthStateDoc> {
  const doc = state ? await deps.stores.authStates.take(state) : null;
  if (!doc || doc.kind !== kind) {
    throw new WeftError('invalid_state', 'This authorization response is not one Weft is waiting for (unknown, already used or expired state). No connection was made; start again from the application.', 400);
  }
  return doc;
}

async function integrationOf(deps: ApiDeps, state: AuthStateDoc): Promise<IntegrationDoc> {
  const integration = await deps.stores.integrations.get(state.environment, state.provider_config_key);
  if (!integration) throw new WeftError('unknown_provider_config', `Integration "${state.provider_config_key}" no longer exists.`, 404);
  return integration;
}

async function fail(deps: ApiDeps, state: AuthStateDoc, integration: IntegrationDoc, authMode: 'OAUTH2' | 'APP', failure: AuthorizationFailure): Promise<void> {
  deps.logger.info({ integration: integration.unique_key, connectionId: state.connection_id, code: failure.code }, 'authorization failed');
  await reportFailedAuthorization(deps, { environment: state.environment, integration, connectionId: state.connection_id, authMode, error: { type: failure.code, description: `${failure.message} ${failure.next}` } });
}

function failurePage(failure: AuthorizationFailure): string {
  return resultPage({ success: false, title: failure.title, message: failure.message, code: failure.code, next: failure.next });
}

function stringParams(req: Request): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string') out[k] = v;
  return out;
}
