import { z } from 'zod';
import { NotFoundError } from '../../common/errors';
import { findConnection } from '../../store/connection-lookup';
import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorBody, errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { actionHeaders, triggerActionBody } from '../schemas/actions';
import * as out from '../schemas/responses';
import {
  actionState,
  actionStatusUrl,
  actionTimeoutMs,
  actionWorkflowId,
  awaitActionResult,
  findAction,
  startAction,
  validateActionInput,
} from '../services/action-control';

/**
 * `POST /action/trigger` runs an action as an `actionRun` workflow on the action task
 * queue: in sync mode the answer is its output, or 504 action_timeout with the id to poll
 * once the call's deadline passes (X-Action-Timeout, default WEFT_ACTION_TIMEOUT_MS); with
 * `X-Async: true` it is 202 and the output is read later from `GET /action/:id`.
 */
export const actionRoutes = routeGroup({
  mount: '/action',
  access: 'secret-key',
  tag: 'Actions',
  routes: [
    route({
      method: 'post',
      path: '/action/trigger',
      auth: 'secret-key',
      operationId: 'triggerAction',
      summary: 'Run an action (sync, or async with `X-Async: true`)',
      request: { headers: actionHeaders, body: triggerActionBody },
      responses: {
        200: json(z.unknown(), 'The action’s output (its shape: the action’s `output` model, see its `/v1/...` endpoint)'),
        202: json(out.asyncActionResponse, 'Started (`X-Async: true`); read the output at `statusUrl`'),
        ...errorResponses([404, 409, 424, 504], true, true),
      },
      async handler({ deps, res, input }) {
        const env = environmentOf(res);
        const headers = input.headers();
        const body = input.body();
        const { connection } = await findConnection(deps.stores, env, headers['provider-config-key'], headers['connection-id']);
        const def = findAction(deps, connection, body.action_name);
        const actionInput = validateActionInput(def, body.input);
        const isAsync = headers['x-async'] === 'true';
        const started = await startAction(deps, connection, def, actionInput, headers['x-max-retries'] ?? 0, { async: isAsync });
        if (isAsync) {
          res.status(202).json({ id: started.id, statusUrl: actionStatusUrl(started.id) });
          return;
        }
        res.json(await awaitActionResult(deps, started, actionTimeoutMs(deps, headers['x-action-timeout'])));
      },
    }),

    route({
      method: 'get',
      path: '/action/:id',
      auth: 'secret-key',
      operationId: 'getActionResult',
      summary: 'An async action call’s output',
      request: { params: z.object({ id: z.string() }) },
      responses: {
        200: json(z.unknown(), 'The ended action’s output'),
        ...errorResponses([404]),
        500: json(errorBody, 'The action failed: its error (`code`, `message`, `status`, `detail`)'),
      },
      async handler({ deps, res, input }) {
        const { id } = input.params();
        const state = await actionState(deps, actionWorkflowId(deps.settings.temporalIdPrefix, environmentOf(res), id));
        switch (state.state) {
          case 'unknown':
            throw new NotFoundError('unknown_action_run', `No action run "${id}" in this environment.`);
          case 'running':
            throw new NotFoundError('action_pending', 'The action has not finished yet; try again shortly.');
          case 'completed':
            res.json(state.output);
            return;
          case 'failed':
            // Nango's contract: a failed async action reads as 500 with its error.
            res.status(500).json({
              error: {
                code: state.error.code,
                message: state.error.message,
                status: state.error.status,
                ...(state.error.details ? { detail: state.error.details } : {}),
              },
            });
        }
      },
    }),
  ],
});
