import { Router } from 'express';
import { NotFoundError } from '../../common/errors';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { actionHeaders, triggerActionBody } from '../schemas/actions';
import { findConnection } from '../../store/connection-lookup';
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
export function actionsRouter(deps: ApiDeps): Router {
  const router = Router();

  router.post('/trigger', async (req, res) => {
    const env = environmentOf(res);
    const headers = parseInput(actionHeaders, req.headers, 'invalid_headers');
    const body = parseInput(triggerActionBody, req.body, 'invalid_body');
    const { connection } = await findConnection(deps.stores, env, headers['provider-config-key'], headers['connection-id']);
    const def = findAction(deps, connection, body.action_name);
    const input = validateActionInput(def, body.input);
    const isAsync = headers['x-async'] === 'true';
    const started = await startAction(deps, connection, def, input, headers['x-max-retries'] ?? 0, { async: isAsync });
    if (isAsync) {
      res.status(202).json({ id: started.id, statusUrl: actionStatusUrl(started.id) });
      return;
    }
    res.json(await awaitActionResult(deps, started, actionTimeoutMs(deps, headers['x-action-timeout'])));
  });

  router.get('/:id', async (req, res) => {
    const state = await actionState(deps, actionWorkflowId(deps.settings.temporalIdPrefix, environmentOf(res), req.params.id));
    switch (state.state) {
      case 'unknown':
        throw new NotFoundError('unknown_action_run', `No action run "${req.params.id}" in this environment.`);
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
  });

  return router;
}
