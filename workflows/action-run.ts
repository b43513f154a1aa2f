import { proxyActivities } from '@temporalio/workflow';
import type { ActionActivities } from '../activities/action-activities';
import type { ActionRunInput } from '../activities/action-contracts';

/**
 * One action call: a single activity on the action task queue (so an interactive action
 * never waits behind a long sync), retried only as often as the app asked
 * (`X-Max-Retries`). The output is small and validated; it is the workflow's result.
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
  return runAction(input);
}
