import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { listLogsQuery } from '../schemas/logs';
import * as out from '../schemas/responses';
import { listRequestLogs } from '../services/request-log-listing';

/** `GET /logs`: the environment's third-party requests (syncs, actions, verifications, connect flows), newest first. */
export const logsRoutes = routeGroup({
  mount: '/logs',
  access: 'secret-key',
  tag: 'Logs',
  routes: [
    route({
      method: 'get',
      path: '/logs',
      auth: 'secret-key',
      operationId: 'listRequestLogs',
      summary: 'The environment’s third-party request log',
      request: { query: listLogsQuery },
      responses: { 200: json(out.requestLogListResponse), ...errorResponses([]) },
      async handler({ deps, res, input }) {
        res.json(await listRequestLogs(deps.stores, environmentOf(res), input.query()));
      },
    }),
  ],
});
