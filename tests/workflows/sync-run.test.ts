import { Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { withActivityFailures } from '../../activities/failures';
import type { SyncActivities } from '../../activities/sync-activities';
import type { FailSyncRunInput, SyncRunInput, SyncRunSummary } from '../../activities/sync-contracts';
import { WeftError } from '../../common/errors';
import { ProviderAuthError, RateLimitedError } from '../../runtime/errors';
import { syncRun } from '../../workflows';
import { createTestWorker, createTimeSkippingEnv } from './time-skipping-env';

/**
 * The real syncRun workflow on Temporal's time-skipping test server, with its activities
 * replaced by plain functions, as an integration developer tests their own sync: what the
 * workflow does with a rate-limit wait, a flaky provider and a final error.
 */

const HOUR_MS = 60 * 60_000;

const input: SyncRunInput = {
  environment: 'env-test',
  connection: 'conn-doc-1',
  connectionId: 'conn-1',
  providerConfigKey: 'github',
  provider: 'github',
  syncName: 'issues',
  variant: 'base',
  heartbeatTimeoutMs: 30_000,
};

interface Calls {
  /** The test server's clock (ms) when each runSync attempt ran: the workflow's time, not the wall clock's. */
  runSyncAt: number[];
  failed: FailSyncRunInput[];
  finished: number;
}

/** The run's activity as a plain function around the given exec, and the failure's bookkeeping; wrapped as Weft wraps them. */
function activitiesWith(env: TestWorkflowEnvironment, exec: (input: SyncRunInput, attempt: number) => Promise<void>, calls: Calls): Partial<SyncActivities> {
  return withActivityFailures({
    performSyncRun: async (i: SyncRunInput & { runId: string }): Promise<SyncRunSummary> => {
      calls.runSyncAt.push(await env.currentTimeMs());
      const { attempt } = Context.current().info;
      await exec(i, attempt);
      calls.finished++;
      return { runId: i.runId, type: 'INITIAL', result: { Issue: { added: 3, updated: 0, deleted: 0 } }, recordCount: { Issue: 3 }, changed: true };
    },
    failSyncRun: async (i: FailSyncRunInput) => {
      calls.failed.push(i);
    },
  });
}

describe('syncRun on the time-skipping test server', () => {
  let env: TestWorkflowEnvironment;

  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });

  afterAll(async () => {
    await env?.teardown();
  });

  async function runWith(worker: Worker, id: string): Promise<SyncRunSummary> {
    return worker.runUntil(env.client.workflow.execute(syncRun, { workflowId: id, taskQueue: worker.options.taskQueue, args: [input] }));
  }

  test("a sync that meets a one-hour rate-limit reset waits it out on Temporal's timer (the test server skips it), then finishes", async () => {
    const calls: Calls = { runSyncAt: [], failed: [], finished: 0 };
    const worker = await createTestWorker(
      env,
      activitiesWith(
        env,
        async (_i, attempt) => {
          // What the GitHub client throws when x-ratelimit-reset is an hour away.
          if (attempt === 1) throw new RateLimitedError(HOUR_MS, 'GitHub rate limit exhausted');
        },
        calls,
      ),
    );
    const summary = await runWith(worker, 'sync-rate-limited');

    expect(summary.recordCount).toEqual({ Issue: 3 });
    expect(calls.runSyncAt).toHaveLength(2);
    // The second attempt waited the provider's hour (nextRetryDelay), not the policy's 2 s backoff.
    expect(calls.runSyncAt[1]! - calls.runSyncAt[0]!).toBeGreaterThanOrEqual(HOUR_MS);
    const { startTime, closeTime } = await env.client.workflow.getHandle('sync-rate-limited').describe();
    expect(closeTime!.getTime() - startTime.getTime()).toBeGreaterThanOrEqual(HOUR_MS);
    expect(calls.failed).toEqual([]);
  });

  test('a flaky provider is retried with exponential backoff until it answers', async () => {
    const calls: Calls = { runSyncAt: [], failed: [], finished: 0 };
    const worker = await createTestWorker(
      env,
      activitiesWith(
        env,
        async (_i, attempt) => {
          if (attempt <= 3) throw new WeftError('provider_unavailable', `attempt ${attempt}: HTTP 503`, 503);
        },
        calls,
      ),
    );
    const summary = await runWith(worker, 'sync-flaky');

    expect(summary.changed).toBe(true);
    expect(calls.finished).toBe(1);
    const gaps = calls.runSyncAt.slice(1).map((t, i) => t - calls.runSyncAt[i]!);
    // initialInterval 2 s, backoffCoefficient 2.
    expect(gaps).toHaveLength(3);
    expect(gaps[0]).toBeGreaterThanOrEqual(2_000);
    expect(gaps[1]).toBeGreaterThanOrEqual(4_000);
    expect(gaps[2]).toBeGreaterThanOrEqual(8_000);
    expect(gaps[2]).toBeLessThan(60_000);
  });

  test('a final error fails the run once, with its stable code, and is recorded', async () => {
    const calls: Calls = { runSyncAt: [], failed: [], finished: 0 };
    const worker = await createTestWorker(
      env,
      activitiesWith(
        env,
        async () => {
          throw new ProviderAuthError(401, 'Bad credentials');
        },
        calls,
      ),
    );
    const failure = await runWith(worker, 'sync-auth-failed').catch((err: unknown) => err);

    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('provider_auth_failed');
    expect((cause as ApplicationFailure).nonRetryable).toBe(true);
    // Not retried: the error says it is final.
    expect(calls.runSyncAt).toHaveLength(1);
    expect(calls.finished).toBe(0);
    expect(calls.failed.map((f) => f.error)).toEqual([{ code: 'provider_auth_failed', message: 'Bad credentials', detail: { upstream: { status: 401 } } }]);
  });
});
