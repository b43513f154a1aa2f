/**
 * A standalone sync worker process (`weft worker`): scale these horizontally. Reads the
 * same configuration as the API; needs TEMPORAL_ADDRESS, MONGODB_URI and WEFT_ENCRYPTION_KEY.
 */
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { buildCore, buildRegistry, requireServers } from '../core';
import { describeFailure } from '../process-exit';
import { resealInBackground } from '../reseal';
import { buildWorkers } from './run-workers';

export async function runWorkerProcess(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  requireServers(config, 'worker');
  // The registry first: the logger redacts every secret header its providers declare.
  const registry = buildRegistry(config);
  const logger = createLogger(config.LOG_LEVEL, undefined, { secretHeaders: registry.secretHeaders() }).child({ component: 'worker' });
  const core = await buildCore(config, { logger, watchLog: logger, registry });
  try {
    resealInBackground(core);
    const workers = await buildWorkers(core);
    // Worker.run() shuts down gracefully on SIGINT/SIGTERM by default.
    logger.info({ syncTaskQueue: config.WEFT_SYNC_TASK_QUEUE, actionTaskQueue: config.WEFT_ACTION_TASK_QUEUE, pid: process.pid }, 'weft worker running');
    try {
      await workers.run();
    } finally {
      await workers.connection.close();
    }
  } finally {
    await core.close();
  }
}

if (require.main === module) {
  runWorkerProcess().catch((err: unknown) => {
    console.error(describeFailure(err));
    process.exit(1);
  });
}
