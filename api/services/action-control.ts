import { randomUUID } from 'node:crypto';
import { isGrpcDeadlineError, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import { BadRequestError, NotFoundError, WeftError } from '../../common/errors';
import { actionWorkflowId, searchAttributesFor, startWorkflow } from '../../control';
import type { ActionRunInput } from '../../activities/action-contracts';
import type { FailureInfo } from '../../activities/failures';
import type { ActionDefinition } from '../../runtime/types';
import { toValidationIssues } from '../../runtime/validation';
import type { ConnectionDoc } from '../../store/connections';
import type { ApiDeps } from '../deps';

// The routers find an action's workflow by the same ID.
export { actionWorkflowId };

export function findAction(deps: ApiDeps, connection: ConnectionDoc, name: string): ActionDefinition {
  const def = deps.registry.getAction(connection.provider, name);
  if (!def) {
    const known = deps.registry.get(connection.provider)?.actions.map((a) => a.name) ?? [];
    throw new NotFoundError(
      'unknown_action',
      `Integration "${connection.provider_config_key}" has no action "${name}" (available: ${known.join(', ') || 'none'}).`,
    );
  }
  return def;
}

/** Input is checked here, before anything starts: bad input changes nothing. */
export function validateActionInput(def: ActionDefinition, input: unknown): unknown {
  const parsed = def.input.safeParse(input ?? {});
  if (!parsed.success) throw new BadRequestError('invalid_action_input', `Invalid input for action ${def.name}.`, toValidationIssues(parsed.error));
  return parsed.data;
}

export async function startAction(
  deps: ApiDeps,
  connection: ConnectionDoc,
  def: ActionDefinition,
  input: unknown,
  maxRetries: number,
  opts: { async?: boolean } = {},
): Promise<{ id: string; workflowId: string }> {
  const id = randomUUID();
  const workflowId = actionWorkflowId(deps.settings.temporalIdPrefix, connection.environment, id);
  const args: ActionRunInput = {
    environment: connection.environment,
    connection: connection._id,
    connectionId: connection.connection_id,
    providerConfigKey: connection.provider_config_key,
    provider: connection.provider,
    actionName: def.name,
    input,
    maxRetries,
    activityTaskQueue: deps.settings.actionTaskQueue,
    ...(opts.async ? { asyncCall: { id, statusUrl: actionStatusUrl(id) } } : {}),
  };
  // The workflow on the workflow workers' queue, its activity on the action queue (workflows/action-run.ts).
  await startWorkflow(deps.temporal, 'actionRun', {
    workflowId,
    taskQueue: deps.settings.syncTaskQueue,
    args: [args],
    typedSearchAttributes: searchAttributesFor({
      environment: connection.environment,
      integration: connection.provider_config_key,
      connectionId: connection.connection_id,
      operation: `action:${def.name}`,
    }),
  });
  return { id, workflowId };
}

/** Where an async call's output is read (`GET /action/:id`), as the 202 answer and the `async_action` webhook give it. */
export function actionStatusUrl(id: string): string {
  return `/action/${id}`;
}

/** A sync-mode call waits this long for the output unless WEFT_ACTION_TIMEOUT_MS or X-Action-Timeout say otherwise. */
const DEFAULT_ACTION_TIMEOUT_MS = 60_000;

/** The deadline of one sync-mode call: the `X-Action-Timeout` header (seconds) or the configured default. */
export function actionTimeoutMs(deps: ApiDeps, headerSeconds: number | undefined): number {
  return headerSeconds !== undefined ? headerSeconds * 1000 : (deps.settings.actionTimeoutMs ?? DEFAULT_ACTION_TIMEOUT_MS);
}

/** 504: the caller stopped waiting; the action did not stop running. */
class ActionTimeoutError extends WeftError {
  constructor(id: string, timeoutMs: number) {
    super('action_timeout', `The action did not finish within ${timeoutMs / 1000} s. It keeps running: poll GET /action/${id} for its output.`, 504, {
      id,
      statusUrl: actionStatusUrl(id),
    });
  }
}

/**
 * The output of a finished action, or the error the app should see. Waits at most
 * `timeoutMs`: past it the call answers 504 action_timeout with the id to poll, while the
 * workflow goes on and keeps its result for `GET /action/:id` (the async mode's read).
 */
export async function awaitActionResult(deps: ApiDeps, started: { id: string; workflowId: string }, timeoutMs: number): Promise<unknown> {
  const handle = deps.temporal.workflow.getHandle(started.workflowId);
  const deadline = Date.now() + timeoutMs;
  try {
    return await deps.temporal.connection.withDeadline(deadline, () => handle.result());
  } catch (err) {
    if (err instanceof WorkflowFailedError) throw toApiError(err);
    // Anything but our own deadline (Temporal unreachable, ...) goes to the error middleware.
    // Once the deadline has passed, whatever the poll ended with (a deadline, or a stream
    // cancelled as it expired), the action's state below decides the answer.
    if (!isGrpcDeadlineError(err) && Date.now() < deadline) throw err;
  }
  // Finished at the last moment: its outcome. Temporal gone meanwhile: describe fails, 503.
  const state = await actionState(deps, started.workflowId);
  if (state.state === 'completed') return state.output;
  if (state.state === 'failed') throw state.error;
  throw new ActionTimeoutError(started.id, timeoutMs);
}

export type ActionState = { state: 'unknown' } | { state: 'running' } | { state: 'completed'; output: unknown } | { state: 'failed'; error: WeftError };

export async function actionState(deps: ApiDeps, workflowId: string): Promise<ActionState> {
  const handle = deps.temporal.workflow.getHandle(workflowId);
  try {
    const desc = await handle.describe();
    if (desc.status.name === 'RUNNING') return { state: 'running' };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { state: 'unknown' };
    throw err;
  }
  try {
    return { state: 'completed', output: await handle.result() };
  } catch (err) {
    return { state: 'failed', error: toApiError(err) };
  }
}

/**
 * Unwraps workflow → activity → application failure into the API error the action's
 * code meant: its code, its status (424 with `upstream` for provider failures, 400 for
 * bad input), its detail.
 */
function toApiError(err: unknown): WeftError {
  if (!(err instanceof WorkflowFailedError)) throw err;
  let cause: unknown = err.cause;
  while (cause && !(cause instanceof ApplicationFailure) && !(cause instanceof TimeoutFailure) && (cause as { cause?: unknown }).cause)
    cause = (cause as { cause?: unknown }).cause;
  if (cause instanceof TimeoutFailure) return new WeftError('action_timed_out', 'The action did not finish in time.', 504);
  if (!(cause instanceof ApplicationFailure)) return new WeftError('action_failed', err.message, 500);
  const info = (cause.details?.[0] ?? {}) as Partial<FailureInfo>;
  const status = typeof info.status === 'number' && info.status >= 400 ? info.status : 500;
  return new WeftError(cause.type ?? 'action_failed', cause.message, status, info.detail);
}
