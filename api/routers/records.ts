import { findConnection } from '../../store/connection-lookup';
import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { recordsOperation } from '../openapi/integration-models';
import { route, routeGroup } from '../routing/route';
import { connectionHeaders, listRecordsQuery, pruneRecordsBody } from '../schemas/records';
import * as out from '../schemas/responses';
import { findReadConnection, listRecordsPage } from '../services/record-listing';
import { pruneRecords } from '../services/record-pruning';

/** `GET /records`: the sync cache, paged by an opaque, stable cursor; `PATCH /records/prune` drops payloads up to one. */
export const recordsRoutes = routeGroup({
  mount: '/records',
  access: 'secret-key',
  tag: 'Records',
  routes: [
    route({
      method: 'get',
      path: '/records',
      auth: 'secret-key',
      operationId: 'listRecords',
      summary: 'A connection’s synced records of one model, paged',
      request: { headers: connectionHeaders, query: listRecordsQuery },
      // 200: a page of records of any of the integrations' models, and the description lists them.
      responses: errorResponses([404]),
      openapi: (operation, integrations) => [recordsOperation(operation, integrations)],
      async handler({ deps, res, input }) {
        const headers = input.headers();
        const connection = await findReadConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
        res.json(await listRecordsPage(deps.stores, deps.registry, connection, input.query()));
      },
    }),

    route({
      method: 'patch',
      path: '/records/prune',
      auth: 'secret-key',
      operationId: 'pruneRecords',
      summary: 'Drop record payloads up to a cursor',
      request: { headers: connectionHeaders, body: pruneRecordsBody },
      responses: { 200: json(out.pruneRecordsResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        const headers = input.headers();
        const { connection } = await findConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
        res.json(await pruneRecords(deps.stores, deps.registry, connection, input.body()));
      },
    }),
  ],
});
