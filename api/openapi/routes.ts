import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { actionHeaders, triggerActionBody } from '../schemas/actions';
import { apiKeyBody, createConnectSessionBody, oauthConnectQuery } from '../schemas/connect';
import {
  createConnectionBody,
  listConnectionsQuery,
  metadataBody,
  patchConnectionBody,
  patchConnectionQuery,
  providerConfigKeyQuery,
} from '../schemas/connections';
import { integrationKeyParams } from '../schemas/integrations';
import { listLogsQuery } from '../schemas/logs';
import { proxyHeaders } from '../schemas/proxy';
import { connectionHeaders, pruneRecordsBody } from '../schemas/records';
import * as out from '../schemas/responses';
import { syncScheduleBody, syncStatusQuery, syncVariantTarget, triggerSyncBody, updateConnectionFrequencyBody } from '../schemas/syncs';
import { bulkReplayBody, listWebhookEventsQuery, webhookEventParams } from '../schemas/webhooks';
import { json, html } from './content';
import { errorBody, errorResponses } from './errors';

const body = (schema: z.ZodType) => ({ required: true, content: { 'application/json': { schema } } });
const connectionIdParam = z.object({ connectionId: z.string() });

/** Both spellings of the connections routes: `/connections` and Nango's older singular `/connection`. */
function bothConnectionPaths(registry: OpenAPIRegistry, route: RouteConfig): void {
  registry.registerPath({ ...route, tags: ['Connections'] });
  registry.registerPath({
    ...route,
    path: route.path.replace('/connections', '/connection'),
    operationId: route.operationId ? `${route.operationId}Singular` : undefined,
    tags: ['Connections'],
    deprecated: true,
    description: 'Nango’s older singular path; the same as `/connections…`.',
  });
}

/** Every route of api/app.ts but the per-integration `/v1/...` endpoints (see ./integration-models.ts) and `/records` (there too). */
export function registerApiRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    tags: ['Operations'],
    summary: 'Liveness: the process runs (no key; calls nothing)',
    description:
      'Answers 200 while the process’s event loop runs. It checks no dependency: restarting the API does not bring a database back. Readiness is `GET /ready`.',
    security: [],
    responses: { 200: json(out.healthResponse) },
  });
  registry.registerPath({
    method: 'get',
    path: '/ready',
    operationId: 'getReadiness',
    tags: ['Operations'],
    summary: 'Readiness: MongoDB and Temporal reachable, not shutting down (no key)',
    description:
      'A load balancer sends traffic while this answers 200. 503 with `Retry-After` when MongoDB or Temporal cannot be reached (the part that is down says `unavailable`), or `status: shutting_down` while the process drains after SIGTERM.',
    security: [],
    responses: {
      200: json(out.readinessResponse),
      503: {
        ...json(out.readinessResponse, 'A part is down, or the process is shutting down.'),
        headers: z.object({ 'retry-after': z.string().describe('Seconds to wait.') }),
      },
      429: errorResponses([429], false)['429'],
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    tags: ['Operations'],
    summary: 'This document (no key)',
    security: [],
    responses: { 200: json(z.record(z.string(), z.unknown()), 'The OpenAPI 3.1 document'), 429: errorResponses([429], false)['429'] },
  });
  registry.registerPath({
    method: 'get',
    path: '/docs',
    operationId: 'getApiReference',
    tags: ['Operations'],
    summary: 'The API reference page: Swagger UI on this document (no key)',
    security: [],
    responses: { 200: html('The page'), 429: errorResponses([429], false)['429'] },
  });

  // Connections
  bothConnectionPaths(registry, {
    method: 'post',
    path: '/connections',
    operationId: 'createConnection',
    summary: 'Create a connection from credentials',
    request: { body: body(createConnectionBody) },
    responses: { 201: json(out.connectionView, 'Created (credentials verified with the provider first)'), ...errorResponses([404, 409, 424]) },
  });
  bothConnectionPaths(registry, {
    method: 'get',
    path: '/connections',
    operationId: 'listConnections',
    summary: 'List connections',
    request: { query: listConnectionsQuery },
    responses: { 200: json(out.connectionListResponse), ...errorResponses([]) },
  });
  bothConnectionPaths(registry, {
    method: 'get',
    path: '/connections/{connectionId}',
    operationId: 'getConnection',
    summary: 'A connection with fresh credentials',
    request: { params: connectionIdParam, query: providerConfigKeyQuery },
    responses: { 200: json(out.connectionWithCredentialsView), ...errorResponses([404, 424]) },
  });
  bothConnectionPaths(registry, {
    method: 'delete',
    path: '/connections/{connectionId}',
    operationId: 'deleteConnection',
    summary: 'Delete a connection, its syncs and records',
    request: { params: connectionIdParam, query: providerConfigKeyQuery },
    responses: { 200: json(out.successResponse), ...errorResponses([404]) },
  });
  bothConnectionPaths(registry, {
    method: 'patch',
    path: '/connections/{connectionId}',
    operationId: 'patchConnection',
    summary: 'Change a connection’s tags or webhook URL',
    request: { params: connectionIdParam, query: patchConnectionQuery, body: body(patchConnectionBody) },
    responses: { 200: json(out.successResponse), ...errorResponses([404]) },
  });
  for (const method of ['post', 'patch'] as const) {
    bothConnectionPaths(registry, {
      method,
      path: '/connections/metadata',
      operationId: method === 'post' ? 'setMetadata' : 'updateMetadata',
      summary: method === 'post' ? 'Replace the metadata of one or more connections' : 'Merge into the metadata of one or more connections',
      request: { body: body(metadataBody) },
      responses: { 200: json(out.successResponse), ...errorResponses([404]) },
    });
  }

  // Syncs
  const syncTags = ['Syncs'];
  for (const [path, schema, operationId, summary] of [
    ['/sync/trigger', triggerSyncBody, 'triggerSync', 'Run syncs now (optionally from scratch)'],
    ['/sync/start', syncScheduleBody, 'startSync', 'Resume syncs’ schedules'],
    ['/sync/pause', syncScheduleBody, 'pauseSync', 'Pause syncs’ schedules'],
  ] as const) {
    registry.registerPath({
      method: 'post',
      path,
      operationId,
      summary,
      tags: syncTags,
      request: { body: body(schema) },
      responses: {
        200: json(out.syncOperationResponse, 'Done for the connection named'),
        202: json(out.syncOperationResponse, 'Started in the background for every connection of the integration (`operation`)'),
        ...errorResponses([404, 409]),
      },
    });
  }
  registry.registerPath({
    method: 'get',
    path: '/sync/status',
    operationId: 'getSyncStatus',
    summary: 'Syncs’ state and recent background operations',
    tags: syncTags,
    request: { query: syncStatusQuery },
    responses: { 200: json(out.syncStatusResponse), ...errorResponses([404]) },
  });
  registry.registerPath({
    method: 'put',
    path: '/sync/update-connection-frequency',
    operationId: 'updateSyncFrequency',
    summary: 'Set a sync’s frequency for one connection',
    tags: syncTags,
    request: { body: body(updateConnectionFrequencyBody) },
    responses: { 200: json(out.syncFrequencyResponse), ...errorResponses([404]) },
  });
  const variantParams = z.object({ name: z.string(), variant: z.string() });
  registry.registerPath({
    method: 'post',
    path: '/sync/{name}/variant/{variant}',
    operationId: 'createSyncVariant',
    summary: 'Create a variant of a sync for a connection',
    tags: syncTags,
    request: {
      params: variantParams,
      query: syncVariantTarget.partial(),
      body: { required: false, content: { 'application/json': { schema: syncVariantTarget } } },
    },
    responses: { 200: json(out.syncVariantResponse), ...errorResponses([404, 409]) },
  });
  registry.registerPath({
    method: 'delete',
    path: '/sync/{name}/variant/{variant}',
    operationId: 'deleteSyncVariant',
    summary: 'Delete a sync variant and its records',
    tags: syncTags,
    request: {
      params: variantParams,
      query: syncVariantTarget.partial(),
      body: { required: false, content: { 'application/json': { schema: syncVariantTarget } } },
    },
    responses: { 200: json(out.successResponse), ...errorResponses([404]) },
  });

  registry.registerPath({
    method: 'patch',
    path: '/records/prune',
    operationId: 'pruneRecords',
    summary: 'Drop record payloads up to a cursor',
    tags: ['Records'],
    request: { headers: connectionHeaders, body: body(pruneRecordsBody) },
    responses: { 200: json(out.pruneRecordsResponse), ...errorResponses([404]) },
  });

  // Actions
  registry.registerPath({
    method: 'post',
    path: '/action/trigger',
    operationId: 'triggerAction',
    summary: 'Run an action (sync, or async with `X-Async: true`)',
    tags: ['Actions'],
    request: { headers: actionHeaders, body: body(triggerActionBody) },
    responses: {
      200: json(z.unknown(), 'The action’s output (its shape: the action’s `output` model, see its `/v1/...` endpoint)'),
      202: json(out.asyncActionResponse, 'Started (`X-Async: true`); read the output at `statusUrl`'),
      ...errorResponses([404, 409, 424, 504], true, true),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/action/{id}',
    operationId: 'getActionResult',
    summary: 'An async action call’s output',
    tags: ['Actions'],
    request: { params: z.object({ id: z.string() }) },
    responses: {
      200: json(z.unknown(), 'The ended action’s output'),
      ...errorResponses([404]),
      500: json(errorBody, 'The action failed: its error (`code`, `message`, `status`, `detail`)'),
    },
  });

  // Logs, webhook events
  registry.registerPath({
    method: 'get',
    path: '/logs',
    operationId: 'listRequestLogs',
    summary: 'The environment’s third-party request log',
    tags: ['Logs'],
    request: { query: listLogsQuery },
    responses: { 200: json(out.requestLogListResponse), ...errorResponses([]) },
  });
  const hookTags = ['Webhook events'];
  registry.registerPath({
    method: 'get',
    path: '/webhooks/events',
    operationId: 'listWebhookEvents',
    summary: 'Outbound webhook events',
    tags: hookTags,
    request: { query: listWebhookEventsQuery },
    responses: { 200: json(out.webhookEventListResponse), ...errorResponses([]) },
  });
  registry.registerPath({
    method: 'post',
    path: '/webhooks/events/replay',
    operationId: 'replayFailedWebhookEvents',
    summary: 'Replay the failed events of a time range',
    tags: hookTags,
    request: { body: body(bulkReplayBody) },
    responses: { 200: json(out.webhookBulkReplayResponse), ...errorResponses([]) },
  });
  registry.registerPath({
    method: 'get',
    path: '/webhooks/events/{id}',
    operationId: 'getWebhookEvent',
    summary: 'One webhook event with its delivery attempts',
    tags: hookTags,
    request: { params: webhookEventParams },
    responses: { 200: json(out.webhookEventResponse), ...errorResponses([404]) },
  });
  registry.registerPath({
    method: 'post',
    path: '/webhooks/events/{id}/replay',
    operationId: 'replayWebhookEvent',
    summary: 'Replay one webhook event',
    tags: hookTags,
    request: { params: webhookEventParams },
    responses: { 202: json(out.webhookReplayResponse, 'Requeued'), ...errorResponses([404, 409]) },
  });

  // Proxy: every method; the provider's answer as it came.
  for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
    registry.registerPath({
      method,
      path: '/proxy/{path}',
      operationId: `proxy${method[0].toUpperCase()}${method.slice(1)}`,
      tags: ['Proxy'],
      summary: 'Call the provider’s API with the connection’s credentials',
      description:
        'Any path under `/proxy/` is forwarded to the provider (query and body as sent, streamed). `Weft-Proxy-<Header>` (or `Nango-Proxy-<Header>`) headers are passed on without the prefix. With `Weft-Pre-Authenticated: true` the call goes to `Base-Url-Override` without the connection’s credentials (a pre-authenticated URL).',
      request: { params: z.object({ path: z.string().describe('The provider path, slashes included.') }), headers: proxyHeaders },
      responses: {
        default: { description: 'The provider’s answer: its status, content headers and body, streamed.', content: { '*/*': { schema: z.unknown() } } },
        ...errorResponses([404, 424]),
      },
    });
  }

  // Connect sessions and the browser-facing flows
  const connectTags = ['Connect'];
  registry.registerPath({
    method: 'post',
    path: '/connect/sessions',
    operationId: 'createConnectSession',
    summary: 'Create a connect session (link for an end user)',
    tags: connectTags,
    request: { body: body(createConnectSessionBody) },
    responses: { 201: json(out.connectSessionResponse, 'Created: a 30-minute link for the end user'), ...errorResponses([404]) },
  });
  const browser = { tags: connectTags, security: [] };
  registry.registerPath({
    method: 'get',
    path: '/connect',
    operationId: 'connectPage',
    ...browser,
    summary: 'The Connect page (the session token is the credential)',
    request: { query: z.object({ session_token: z.string() }) },
    responses: {
      200: html('The Connect page'),
      400: html('Refused'),
      401: html('Invalid or expired session'),
      default: html('A result page saying what failed: the error’s status, its code in `data-error-code`'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/connect/api-key/{key}',
    operationId: 'connectPageApiKey',
    ...browser,
    summary: 'The Connect page’s API-key form',
    request: {
      params: integrationKeyParams,
      body: { required: true, content: { 'application/x-www-form-urlencoded': { schema: apiKeyBody.extend({ connect_session_token: z.string() }) } } },
    },
    responses: {
      200: html('Connected'),
      400: html('Refused'),
      401: html('Invalid or expired session'),
      default: html('A result page saying what failed: the error’s status, its code in `data-error-code`'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api-auth/api-key/{key}',
    operationId: 'connectWithApiKey',
    ...browser,
    summary: 'Connect with an API key from the app’s own frontend (Nango’s frontend SDK)',
    request: {
      params: integrationKeyParams,
      query: z.object({ connect_session_token: z.string().optional().describe('Or `Authorization: Bearer <token>`.') }),
      body: body(apiKeyBody),
    },
    responses: {
      200: json(out.apiKeyConnectResponse, 'Re-authorized'),
      201: json(out.apiKeyConnectResponse, 'Connected'),
      ...errorResponses([401, 403, 404, 409, 424], false),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/oauth/connect/{key}',
    operationId: 'startOAuthFlow',
    ...browser,
    summary: 'Start an OAuth (or App install) flow: redirects to the provider',
    request: { params: integrationKeyParams, query: oauthConnectQuery },
    responses: {
      302: { description: 'To the provider’s authorization page' },
      400: html('Refused'),
      401: html('Invalid or expired session'),
      default: html('A result page saying what failed: the error’s status, its code in `data-error-code`'),
    },
  });
  for (const [path, summary, operationId] of [
    ['/oauth/callback', 'The provider’s OAuth redirect', 'oauthCallback'],
    ['/app-auth/connect', 'GitHub’s App installation redirect', 'appInstallCallback'],
  ] as const) {
    registry.registerPath({
      method: 'get',
      path,
      operationId,
      ...browser,
      summary,
      request: { query: z.looseObject({ state: z.string().optional() }) },
      responses: {
        200: html('The result page (closes the popup)'),
        400: html('Refused'),
        default: html('A result page saying what failed: the error’s status, its code in `data-error-code`'),
      },
    });
  }
}
