import type { Interceptor } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions, type GrpcRetryOptions } from '@temporalio/client';

/**
 * Calls that wait on purpose (a workflow's result, an update's outcome): the caller bounds
 * them itself with `connection.withDeadline`, as the action wait does.
 */
const LONG_POLLS = new Set(
  ['GetWorkflowExecutionHistory', 'PollWorkflowExecutionUpdate', 'UpdateWorkflowExecution'].map((m) => `/temporal.api.workflowservice.v1.WorkflowService/${m}`),
);

/**
 * Options for the Temporal client's Connection that give every call a deadline. Without one
 * the client's retry interceptor keeps retrying an unreachable server for about 20 s per
 * call (measured: 18.1 s), so an API request hung that long and then failed with 500. With
 * it a call gives up after `callTimeoutMs`, which the API answers as 503
 * orchestrator_unavailable. The retries (the SDK's own policy) stay, but they stop at the
 * deadline instead of sleeping past it; a deadline the caller set (`withDeadline`) is kept.
 * The gRPC channel reconnects by itself: calls succeed again as soon as the server is back.
 */
export function boundedTemporalCalls(callTimeoutMs: number): Pick<ConnectionOptions, 'interceptors'> {
  const defaults = defaultGrpcRetryOptions();
  const unbounded = makeGrpcRetryInterceptor(defaults);
  const deadlinePerCall: Interceptor = (options, nextCall) => {
    const explicit = options.deadline === undefined ? undefined : new Date(options.deadline).getTime();
    const deadline = explicit ?? (LONG_POLLS.has(options.method_definition.path) ? undefined : Date.now() + callTimeoutMs);
    if (deadline === undefined) return unbounded(options, nextCall);
    const withinDeadline: GrpcRetryOptions = {
      retryableDecider: (attempt, status) => Date.now() < deadline && defaults.retryableDecider(attempt, status),
      delayFunction: (attempt, status) => Math.max(0, Math.min(defaults.delayFunction(attempt, status), deadline - Date.now())),
    };
    return makeGrpcRetryInterceptor(withinDeadline)({ ...options, deadline }, nextCall);
  };
  // Replaces the client's default interceptor list (which is just the unbounded retry).
  return { interceptors: [deadlinePerCall] };
}
