import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';

export interface WeftWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  /** A prebuilt bundle (tests bundle once and share it); otherwise workflows/ is bundled now. */
  workflowBundle?: { code: string };
  maxConcurrentActivityTaskExecutions?: number;
}

/** One Temporal worker on one task queue; all of Weft's workflow types are registered on each. */
export async function createWeftWorker(opts: WeftWorkerOptions): Promise<Worker> {
  const workflowSource: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = opts.workflowBundle
    ? { workflowBundle: opts.workflowBundle }
    : { workflowsPath: require.resolve('../../workflows') };
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: opts.activities,
    ...workflowSource,
    maxConcurrentActivityTaskExecutions: opts.maxConcurrentActivityTaskExecutions ?? 20,
  });
}
