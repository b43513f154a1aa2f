import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from '../common/logger';
import type { SyncActivities } from '../activities/sync-activities';

export interface SyncWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: SyncActivities;
  /** A prebuilt bundle (tests bundle once and share it); otherwise workflows/ is bundled now. */
  workflowBundle?: { code: string };
  logger?: Logger;
  maxConcurrentActivityTaskExecutions?: number;
}

export async function createSyncWorker(opts: SyncWorkerOptions): Promise<Worker> {
  const workflowSource: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = opts.workflowBundle
    ? { workflowBundle: opts.workflowBundle }
    : { workflowsPath: require.resolve('../workflows') };
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: opts.activities,
    ...workflowSource,
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivityTaskExecutions ?? 20,
  });
}
