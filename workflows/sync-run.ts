import { ActivityFailure, ApplicationFailure, continueAsNew, defineSignal, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { SyncActivities } from '../activities/sync-activities';
import type { RunSyncResult, SyncRunInput, SyncRunSummary } from '../activities/sync-contracts';
import type { SyncRunError } from '../store/syncs';

/**
 * The provider says the sync's data changed (a webhook delivery) while this run is going: it
 * may have read past the change already, so one more run follows this one. Any number of
 * signals during a run make one more run.
 */
export const providerChangedSignal = defineSignal<[], 'providerChanged'>('providerChanged');

/**
 * One run of one sync for one connection. Its workflow ID is derived from
 * (environment, integration, connection, sync, variant), so two runs of the same sync
 * never overlap. Records never pass through here: activities write them to MongoDB.
 */
export async function syncRun(input: SyncRunInput): Promise<SyncRunSummary> {
  const { runId, workflowId } = workflowInfo();
  let changedDuringRun = false;
  setHandler(providerChangedSignal, () => {
    changedDuringRun = true;
  });
  // Which failures are final is the activities' call: they fail with nonRetryable set
  // (activities/failures.ts), which Temporal honours whatever the policy below says.
  const bookkeeping = proxyActivities<SyncActivities>({
    startToCloseTimeout: '10 minutes',
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
  });
  const { runSync, performSyncRun } = proxyActivities<SyncActivities>({
    startToCloseTimeout: '24 hours',
    // A dead worker is noticed after this long; the next attempt resumes from the checkpoint.
    heartbeatTimeout: input.heartbeatTimeoutMs,
    retry: {
      initialInterval: '2 seconds',
      backoffCoefficient: 2,
      maximumInterval: '10 minutes',
      // Rate-limit waits end attempts too (with their own nextRetryDelay), hence the room.
      maximumAttempts: 15,
    },
  });

  // A run's start, exec and end in one activity: one activity task and two workflow tasks
  // where there were three and four. Histories recorded before run the three activities.
  if (patched(SINGLE_ACTIVITY_RUN)) {
    let summary: SyncRunSummary;
    try {
      summary = await performSyncRun({ ...input, runId, workflowId });
    } catch (err) {
      const error = describeFailure(err);
      await bookkeeping.failSyncRun({ ...input, runId, error });
      throw runFailure(error, err);
    }
    // Histories recorded before the signal existed never received it: they replay unchanged.
    if (changedDuringRun) await continueAsNew<typeof syncRun>(input);
    return summary;
  }

  const run = await bookkeeping.startSyncRun({ ...input, runId, workflowId });
  let result: RunSyncResult | undefined;
  try {
    result = await runSync({ ...input, run });
  } catch (err) {
    const error = describeFailure(err);
    await bookkeeping.failSyncRun({ ...input, run, error });
    // No delete detection after a failed run: finishSyncRun is never reached.
    throw runFailure(error, err);
  }
  // Older histories returned no trackDeletes: none declared.
  return bookkeeping.finishSyncRun({ ...input, run, trackDeletes: result?.trackDeletes ?? [] });
}

/** The patch id of the one-activity run: its marker in a history says the run took that path. */
const SINGLE_ACTIVITY_RUN = 'single-activity-run';

function runFailure(error: SyncRunError, err: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: error.code,
    message: error.message,
    details: error.detail === undefined ? [] : [error.detail],
    nonRetryable: true,
    cause: err instanceof Error ? err : undefined,
  });
}

function describeFailure(err: unknown): SyncRunError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const detail = (cause.details?.[0] as { detail?: unknown } | undefined)?.detail;
    return { code: cause.type ?? 'sync_failed', message: cause.message, ...(detail === undefined ? {} : { detail }) };
  }
  if (cause instanceof Error) return { code: cause.name === 'TimeoutFailure' ? 'sync_timed_out' : 'sync_failed', message: cause.message };
  return { code: 'sync_failed', message: String(cause) };
}
