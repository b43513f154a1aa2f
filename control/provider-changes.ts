import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { ConnectionDoc } from '../store/connections';
import type { providerChangedSignal } from '../workflows/sync-run';
import type { ControlDeps } from './deps';
import { syncRunInput, syncSearchAttributes, type SyncSelector } from './sync-runs';
import { connectionSyncWorkflowId } from './workflow-ids';
import { describeSyncSchedule } from './sync-schedules';
import { startWorkflow } from './workflow-start';

/** What a provider's word that data changed did to one sync. */
export type ChangeRun = 'started' | 'signalled' | 'paused';

const PROVIDER_CHANGED: (typeof providerChangedSignal)['name'] = 'providerChanged';

/**
 * The provider says a sync's data changed (a webhook delivery): its run starts now, or, when
 * one is going, that run is told and runs once more after it ends (it may have read past the
 * change). Either way one sync never runs twice at once, and a burst of changes makes at most
 * one run after the current one. A sync whose schedule is paused (by the app or an operator)
 * is left alone.
 */
export async function runSyncForChange(deps: ControlDeps, connection: ConnectionDoc, sel: SyncSelector): Promise<ChangeRun> {
  if (await schedulePaused(deps, connection, sel)) return 'paused';
  const workflowId = connectionSyncWorkflowId(deps.settings.temporalIdPrefix, connection, sel);
  // A run that ends between the refused start and the signal is started again (twice at most).
  for (let attempt = 1; ; attempt++) {
    try {
      await startWorkflow(deps.temporal, 'syncRun', {
        workflowId,
        taskQueue: deps.settings.syncTaskQueue,
        args: [syncRunInput(deps, connection, sel)],
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: syncSearchAttributes(connection, sel),
      });
      return 'started';
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    try {
      await deps.temporal.workflow.getHandle(workflowId).signal(PROVIDER_CHANGED);
      return 'signalled';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) || attempt >= 3) throw err;
    }
  }
}

/** Whether the sync's schedule is paused (by the app or an operator): deliveries then leave it alone. A connection of an earlier version has none: nothing paused it. */
export async function schedulePaused(deps: ControlDeps, connection: ConnectionDoc, sel: SyncSelector): Promise<boolean> {
  return (await describeSyncSchedule(deps, connection, sel))?.state.paused ?? false;
}
