import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';

export interface WeftWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: object;
  /** Whether it runs workflows too (each workflow-running worker has a V8 isolate of its own: ~30 MB). */
  workflows: boolean;
  /** A prebuilt bundle (tests bundle once and share it); otherwise workflows/ is bundled now. */
  workflowBundle?: { code: string };
  maxConcurrentActivityTaskExecutions?: number;
}

/** One Temporal worker on one task queue; with `workflows`, all of Weft's workflow types are registered on it. */
export async function createWeftWorker(opts: WeftWorkerOptions): Promise<Worker> {
  const workflowSource: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = !opts.workflows
    ? {}
    : opts.workflowBundle
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
