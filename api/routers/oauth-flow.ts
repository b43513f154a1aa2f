import { z } from 'zod';
import type { Request, Response } from 'express';
import { randomBytes } from 'node:crypto';
import { describeAuthorizationFailure } from '../../auth/oauth/authorization-errors';
import { exchangeCode, oauthEndpoints, OAuthProviderError, startAuthorization } from '../../auth/oauth/code-flow';
import { decideScopes } from '../../auth/oauth/scopes';
import { obtainExtraTokens } from '../../auth/oauth/extra-tokens';
import { openIntegrationCredentials } from '../../auth/credential-source';
import { sealedAt } from '../../auth/credential-cipher';
import type { Credentials } from '../../auth/credentials';
import { verifyCredentials } from '../../auth/verify-credentials';
import { BadRequestError, WeftError } from '../../common/errors';
import { resolveProvider } from '../../runtime/http/provider-access';
import type { AuthorizationErrorCodes } from '../../runtime/types';
import { AUTH_STATE_TTL_MS, type AuthStateDoc } from '../../store/auth-states';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';
import { connectedPage, resultPage } from '../pages/html';
import { html } from '../openapi/content';
import { route, routeGroup } from '../routing/route';
import { oauthConnectQuery } from '../schemas/connect';
import { integrationKeyParams } from '../schemas/integrations';
import { bindBrowser, isSameBrowser } from '../services/browser-binding';
import { countFlowAttempt, flowTarget, openConnectSession, sessionIntegration } from '../services/connect-session-access';
import { reportFailedAuthorization, storeAuthorizedConnection } from '../services/connection-authorization';
import { InstallationNotVerified, verifyInstallationOwner } from '../services/installation-verification';
import { recordedConnectCalls } from '../services/connect-call-log';
import { oauthCallbackUrl, publicBaseUrl } from '../services/public-url';
import { asPage } from '../pages/as-page';

/** What a failed flow tells the end user (the page) and the app (the `auth` webhook). */
interface FlowFailure {
  /** Stable code for pages, webhooks and logs. */
  code: string;
  title: string;
  message: string;
  next: string;
}

const refusedPages = {
  400: html('Refused'),
  default: html('A result page saying what failed: the error’s status, its code in `data-error-code`'),
};
/** The providers' redirects carry more than `state` (code, error, installation_id, setup_action ...), read as they come. */
const redirectQuery = z.looseObject({ state: z.string().optional() });

/**
 * The redirect legs of the connect flow: to the provider (`/oauth/connect/:key`) and back
 * (`/oauth/callback` for OAuth 2.0, `/app-auth/connect` for a GitHub App installation).
 * The state is random, single use and bound to the session, the integration, the connection
 * it may write to and the browser that started it (a cookie); the PKCE verifier never leaves
 * the server (sealed in the state document).
 */
export const oauthFlowRoutes = routeGroup({
  mount: '',
  access: 'public',
  tag: 'Connect',
  routes: [
    route({
      method: 'get',
      path: '/oauth/connect/:key',
      auth: 'session',
      operationId: 'startOAuthFlow',
      summary: 'Start an OAuth (or App install) flow: redirects to the provider',
      request: { params: integrationKeyParams, query: oauthConnectQuery },
      // Answered as a page, also when the query is refused; `connection_id` is refused first.
      validate: 'in-handler',
      responses: {
        302: { description: 'To the provider’s authorization page' },
        400: refusedPages[400],
        401: html('Invalid or expired session'),
        default: refusedPages.default,
      },
      async handler({ deps, req, res, input }) {
        await asPage(res, async () => {
          if (req.query.connection_id !== undefined) {
            throw new BadRequestError(
              'connection_id_not_allowed',
              'A connect link cannot choose the connection it writes to. To re-authorize an existing connection, the application creates a connect session with connection_id.',
            );
          }
          const q = input.query();
          const session = await openConnectSession(deps, q.connect_session_token);
          await countFlowAttempt(deps, session);
          const integration = await sessionIntegration(deps, session, input.params().key);
          const target = await flowTarget(deps, session, integration);
          const provider = resolveProvider(deps.registry, integration);
          const defaults = session.integrations_config_defaults[integration.unique_key] ?? {};
          const app = openIntegrationCredentials(deps.cipher, integration);
          const base = {
            environment: session.environment,
            session_id: session._id,
            provider_config_key: integration.unique_key,
            connection_id: target.connectionId,
            reconnect: target.reconnect,
            tags: session.tags,
          };

          if (app?.type === 'APP') {
            const state = randomBytes(24).toString('base64url');
            const browser_binding_hash = bindToBrowser(deps, req, res);
            await deps.stores.authStates.put({
              ...base,
              _id: state,
              kind: 'app-install',
              browser_binding_hash,
              code_verifier_sealed: null,
              redirect_uri: '',
              scopes: [],
              tenant: null,
              connection_config: defaults.connection_config ?? {},
            });
            const install = new URL(`${app.app_link.replace(/\/+$/, '')}/installations/new`);
            install.searchParams.set('state', state);
            res.redirect(302, install.href);
            return;
          }
          const oauth = provider.definition.oauth;
          if (app?.type !== 'OAUTH2' || !oauth)
            throw new WeftError('invalid_auth_mode', `Integration "${integration.unique_key}" is not connected through a provider's authorization page.`, 400);

          const requested = defaults.user_scopes ?? (app.scopes ? app.scopes.split(/[\s,]+/) : oauth.defaultScopes);
          const { scopes, warnings } = decideScopes(requested, oauth.scopeRules);
          const tenant = typeof defaults.connection_config?.tenant === 'string' ? defaults.connection_config.tenant : undefined;
          const ep = oauthEndpoints(oauth, integration, app, deps.egress.providers, tenant);
          const redirectUri = oauthCallbackUrl(deps, req);
          const start = await startAuthorization(ep, { redirectUri, scopes, extraParams: defaults.authorization_params });
          await deps.stores.authStates.put({
            ...base,
            _id: start.state,
            kind: 'oauth',
            browser_binding_hash: bindToBrowser(deps, req, res),
            code_verifier_sealed: start.codeVerifier
              ? deps.cipher.seal(start.codeVerifier, sealedAt.codeVerifier({ _id: start.state, environment: base.environment }))
              : null,
            redirect_uri: redirectUri,
            scopes,
            tenant: ep.tenant ?? null,
            connection_config: { ...(defaults.connection_config ?? {}), ...(ep.tenant ? { tenant: ep.tenant } : {}) },
          });
          for (const warning of warnings) deps.logger.info({ integration: integration.unique_key }, warning);
          res.redirect(302, start.url);
        });
      },
    }),

    route({
      method: 'get',
      path: '/oauth/callback',
      auth: 'none',
      operationId: 'oauthCallback',
      summary: 'The provider’s OAuth redirect',
      request: { query: redirectQuery },
      validate: 'in-handler',
      responses: { 200: html('The result page (closes the popup)'), ...refusedPages },
      async handler({ deps, req, res }) {
        await asPage(res, async () => {
          const q = stringParams(req);
          const state = await takeState(deps, q.state, 'oauth');
          const integration = await integrationOf(deps, state);
          await completeFlow(deps, req, res, state, integration, 'OAUTH2', async () => {
            if (q.error)
              throw new FlowFailed(describeAuthorizationFailure({ error: q.error, description: q.error_description }, errorCodesOf(deps, integration)));
            const credentials = await redeem(deps, state, integration, q.code ?? '');
            await verifyWith(deps, state, integration, credentials);
            const { connection } = await store(deps, state, integration, credentials);
            res.type('html').send(connectedPage({ integrationName: integration.display_name, connectionId: connection.connection_id }));
          });
        });
      },
    }),

    route({
      method: 'get',
      path: '/app-auth/connect',
      auth: 'none',
      operationId: 'appInstallCallback',
      summary: 'GitHub’s App installation redirect',
      request: { query: redirectQuery },
      validate: 'in-handler',
      responses: { 200: html('The result page (closes the popup)'), ...refusedPages },
      async handler({ deps, req, res }) {
        await asPage(res, async () => {
          const q = stringParams(req);
          const state = await takeState(deps, q.state, 'app-install');
          const integration = await integrationOf(deps, state);
          await completeFlow(deps, req, res, state, integration, 'APP', async () => {
            const app = openIntegrationCredentials(deps.cipher, integration);
            if (app?.type !== 'APP') throw new InstallationNotVerified(`integration "${integration.unique_key}" has no App registered.`);
            if (!q.installation_id || !/^\d{1,20}$/.test(q.installation_id)) {
              throw new InstallationNotVerified(
                `${providerName(deps, integration)} did not report an installation (an installation an organization owner still has to approve is not one yet).`,
              );
            }
            // GitHub warns that installation_id can be spoofed: the installing user must reach it.
            await verifyInstallationOwner(deps, {
              environment: state.environment,
              integration,
              app,
              installationId: q.installation_id,
              code: q.code,
              state: state._id,
              redirectUri: new URL('/app-auth/connect', publicBaseUrl(deps, req)).href,
              connectionId: state.connection_id,
            });
            const credentials: Credentials = { type: 'APP', app_id: app.app_id, installation_id: q.installation_id };
            try {
              await verifyWith(deps, state, integration, credentials);
            } catch (err) {
              if (!(err instanceof WeftError)) throw err;
              throw new FlowFailed({
                code: 'oauth_error',
                title: 'The installation could not be used',
                message: err.message,
                next: 'Install the app again from the application.',
              });
            }
            const { connection } = await store(deps, state, integration, credentials);
            res.type('html').send(connectedPage({ integrationName: integration.display_name, connectionId: connection.connection_id, appInstalled: true }));
          });
        });
      },
    }),
  ],
});

/** A flow ending without a connection, with what to show and report. */
class FlowFailed extends Error {
  constructor(readonly failure: FlowFailure) {
    super(failure.message);
  }
}

/**
 * Runs the second half of a flow whose state was just taken: first the browser check, then
 * `complete`. Whatever ends it without a connection shows a page with a stable code and tells
 * the app (`auth` webhook, success: false); the state stays consumed either way, so a
 * refused callback cannot be retried with the same state.
 */
async function completeFlow(
  deps: ApiDeps,
  req: Request,
  res: Response,
  state: AuthStateDoc,
  integration: IntegrationDoc,
  authMode: 'OAUTH2' | 'APP',
  complete: () => Promise<void>,
): Promise<void> {
  try {
    if (!isSameBrowser(req, state.browser_binding_hash, { secure: isHttps(deps, req) })) {
      throw new FlowFailed({
        code: 'browser_mismatch',
        title: 'Open this link in the browser you started from',
        message: 'This authorization was started in another browser (or its cookie is gone), so it cannot be completed here.',
        next: 'Start again from the application, in this browser.',
      });
    }
    await complete();
  } catch (err) {
    const failure = failureOf(err, errorCodesOf(deps, integration), providerName(deps, integration));
    if (!failure) throw err;
    deps.logger.info({ integration: integration.unique_key, connectionId: state.connection_id, code: failure.code }, 'authorization failed');
    await reportFailedAuthorization(deps, {
      environment: state.environment,
      integration,
      connectionId: state.connection_id,
      reconnect: state.reconnect,
      authMode,
      error: { type: failure.code, description: `${failure.message} ${failure.next}` },
    });
    res
      .status(400)
      .type('html')
      .send(resultPage({ success: false, title: failure.title, message: failure.message, code: failure.code, next: failure.next }));
  }
}

/** The provider's name for the end user (`GitHub`). */
function providerName(deps: ApiDeps, integration: IntegrationDoc): string {
  return deps.registry.get(integration.provider)?.provider.displayName ?? integration.provider;
}

/** The integration's provider's numbered authorization errors (Microsoft's AADSTS), if it has them. */
function errorCodesOf(deps: ApiDeps, integration: IntegrationDoc): AuthorizationErrorCodes | undefined {
  return deps.registry.get(integration.provider)?.provider.oauth?.errorCodes;
}

function failureOf(err: unknown, errorCodes: AuthorizationErrorCodes | undefined, provider: string): FlowFailure | null {
  if (err instanceof FlowFailed) return err.failure;
  if (err instanceof OAuthProviderError)
    return describeAuthorizationFailure({ error: err.oauthError, description: err.description, codes: err.codes }, errorCodes);
  if (err instanceof InstallationNotVerified) {
    return {
      code: err.code,
      title: 'The installation could not be verified',
      message: err.message,
      next: `Install the app again from the application, signed in to ${provider} as someone who can access the account it is installed on.`,
    };
  }
  if (err instanceof WeftError && err.code === 'reconnect_connection_not_found')
    return { code: err.code, title: 'The account was not connected', message: err.message, next: 'Ask the application for a new link.' };
  if (err instanceof WeftError)
    return { code: 'oauth_error', title: 'The account was not connected', message: err.message, next: 'Try again from the application.' };
  return null;
}

function bindToBrowser(deps: ApiDeps, req: Request, res: Response): string {
  return bindBrowser(req, res, { secure: isHttps(deps, req), maxAgeMs: AUTH_STATE_TTL_MS });
}

/** Whether browsers reach Weft over https (WEFT_PUBLIC_URL's scheme, else the request's): the flow cookie is then `__Host-` only. */
function isHttps(deps: ApiDeps, req: Request): boolean {
  return publicBaseUrl(deps, req).startsWith('https:');
}

function store(deps: ApiDeps, state: AuthStateDoc, integration: IntegrationDoc, credentials: Credentials) {
  return storeAuthorizedConnection(deps, {
    environment: state.environment,
    integration,
    connectionId: state.connection_id,
    reconnect: state.reconnect,
    credentials,
    connectionConfig: state.connection_config,
    tags: state.tags,
  });
}

/** Code → tokens (with the PKCE verifier), plus the provider's extra tokens whose scope was granted. */
async function redeem(deps: ApiDeps, state: AuthStateDoc, integration: IntegrationDoc, code: string): Promise<Credentials> {
  const provider = resolveProvider(deps.registry, integration);
  const oauth = provider.definition.oauth;
  if (!oauth) throw new WeftError('invalid_auth_mode', `Integration "${integration.unique_key}" has no OAuth configuration.`, 400);
  const ep = recordedConnectCalls(
    deps,
    oauthEndpoints(oauth, integration, openIntegrationCredentials(deps.cipher, integration), deps.egress.providers, state.tenant ?? undefined),
    { environment: state.environment, integration: integration.unique_key, connectionId: state.connection_id },
  );
  const codeVerifier = state.code_verifier_sealed ? deps.cipher.open<string>(state.code_verifier_sealed, sealedAt.codeVerifier(state)) : undefined;
  const tokens = await exchangeCode(ep, { code, state: state._id, redirectUri: state.redirect_uri, codeVerifier });
  const granted = tokens.scopes.length ? tokens.scopes : state.scopes;
  const credentials: Extract<Credentials, { type: 'OAUTH2' }> = {
    type: 'OAUTH2',
    access_token: tokens.accessToken,
    ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
    ...(tokens.expiresAt ? { expires_at: tokens.expiresAt } : {}),
    raw: { ...tokens.raw, scope: granted.join(' ') },
  };
  return obtainExtraTokens(ep, provider.baseUrl, credentials, { requested: state.scopes, granted });
}

async function verifyWith(deps: ApiDeps, state: AuthStateDoc, integration: IntegrationDoc, credentials: Credentials): Promise<void> {
  await verifyCredentials(
    deps.openProviderSession({ environment: state.environment, integration, credentials, connectionId: state.connection_id, operation: 'auth', runId: null }),
  );
}

/** The state of this callback, taken once; a tampered, replayed or expired one ends here. */
async function takeState(deps: ApiDeps, state: string | undefined, kind: AuthStateDoc['kind']): Promise<AuthStateDoc> {
  const doc = state ? await deps.stores.authStates.take(state) : null;
  if (!doc || doc.kind !== kind) {
    throw new WeftError(
      'invalid_state',
      'This authorization response is not one Weft is waiting for (unknown, already used or expired state). No connection was made; start again from the application.',
      400,
    );
  }
  return doc;
}

async function integrationOf(deps: ApiDeps, state: AuthStateDoc): Promise<IntegrationDoc> {
  const integration = await deps.stores.integrations.get(state.environment, state.provider_config_key);
  if (!integration) throw new WeftError('unknown_provider_config', `Integration "${state.provider_config_key}" no longer exists.`, 404);
  return integration;
}

function stringParams(req: Request): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.query)) if (typeof v === 'string') out[k] = v;
  return out;
}
