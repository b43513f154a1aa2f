/**
 * A standalone sync worker process (`weft worker`): scale these horizontally. Reads the
 * same configuration as the API; needs TEMPORAL_ADDRESS and MONGODB_URI.
 */
import { loadConfig } from '../../common/config';
import { WeftError } from '../../common/errors';
import { createLogger } from '../../common/logger';
import { openCore } from '../core';
import { createEgress } from '../../egress/egress';
import { egressSettings } from '../../egress/settings';
import { buildWorkers } from './run-workers';
import { startExpirySweeper } from './expiry-sweeper';
import { resealWithCurrentKey } from '../../store/reseal';

export async function runWorkerProcess(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL).child({ component: 'worker' });
  if (!config.TEMPORAL_ADDRESS || !config.MONGODB_URI) {
    throw new WeftError(
      'worker_not_configured',
      'weft worker needs TEMPORAL_ADDRESS and MONGODB_URI (and WEFT_ENCRYPTION_KEY; in dev it is in .weft/encryption-key). `npm start` runs its own worker in-process.',
    );
  }
  const core = await openCore({
    mongodbUri: config.MONGODB_URI,
    dbName: config.MONGODB_DB,
    encryptionKey: config.WEFT_ENCRYPTION_KEY ?? '',
    requestLogTtlDays: config.WEFT_REQUEST_LOG_TTL_DAYS,
    serverSelectionTimeoutMs: config.WEFT_MONGODB_SELECTION_TIMEOUT_MS,
    log: logger,
  });
  const egress = createEgress(egressSettings(config));
  const workers = await buildWorkers(
    core,
    {
      temporalAddress: config.TEMPORAL_ADDRESS,
      namespace: config.TEMPORAL_NAMESPACE,
      syncTaskQueue: config.WEFT_SYNC_TASK_QUEUE,
      actionTaskQueue: config.WEFT_ACTION_TASK_QUEUE,
      maxInlineWaitMs: config.WEFT_MAX_INLINE_WAIT_MS,
      workflowBundlePath: config.WEFT_WORKFLOW_BUNDLE,
    },
    logger,
    egress,
  );
  // Worker.run() shuts down gracefully on SIGINT/SIGTERM by default.
  logger.info({ syncTaskQueue: config.WEFT_SYNC_TASK_QUEUE, actionTaskQueue: config.WEFT_ACTION_TASK_QUEUE, pid: process.pid }, 'weft worker running');
  const sweeper = startExpirySweeper(core.manualExpiry, logger);
  // A rotated WEFT_ENCRYPTION_KEY: move every stored secret to the new key in the background.
  resealWithCurrentKey(core.stores.db, core.cipher)
    .then((n) => n > 0 && logger.info({ resealed: n }, 'secrets re-sealed with the current encryption key'))
    .catch((err: unknown) => logger.warn({ err }, 'could not re-seal secrets with the current encryption key'));
  await workers.run();
  sweeper.stop();
  await workers.connection.close();
  await egress.close();
  await core.close();
}

if (require.main === module) {
  runWorkerProcess().catch((err) => {
    // eslint-disable-next-line no-console
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
