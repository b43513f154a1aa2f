import { startChild, TemporalFailure, workflowInfo } from '@temporalio/workflow';
import type { ScheduledSyncInput, ScheduledSyncOutcome } from '../activities/sync-contracts';
import { syncRun } from './sync-run';

/**
 * What a sync's Schedule starts on each fire. A schedule appends the fire time to its
 * workflow ID, so the schedule alone cannot keep a scheduled run from overlapping a manual
 * one; this workflow runs the sync under its fixed ID instead. If a run with that ID is
 * going (a manual trigger), this fire is covered by it and ends. A manual trigger during a
 * scheduled run joins the child (USE_EXISTING). While the child runs this workflow runs, so
 * the schedule's overlap policy (SKIP) skips fires until the sync is done.
 */
export async function scheduledSync(input: ScheduledSyncInput): Promise<ScheduledSyncOutcome> {
  let child;
  try {
    child = await startChild(syncRun, {
      workflowId: input.syncWorkflowId,
      args: [input.run],
      // Operators find the run by the same attributes as a triggered one.
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
    });
  } catch (err) {
    if (err instanceof TemporalFailure && err.name === 'WorkflowExecutionAlreadyStartedError') return { ran: false, reason: 'already_running' };
    throw err;
  }
  return { ran: true, summary: await child.result() };
}
