import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ActionActivities } from '../../activities/action-activities';
import type { ActionRunInput } from '../../activities/action-contracts';
import { withActivityFailures } from '../../activities/failures';
import { WeftError } from '../../common/errors';
import { ActionError } from '../../runtime/errors';
import { actionRun } from '../../workflows';
import { createTestWorker, createTimeSkippingEnv } from './time-skipping-env';

/** The real actionRun workflow on the time-skipping server: retried exactly as often as the app asked. */
describe('actionRun on the time-skipping test server', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });
  afterAll(async () => {
    await env?.teardown();
  });

  async function run(id: string, maxRetries: number, runAction: ActionActivities['runAction']): Promise<unknown> {
    const worker = await createTestWorker(env, withActivityFailures({ runAction }));
    const taskQueue = worker.options.taskQueue;
    const input: ActionRunInput = {
      environment: 'dev',
      connection: 'conn-doc-1',
      connectionId: 'user-1',
      providerConfigKey: 'one-drive',
      provider: 'one-drive',
      actionName: 'list-drives',
      input: {},
      maxRetries,
      // One worker serves the workflow and its activity here; in Weft they are separate queues.
      activityTaskQueue: taskQueue,
    };
    return worker.runUntil(env.client.workflow.execute(actionRun, { workflowId: id, taskQueue, args: [input] }));
  }

  test('X-Max-Retries: 2 means three attempts with backoff, then the last error with its code', async () => {
    const attemptsAt: number[] = [];
    const failure = await run('action-flaky', 2, async () => {
      attemptsAt.push(await env.currentTimeMs());
      throw new WeftError('provider_unavailable', `HTTP 503 (attempt ${attemptsAt.length})`, 503);
    }).catch((err: unknown) => err);

    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause?.cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('provider_unavailable');
    expect((cause as ApplicationFailure).message).toBe('HTTP 503 (attempt 3)');
    expect(attemptsAt).toHaveLength(3);
    // initialInterval 1 s, backoffCoefficient 2, in workflow time.
    expect(attemptsAt[1]! - attemptsAt[0]!).toBeGreaterThanOrEqual(1_000);
    expect(attemptsAt[2]! - attemptsAt[1]!).toBeGreaterThanOrEqual(2_000);
  });

  test('an action error is final: one attempt whatever the retries asked', async () => {
    let attempts = 0;
    const failure = await run('action-bad-input', 5, async () => {
      attempts++;
      throw new ActionError('invalid_action_input', 'drive_id is required');
    }).catch((err: unknown) => err);

    expect(((failure as WorkflowFailedError).cause?.cause as ApplicationFailure).type).toBe('invalid_action_input');
    expect(attempts).toBe(1);
  });

  test('the output is the workflow result', async () => {
    await expect(run('action-ok', 0, async () => ({ drives: [{ id: 'd1' }] }))).resolves.toEqual({ drives: [{ id: 'd1' }] });
  });
});
