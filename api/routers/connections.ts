import { extraTokenConfig, withoutExtraTokens, type Credentials } from '../../auth/credentials';
import { sealedAt } from '../../auth/credential-cipher';
import { freshOAuthCredentials } from '../../auth/oauth/token-refresh';
import { createConnection, deleteConnection } from '../../control';
import type { ConnectionDoc } from '../../store/connections';
import { END_USER_TAGS, endUserOf } from '../services/end-user-tags';
import { findConnection, findIntegration } from '../../store/connection-lookup';
import { tokenRefreshDeps } from '../../webhooks/auth-events';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup, type RouteContext } from '../routing/route';
import {
  connectionIdParams,
  createConnectionBody,
  listConnectionsQuery,
  metadataBody,
  patchConnectionBody,
  patchConnectionQuery,
  providerConfigKeyQuery,
} from '../schemas/connections';
import * as out from '../schemas/responses';
import { authCallRecorder } from '../services/connect-call-log';
import { webhookDeliveryStarter, webhookDeps } from '../services/connection-authorization';
import { connectionListErrors, type ConnectionListError } from '../services/integration-status';

export const connectionRoutes = routeGroup({
  mount: '/connections',
  alias: { mount: '/connection', description: 'Nango’s older singular path; the same as `/connections…`.', operationIdSuffix: 'Singular' },
  access: 'secret-key',
  tag: 'Connections',
  routes: [
    route({
      method: 'post',
      path: '/connections',
      auth: 'secret-key',
      operationId: 'createConnection',
      summary: 'Create a connection from credentials',
      request: { body: createConnectionBody },
      responses: { 201: json(out.connectionView, 'Created (credentials verified with the provider first)'), ...errorResponses([404, 409, 424]) },
      async handler({ deps, res, input }) {
        const env = environmentOf(res);
        const body = input.body();
        const integration = await findIntegration(deps.stores, env, body.provider_config_key);
        const connection = await createConnection(
          { ...deps, outbox: webhookDeps(deps) },
          {
            environment: env,
            integration,
            credentials: body.credentials,
            connectionId: body.connection_id,
            connectionConfig: body.connection_config,
            metadata: body.metadata,
            tags: body.tags,
          },
        );
        res.status(201).json(presentConnection(connection, deps));
      },
    }),

    route({
      method: 'get',
      path: '/connections',
      auth: 'secret-key',
      operationId: 'listConnections',
      summary: 'List connections',
      request: { query: listConnectionsQuery },
      responses: { 200: json(out.connectionListResponse), ...errorResponses([]) },
      async handler({ deps, res, input }) {
        const env = environmentOf(res);
        const q = input.query();
        const integrations = q.integrationId
          ?.split(',')
          .map((k) => k.trim())
          .filter(Boolean);
        // The end user and their organization are tags, as Nango keeps them (a connect session's end_user becomes them).
        const tags: Record<string, string> = { ...q.tags };
        if (q.endUserId !== undefined) tags[END_USER_TAGS.id] = q.endUserId;
        if (q.endUserOrganizationId !== undefined) tags[END_USER_TAGS.organizationId] = q.endUserOrganizationId;
        const search = q.search ? q.search.toLowerCase() : null;
        const match = (c: ConnectionDoc) =>
          (!q.connectionId || c.connection_id === q.connectionId) && (search === null || c.connection_id.toLowerCase().includes(search));
        const byCreation = (a: ConnectionDoc, b: ConnectionDoc) =>
          b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0);
        let docs: ConnectionDoc[];
        if (q.connectionId && !q.search) {
          // One connection id (what SDKs ask): by key in each integration, not a search of every connection.
          const keys = integrations ?? (await deps.stores.integrations.list(env)).map((i) => i.unique_key);
          const found = (await deps.stores.connections.findInIntegrations(env, keys, q.connectionId)).filter((c) => hasTags(c, tags));
          docs = found.sort(byCreation).slice(q.page * q.limit, (q.page + 1) * q.limit);
        } else if (Object.keys(tags).length > 0 || integrations) {
          // A tag's or an integration's connections, newest first: `_id` ranges, not a scan.
          docs = await deps.stores.connections.listInScopes(env, { tags, providerConfigKeys: integrations, match, limit: q.limit, page: q.page });
        } else {
          docs = await deps.stores.connections.list(env, { connectionId: q.connectionId, search: q.search, limit: q.limit, page: q.page });
        }
        res.json({ connections: await summarizeAll(deps, docs) });
      },
    }),

    route({
      method: 'get',
      path: '/connections/:connectionId',
      auth: 'secret-key',
      operationId: 'getConnection',
      summary: 'A connection with fresh credentials',
      request: { params: connectionIdParams, query: providerConfigKeyQuery },
      responses: { 200: json(out.connectionWithCredentialsView), ...errorResponses([404, 424]) },
      async handler({ deps, res, input }) {
        const q = input.query();
        let { connection } = await findConnection(deps.stores, environmentOf(res), q.provider_config_key, input.params().connectionId);
        if (connection.auth_mode === 'OAUTH2' && deps.registry.get(connection.provider)?.provider.oauth) {
          // Fresh credentials: refreshed first when expiring within the margin (15 min) or asked to.
          const record = authCallRecorder(deps, {
            environment: connection.environment,
            integration: connection.provider_config_key,
            connectionId: connection.connection_id,
            connection: connection._id,
          });
          await freshOAuthCredentials(
            { ...tokenRefreshDeps({ ...deps, startWebhookDelivery: webhookDeliveryStarter(deps), alertWindowMs: deps.settings.alertWindowMs }), record },
            connection._id,
            {
              force: q.force_refresh === 'true',
            },
          );
          connection = (await deps.stores.connections.getById(connection._id)) ?? connection;
        } else if (connection.auth_mode === 'APP') {
          // An installation token, minted (and stored) when there is none or its hour is nearly up.
          const integration = await findIntegration(deps.stores, connection.environment, connection.provider_config_key);
          await deps
            .openProviderSession({
              environment: connection.environment,
              integration,
              connection,
              connectionId: connection.connection_id,
              operation: 'auth',
              runId: null,
            })
            .refreshCredentials();
          connection = (await deps.stores.connections.getById(connection._id)) ?? connection;
        }
        res.json(presentConnection(connection, deps, { withCredentials: true, withRefreshToken: q.refresh_token === 'true' }));
      },
    }),

    route({
      method: 'delete',
      path: '/connections/:connectionId',
      auth: 'secret-key',
      operationId: 'deleteConnection',
      summary: 'Delete a connection, its syncs and records',
      request: { params: connectionIdParams, query: providerConfigKeyQuery },
      responses: { 200: json(out.successResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        const { connection } = await findConnection(deps.stores, environmentOf(res), input.query().provider_config_key, input.params().connectionId);
        await deleteConnection({ ...deps, publicUrl: deps.settings.publicUrl }, connection);
        res.json({ success: true });
      },
    }),

    route({
      method: 'post',
      path: '/connections/metadata',
      auth: 'secret-key',
      operationId: 'setMetadata',
      summary: 'Replace the metadata of one or more connections',
      request: { body: metadataBody },
      responses: { 200: json(out.successResponse), ...errorResponses([404]) },
      handler: (ctx) => writeMetadata(ctx, 'replace'),
    }),

    route({
      method: 'patch',
      path: '/connections/metadata',
      auth: 'secret-key',
      operationId: 'updateMetadata',
      summary: 'Merge into the metadata of one or more connections',
      request: { body: metadataBody },
      responses: { 200: json(out.successResponse), ...errorResponses([404]) },
      handler: (ctx) => writeMetadata(ctx, 'merge'),
    }),

    // After `/metadata`: that path is not a connection id.
    route({
      method: 'patch',
      path: '/connections/:connectionId',
      auth: 'secret-key',
      operationId: 'patchConnection',
      summary: 'Change a connection’s tags or webhook URL',
      request: { params: connectionIdParams, query: patchConnectionQuery, body: patchConnectionBody },
      responses: { 200: json(out.successResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        const q = input.query();
        const body = input.body();
        // Weft POSTs to the override itself: a refused address is refused now, as for the environment's URLs.
        if (body.webhook_url_override) deps.egress.webhooks.checkUrl(body.webhook_url_override, 'webhook_url_override');
        const { connection } = await findConnection(deps.stores, environmentOf(res), q.provider_config_key, input.params().connectionId);
        const patch = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
        await deps.stores.connections.updateSettings(connection._id, patch);
        res.json({ success: true });
      },
    }),
  ],
});

async function writeMetadata({ deps, res, input }: RouteContext<{ body: typeof metadataBody }>, mode: 'replace' | 'merge'): Promise<void> {
  const body = input.body();
  const ids = Array.isArray(body.connection_id) ? body.connection_id : [body.connection_id];
  const env = environmentOf(res);
  // Resolve every id first: an unknown one changes nothing at all.
  const found = await Promise.all(ids.map((id) => findConnection(deps.stores, env, body.provider_config_key, id)));
  await Promise.all(found.map(({ connection }) => deps.stores.connections.updateMetadata(connection._id, body.metadata, mode)));
  res.json({ success: true });
}

/** List items with their errors (auth, and each sync whose last run failed), as Nango lists them. */
async function summarizeAll(deps: ApiDeps, docs: ConnectionDoc[]) {
  const errors = await connectionListErrors(deps, docs);
  return docs.map((c, i) => summarize(c, errors[i]));
}

function summarize(c: ConnectionDoc, errors: ConnectionListError[]) {
  return {
    id: c._id,
    connection_id: c.connection_id,
    provider: c.provider,
    provider_config_key: c.provider_config_key,
    created: c.created_at.toISOString(),
    metadata: c.metadata,
    tags: c.tags,
    end_user: endUserOf(c.tags ?? {}),
    errors,
  };
}

/** Every tag asked for, keys without regard to case (as Nango normalizes them), values exactly. */
function hasTags(c: ConnectionDoc, wanted: Record<string, string>): boolean {
  const own = Object.entries(c.tags ?? {});
  return Object.entries(wanted).every(([key, value]) => own.some(([k, v]) => k.toLowerCase() === key.toLowerCase() && v === value));
}

function presentConnection(c: ConnectionDoc, deps: ApiDeps, opts: { withCredentials?: boolean; withRefreshToken?: boolean } = {}) {
  const base = {
    id: c._id,
    connection_id: c.connection_id,
    provider_config_key: c.provider_config_key,
    provider: c.provider,
    created_at: c.created_at.toISOString(),
    updated_at: c.updated_at.toISOString(),
    metadata: c.metadata,
    connection_config: c.connection_config,
    tags: c.tags,
    webhook_url_override: c.webhook_url_override ?? null,
    auth_status: c.auth_status,
  };
  if (!opts.withCredentials) return base;
  const opened = deps.cipher.open<Credentials>(c.credentials_encrypted, sealedAt.connectionCredentials(c));
  // Like Nango: the refresh token only when asked for (?refresh_token=true); Weft refreshes itself.
  const credentials = opts.withRefreshToken ? opened : withoutRefreshToken(opened);
  if (credentials.type === 'OAUTH2') {
    // Extra tokens are stored sealed with the credentials; apps read them in connection_config
    // (Microsoft's team-site token is `connection_config.teamsiteAccessToken`: docs/providers/onedrive.md).
    const main = withoutExtraTokens(credentials);
    const connection_config = { ...c.connection_config, ...extraTokenConfig(credentials) };
    return { ...base, connection_config, credentials: { ...main, raw: main.raw ?? {} } };
  }
  return { ...base, credentials: { ...credentials, raw: {} } };
}

function withoutRefreshToken(credentials: Credentials): Credentials {
  if (credentials.type !== 'OAUTH2') return credentials;
  const { refresh_token: _dropped, ...rest } = credentials;
  const raw = rest.raw && 'refresh_token' in rest.raw ? Object.fromEntries(Object.entries(rest.raw).filter(([k]) => k !== 'refresh_token')) : rest.raw;
  return { ...rest, ...(raw === undefined ? {} : { raw }) };
}
