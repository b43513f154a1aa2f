import { readFileSync } from 'node:fs';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Logger } from '../common/logger';
import type { Core } from '../common/core';
import { createSyncActivities } from '../activities/sync-activities';
import { createSyncWorker } from './create-worker';

export interface SyncWorkerSettings {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  maxInlineWaitMs: number;
  workflowBundlePath?: string;
}

/** Connects to Temporal and builds the sync worker with its activities wired to `core`. */
export async function buildSyncWorker(core: Core, settings: SyncWorkerSettings, logger: Logger): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: settings.temporalAddress });
  const activities = createSyncActivities({
    stores: core.stores,
    cipher: core.cipher,
    registry: core.registry,
    logger,
    maxInlineWaitMs: settings.maxInlineWaitMs,
  });
  const worker = await createSyncWorker({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities,
    workflowBundle: settings.workflowBundlePath ? { code: readFileSync(settings.workflowBundlePath, 'utf8') } : undefined,
    logger,
  });
  return { worker, connection };
}
