/**
 * A standalone sync worker process (`weft worker`): scale these horizontally. Reads the
 * same configuration as the API; needs TEMPORAL_ADDRESS, MONGODB_URI and WEFT_ENCRYPTION_KEY.
 */
// First: OpenTelemetry must hook module loading before anything requires mongodb.
import '../telemetry-preload';
import { loadConfig } from '../../common/config';
import { buildCore, requireServers } from '../core';
import { describeFailure } from '../process-exit';
import { resealInBackground } from '../reseal';
import { buildWorkers, type WeftWorkers } from './run-workers';
import { startWorkerHealthServer, workerReadiness } from './health-server';
import { Runtime } from '@temporalio/worker';
import { startTelemetry, temporalRuntimeTelemetry } from '../telemetry';

export async function runWorkerProcess(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  requireServers(config, 'worker');
  const telemetry = startTelemetry(config, 'weft-worker');
  const runtimeTelemetry = temporalRuntimeTelemetry(config);
  // Before any connection: the worker's own metrics, when OTEL_* configures metrics. Otherwise
  // the Runtime Temporal makes itself at the first connection: installed here up front, a
  // SIGTERM ended the process at once instead of draining (tests/production/multi-process).
  if (runtimeTelemetry) Runtime.install({ telemetryOptions: runtimeTelemetry });
  // The probes first (when configured), so a slow start reads as alive and not ready.
  let workers: WeftWorkers | null = null;
  const health =
    config.WEFT_WORKER_HEALTH_PORT === undefined
      ? null
      : await startWorkerHealthServer({
          port: config.WEFT_WORKER_HEALTH_PORT,
          host: config.WEFT_WORKER_HEALTH_HOST,
          readiness: () => workerReadiness(workers?.sync.getState() ?? null, workers?.action.getState() ?? null),
        });
  try {
    const core = await buildCore(config, { log: { component: 'worker' }, watchDatabase: true, telemetry });
    const { logger } = core;
    if (health) logger.info({ url: health.url }, 'weft worker health endpoint listening');
    try {
      resealInBackground(core);
      workers = await buildWorkers(core);
      // Worker.run() shuts down gracefully on SIGINT/SIGTERM by default; readiness answers
      // 503 shutting_down from then until the process has closed everything.
      logger.info(
        { syncTaskQueue: config.WEFT_SYNC_TASK_QUEUE, actionTaskQueue: config.WEFT_ACTION_TASK_QUEUE, pid: process.pid, healthUrl: health?.url },
        'weft worker running',
      );
      try {
        await workers.run();
      } finally {
        await workers.connection.close();
      }
    } finally {
      await core.close();
      await telemetry?.shutdown();
    }
  } finally {
    await health?.close();
  }
}

if (require.main === module) {
  runWorkerProcess().catch((err: unknown) => {
    console.error(describeFailure(err));
    process.exit(1);
  });
}
