import { z } from 'zod';
import { verifyCredentials } from '../../auth/verify-credentials';
import { WeftError } from '../../common/errors';
import { resolveProvider } from '../../runtime/http/provider-access';
import type { ConnectSessionDoc } from '../../store/connect-sessions';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';
import { connectedPage, escapeHtml, layout } from '../pages/html';
import { asPage } from '../pages/as-page';
import { html, json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { apiKeyBody } from '../schemas/connect';
import { integrationKeyParams } from '../schemas/integrations';
import * as out from '../schemas/responses';
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
          res.type('html').send(connectPage(deps, session, token as string, integrations));
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
        await asPage(res, async () => {
          const session = await openConnectSession(deps, req.body?.connect_session_token);
          await countFlowAttempt(deps, session);
          const { apiKey } = input.body();
          const { connection, integration } = await connectWithApiKey(deps, session, input.params().key, apiKey);
          res.type('html').send(connectedPage({ integrationName: integration.display_name, connectionId: connection.connection_id }));
        });
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

function connectPage(deps: ApiDeps, session: ConnectSessionDoc, token: string, integrations: IntegrationDoc[]): string {
  const sections = integrations.map((integration) => {
    const def = deps.registry.get(integration.provider)?.provider;
    const name = escapeHtml(integration.display_name);
    const key = encodeURIComponent(integration.unique_key);
    if (def?.authMode === 'API_KEY') {
      return `<section data-integration="${escapeHtml(integration.unique_key)}">
<h2>${name}</h2>
<form method="post" action="/connect/api-key/${key}">
<input type="hidden" name="connect_session_token" value="${escapeHtml(token)}">
<label for="api-key-${key}">API key</label>
<input id="api-key-${key}" name="apiKey" type="password" autocomplete="off" required>
<p><button type="submit">Connect ${name}</button></p>
</form>
</section>`;
    }
    const href = `/oauth/connect/${key}?connect_session_token=${encodeURIComponent(token)}`;
    return `<section data-integration="${escapeHtml(integration.unique_key)}">
<h2>${name}</h2>
<p><a class="button" href="${escapeHtml(href)}">Connect ${name}</a></p>
</section>`;
  });
  const body = `<h1>Connect an account</h1>
${endUserLine(session.end_user)}<p>Choose the service to connect. This link expires at ${escapeHtml(session.expires_at.toISOString())}.</p>
${sections.length ? sections.join('\n') : '<p role="alert">No integration is available in this session.</p>'}`;
  return layout({ title: 'Connect an account', page: 'connect', body });
}

/**
 * Whom the app made this link for, so a person handed someone else's link (or one for another
 * of their own accounts) can tell before connecting: the display name with the email, else the
 * email, else the app's id for them. The app wrote these values; they are escaped like any text.
 */
function endUserLine(endUser: ConnectSessionDoc['end_user']): string {
  if (!endUser) return '';
  const name = endUser.display_name?.trim();
  const email = endUser.email?.trim();
  const who = name ? (email ? `${name} (${email})` : name) : (email ?? endUser.id);
  return `<p data-end-user>Connecting for <strong>${escapeHtml(who)}</strong></p>\n`;
}
