import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  createConnectionBody,
  listConnectionsQuery,
  metadataBody,
  patchConnectionBody,
  patchConnectionQuery,
  providerConfigKeyQuery,
} from '../schemas/connections';
import * as out from '../schemas/responses';
import { syncScheduleBody, syncStatusQuery, syncVariantTarget, triggerSyncBody, updateConnectionFrequencyBody } from '../schemas/syncs';
import { json } from './content';
import { errorResponses } from './errors';

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

/** The connections and sync routes, until their routers declare them in the route registry. */
export function registerApiRoutes(registry: OpenAPIRegistry): void {
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
}
