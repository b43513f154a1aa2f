import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { createConnectSessionBody, createReconnectSessionBody } from '../schemas/connect';
import * as out from '../schemas/responses';
import { createConnectSession } from '../services/connect-sessions';

/** `POST /connect/sessions` and `/connect/sessions/reconnect` (secret key): a 30-minute link for one end user to connect accounts, or to re-authorize one. */
export const connectSessionRoutes = routeGroup({
  mount: '/connect/sessions',
  access: 'secret-key',
  tag: 'Connect',
  routes: [
    route({
      method: 'post',
      path: '/connect/sessions',
      auth: 'secret-key',
      operationId: 'createConnectSession',
      summary: 'Create a connect session (link for an end user)',
      request: { body: createConnectSessionBody },
      responses: { 201: json(out.connectSessionResponse, 'Created: a 30-minute link for the end user'), ...errorResponses([404]) },
      async handler({ deps, req, res, input }) {
        res.status(201).json({ data: await createConnectSession(deps, req, environmentOf(res), input.body()) });
      },
    }),

    route({
      method: 'post',
      path: '/connect/sessions/reconnect',
      auth: 'secret-key',
      operationId: 'createReconnectSession',
      summary: 'Create a reconnect session: a link that re-authorizes one existing connection',
      description:
        'Nango’s `createReconnectSession`: the same as `POST /connect/sessions` with `allowed_integrations: [integration_id]` and `connection_id`. ' +
        'The connection must exist in that integration (404 `unknown_connection`).',
      request: { body: createReconnectSessionBody },
      responses: { 201: json(out.connectSessionResponse, 'Created: a 30-minute link that re-authorizes the connection'), ...errorResponses([404]) },
      async handler({ deps, req, res, input }) {
        const { integration_id, ...rest } = input.body();
        res.status(201).json({ data: await createConnectSession(deps, req, environmentOf(res), { ...rest, allowed_integrations: [integration_id] }) });
      },
    }),
  ],
});
