import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';

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
 * call (measured: 18.8 s), so an API request hung that long before failing. With it a call
 * fails after `callTimeoutMs` with DEADLINE_EXCEEDED, which the API answers as 503
 * orchestrator_unavailable. The deadline is set outside the retry interceptor, so it bounds
 * the call with all its retries; a deadline the caller set (`withDeadline`) is kept.
 * The gRPC channel reconnects by itself: calls succeed again as soon as the server is back.
 */
export function boundedTemporalCalls(callTimeoutMs: number): Pick<ConnectionOptions, 'interceptors'> {
  const deadlinePerCall: Interceptor = (options, nextCall) => {
    const bounded = options.deadline === undefined && !LONG_POLLS.has(options.method_definition.path) ? { ...options, deadline: Date.now() + callTimeoutMs } : options;
    return new InterceptingCall(nextCall(bounded));
  };
  // Replacing the interceptor list drops the default retry interceptor unless it is listed again.
  return { interceptors: [deadlinePerCall, makeGrpcRetryInterceptor(defaultGrpcRetryOptions())] };
}
