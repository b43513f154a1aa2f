import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ActionActivities } from '../activities/action-activities';
import type { ActionCompletionActivities } from '../activities/action-completion';
import type { ActionRunInput } from '../activities/action-contracts';

/**
 * One action call: a single activity on the action task queue (so an interactive action
 * never waits behind a long sync), retried only as often as the app asked
 * (`X-Max-Retries`). The output is small and validated; it is the workflow's result.
 * An async call ends with an `async_action` webhook (`asyncCall`).
 * The workflow itself runs with the syncs' workflows (its task is milliseconds of work): the
 * action workers then run activities only, and a worker process keeps one workflow isolate.
 */
export async function actionRun(input: ActionRunInput): Promise<unknown> {
  const { runAction } = proxyActivities<ActionActivities>({
    taskQueue: input.activityTaskQueue,
    startToCloseTimeout: '5 minutes',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: 1 + Math.max(0, Math.min(5, input.maxRetries)),
      // No list of final error types: the activity fails with nonRetryable set (activities/failures.ts).
    },
  });
  if (!input.asyncCall) return runAction(input);
  // Async calls are announced when they end, well or not: the app stops polling on the webhook.
  // On the workflow's own queue, with the webhook activities; retried until the event is stored.
  const { announceActionCompletion } = proxyActivities<ActionCompletionActivities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
  const { asyncCall } = input;
  const announce = () =>
    announceActionCompletion({
      environment: input.environment,
      connection: input.connection,
      connectionId: input.connectionId,
      providerConfigKey: input.providerConfigKey,
      workflowId: workflowInfo().workflowId,
      asyncCall,
    });
  try {
    return await runAction(input);
  } finally {
    await announce();
  }
}
