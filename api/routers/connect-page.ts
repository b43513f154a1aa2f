import type { Response } from 'express';
import { z } from 'zod';
import { openIntegrationCredentials } from '../../auth/credential-source';
import { decideScopes } from '../../auth/oauth/scopes';
import { verifyCredentials } from '../../auth/verify-credentials';
import { WeftError } from '../../common/errors';
import { resolveProvider } from '../../runtime/http/provider-access';
import type { ConnectUi, ScopeRules } from '../../runtime/types';
import type { ConnectSessionDoc } from '../../store/connect-sessions';
import { DEFAULT_BRANDING } from '../../store/environments';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';
import { connectPage, type AccessLine, type ConnectPageView } from '../pages/connect';
import { connectedPage } from '../pages/html';
import { asPage } from '../pages/as-page';
import { html, json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { apiKeyBody } from '../schemas/connect';
import { integrationKeyParams } from '../schemas/integrations';
import * as out from '../schemas/responses';
import { logoPath, parseLogoFile, themeStylesheet, themeStylesheetPath } from '../services/connect-branding';
import { countFlowAttempt, flowTarget, openConnectSession, sessionIntegration, sessionIntegrations } from '../services/connect-session-access';
import { reportFailedAuthorization, storeAuthorizedConnection } from '../services/connection-authorization';

/** What a browser route answers when it refuses, as a page. */
const refusedPages = {
  400: html('Refused'),
  401: html('Invalid or expired session'),
  default: html('A result page saying what failed: the error’s status, its code in `data-error-code`'),
};

/**
 * The Connect page at a session's `connect_link`, and the API-key connection it offers
 * (as a plain form here, and as JSON at `POST /api-auth/api-key/:key`). No secret key:
 * the connect session token is the credential, valid 30 minutes. The session is checked
 * before the input, and the page routes answer every refusal as a page.
 */
export const connectPageRoutes = routeGroup({
  mount: '',
  access: 'public',
  tag: 'Connect',
  routes: [
    route({
      method: 'get',
      path: '/connect',
      auth: 'session',
      operationId: 'connectPage',
      summary: 'The Connect page (the session token is the credential)',
      request: { query: z.object({ session_token: z.string() }) },
      validate: 'in-handler',
      responses: { 200: html('The Connect page'), ...refusedPages },
      async handler({ deps, req, res }) {
        await asPage(res, async () => {
          const token = typeof req.query.session_token === 'string' ? req.query.session_token : undefined;
          const session = await openConnectSession(deps, token);
          const integrations = await sessionIntegrations(deps, session);
          res.type('html').send(connectPage(await connectPageView(deps, session, token as string, integrations)));
        });
      },
    }),

    route({
      method: 'post',
      path: '/connect/api-key/:key',
      auth: 'session',
      operationId: 'connectPageApiKey',
      summary: 'The Connect page’s API-key form',
      request: { params: integrationKeyParams, body: apiKeyBody.extend({ connect_session_token: z.string() }), bodyType: 'form' },
      validate: 'in-handler',
      responses: { 200: html('Connected'), ...refusedPages },
      async handler({ deps, req, res, input }) {
        const token: unknown = req.body?.connect_session_token;
        // A refused key can be typed again: the result page links back to the Connect page.
        const retry = typeof token === 'string' && token ? { href: `/connect?session_token=${encodeURIComponent(token)}`, label: 'Try again' } : undefined;
        await asPage(
          res,
          async () => {
            const session = await openConnectSession(deps, token);
            await countFlowAttempt(deps, session);
            const { apiKey } = input.body();
            const { connection, integration } = await connectWithApiKey(deps, session, input.params().key, apiKey);
            res.type('html').send(connectedPage({ integrationName: integration.display_name, connectionId: connection.connection_id }));
          },
          { retry },
        );
      },
    }),

    route({
      method: 'get',
      path: '/connect/assets/logos/:file',
      auth: 'none',
      undocumented: 'the Connect page’s app logo (`PATCH /environment` branding.logo_url), by the hash of its bytes',
      request: { params: z.object({ file: z.string() }) },
      async handler({ deps, res, next, input }) {
        const named = parseLogoFile(input.params().file);
        const logo = named && (await deps.stores.environments.getLogo(named.sha256));
        if (!named || !logo || logo.contentType !== named.contentType) return next();
        immutableAsset(res, logo.contentType);
        res.send(logo.bytes);
      },
    }),

    route({
      method: 'get',
      path: '/connect/assets/providers/:provider/logo.svg',
      auth: 'none',
      undocumented: 'a provider’s logo on the Connect page, from its integration folder (connect-ui.ts)',
      request: { params: z.object({ provider: z.string() }) },
      handler({ deps, res, next, input }) {
        const svg = deps.registry.get(input.params().provider)?.connectUi?.logoSvg;
        if (!svg) return next();
        // It changes with Weft's version, not its content's name: cached for an hour.
        res.setHeader('Cache-Control', 'public, max-age=3600');
        res.type('image/svg+xml').send(svg);
      },
    }),

    route({
      method: 'get',
      path: '/connect/assets/theme/:file',
      auth: 'none',
      undocumented: 'the Connect page’s stylesheet for a primary colour (`/connect/assets/theme/<rrggbb>.css`)',
      request: { params: z.object({ file: z.string() }) },
      handler({ res, next, input }) {
        const css = themeStylesheet(input.params().file);
        if (!css) return next();
        immutableAsset(res, 'text/css; charset=utf-8');
        res.send(css);
      },
    }),

    route({
      method: 'post',
      path: '/api-auth/api-key/:key',
      auth: 'session',
      operationId: 'connectWithApiKey',
      summary: 'Connect with an API key from the app’s own frontend (Nango’s frontend SDK)',
      request: {
        params: integrationKeyParams,
        query: z.object({ connect_session_token: z.string().optional().describe('Or `Authorization: Bearer <token>`.') }),
        body: apiKeyBody,
      },
      // The token is read leniently (query or header); the session is checked before the body.
      validate: 'in-handler',
      responses: {
        200: json(out.apiKeyConnectResponse, 'Re-authorized'),
        201: json(out.apiKeyConnectResponse, 'Connected'),
        ...errorResponses([401, 403, 404, 409, 424], false),
      },
      async handler({ deps, req, res, input }) {
        const token =
          typeof req.query.connect_session_token === 'string'
            ? req.query.connect_session_token
            : /^Bearer\s+(\S+)$/i.exec(req.header('authorization') ?? '')?.[1];
        const session = await openConnectSession(deps, token);
        await countFlowAttempt(deps, session);
        const { apiKey } = input.body();
        const { connection, operation } = await connectWithApiKey(deps, session, input.params().key, apiKey);
        res
          .status(operation === 'creation' ? 201 : 200)
          .json({ data: { connection_id: connection.connection_id, provider_config_key: connection.provider_config_key, provider: connection.provider } });
      },
    }),
  ],
});

/**
 * Verifies the key with the provider first (Luma: get-self): a refused key stores nothing.
 * The connection is a new one with a generated id, or the reconnect session's own; the
 * request never names it (a `connection_id` anywhere in it is ignored).
 */
async function connectWithApiKey(deps: ApiDeps, session: ConnectSessionDoc, key: string, apiKey: string) {
  const integration = await sessionIntegration(deps, session, key);
  const provider = resolveProvider(deps.registry, integration);
  if (provider.definition.authMode !== 'API_KEY') throw new WeftError('invalid_auth_mode', `Integration "${key}" is not connected with an API key.`, 400);
  const { connectionId, reconnect } = await flowTarget(deps, session, integration);
  const credentials = { type: 'API_KEY' as const, apiKey };
  try {
    await verifyCredentials(
      deps.openProviderSession({ environment: session.environment, integration, credentials, connectionId, operation: 'auth', runId: null }),
    );
  } catch (err) {
    const e = err as WeftError;
    await reportFailedAuthorization(deps, {
      environment: session.environment,
      integration,
      connectionId,
      reconnect,
      authMode: 'API_KEY',
      error: { type: e.code ?? 'invalid_credentials', description: e.message },
    });
    throw err;
  }
  const defaults = session.integrations_config_defaults[key]?.connection_config ?? {};
  const stored = await storeAuthorizedConnection(deps, {
    environment: session.environment,
    integration,
    connectionId,
    reconnect,
    credentials,
    connectionConfig: defaults,
    tags: session.tags,
  });
  return { ...stored, integration };
}

/** Named by their content (a hash, a colour): the same URL never serves anything else. */
function immutableAsset(res: Response, type: string): void {
  res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  res.type(type);
}

/** What the Connect page shows: the environment's branding, and per integration its way to connect and what it gives the app. */
async function connectPageView(deps: ApiDeps, session: ConnectSessionDoc, token: string, integrations: IntegrationDoc[]): Promise<ConnectPageView> {
  const branding = (await deps.stores.environments.get(session.environment))?.branding ?? DEFAULT_BRANDING;
  return {
    token,
    expiresAt: session.expires_at,
    now: new Date(),
    endUser: session.end_user,
    app: {
      name: branding.app_name,
      logoUrl: branding.logo ? logoPath(branding.logo) : null,
      stylesheet: branding.primary_color ? themeStylesheetPath(branding.primary_color) : null,
      theme: branding.theme,
    },
    integrations: integrations.map((integration) => {
      const definition = deps.registry.get(integration.provider);
      const provider = definition?.provider;
      const ui = definition?.connectUi;
      const apiKey = provider?.authMode === 'API_KEY';
      return {
        key: integration.unique_key,
        name: integration.display_name,
        flow: apiKey ? 'api-key' : 'redirect',
        logoUrl: ui?.logoSvg ? `/connect/assets/providers/${encodeURIComponent(integration.provider)}/logo.svg` : null,
        docsUrl: integration.docs_url ?? null,
        access: apiKey ? plain(ui?.apiKeyAccess) : redirectAccess(deps, session, integration, ui, provider?.oauth?.defaultScopes, provider?.oauth?.scopeRules),
      };
    }),
  };
}

const plain = (lines: string[] | undefined): AccessLine[] => (lines ?? []).map((text) => ({ text, known: true }));

/**
 * An App installation's lines, or the scopes the OAuth flow will ask for (the session's
 * `user_scopes`, else the integration's, else the provider's defaults, as /oauth/connect picks
 * them) in the integration's plain words; a scope it has no words for is shown as it is.
 */
function redirectAccess(
  deps: ApiDeps,
  session: ConnectSessionDoc,
  integration: IntegrationDoc,
  ui: ConnectUi | undefined,
  defaultScopes: string[] | undefined,
  rules: ScopeRules | undefined,
): AccessLine[] {
  let credentials: ReturnType<typeof openIntegrationCredentials> = null;
  try {
    credentials = openIntegrationCredentials(deps.cipher, integration);
  } catch {
    // Unreadable credentials fail the flow itself, with its own page; the list just says less.
  }
  if (credentials?.type === 'APP') return plain(ui?.appAccess);
  const configured = credentials?.type === 'OAUTH2' && credentials.scopes ? credentials.scopes.split(/[\s,]+/) : undefined;
  const requested = session.integrations_config_defaults[integration.unique_key]?.user_scopes ?? configured ?? defaultScopes ?? [];
  let scopes: string[];
  try {
    scopes = decideScopes(requested, rules).scopes;
  } catch {
    scopes = requested; // refused when the flow starts, with its reason; listed as asked here
  }
  const words = new Map(Object.entries(ui?.scopes ?? {}).map(([scope, text]) => [scope.toLowerCase(), text]));
  const prefix = rules?.implicitPrefix?.toLowerCase();
  const lines: AccessLine[] = [];
  for (const scope of scopes) {
    let name = scope.toLowerCase();
    if (prefix && name.startsWith(prefix)) name = name.slice(prefix.length);
    const text = words.get(name);
    if (text === '') continue;
    const line = text === undefined ? { text: scope, scope, known: false } : { text, scope, known: true };
    if (!lines.some((l) => l.text === line.text)) lines.push(line);
  }
  return lines;
}
