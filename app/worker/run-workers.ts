import { readFileSync } from 'node:fs';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Logger } from '../../common/logger';
import type { Core } from '../core';
import type { Egress } from '../../egress/egress';
import { createSyncActivities } from '../../activities/sync-activities';
import { createActionActivities } from '../../activities/action-activities';
import { createWeftWorker } from './create-worker';
import { startWebhookSweeper } from '../../webhooks/outbox';

export interface WorkerSettings {
  temporalAddress: string;
  namespace: string;
  syncTaskQueue: string;
  actionTaskQueue: string;
  maxInlineWaitMs: number;
  workflowBundlePath?: string;
}

export interface WeftWorkers {
  sync: Worker;
  action: Worker;
  connection: NativeConnection;
  /** Runs both until shutdown() (or a signal); resolves when both have stopped. */
  run(): Promise<void>;
  shutdown(): void;
}

/**
 * Connects to Temporal and builds the two workers of a Weft worker process: syncs and
 * actions on separate task queues, so an interactive action never queues behind a sync.
 * While they run, the process also sweeps the webhook outbox (webhooks/outbox.ts).
 * Every provider call of their activities goes out through `egress`.
 */
export async function buildWorkers(core: Core, settings: WorkerSettings, logger: Logger, egress: Egress): Promise<WeftWorkers> {
  const connection = await NativeConnection.connect({ address: settings.temporalAddress });
  const activityDeps = { stores: core.stores, cipher: core.cipher, registry: core.registry, logger, maxInlineWaitMs: settings.maxInlineWaitMs, egress };
  const workflowBundle = settings.workflowBundlePath ? { code: readFileSync(settings.workflowBundlePath, 'utf8') } : undefined;
  const common = { connection, namespace: settings.namespace, workflowBundle };
  const sync = await createWeftWorker({ ...common, taskQueue: settings.syncTaskQueue, activities: createSyncActivities(activityDeps) });
  const action = await createWeftWorker({ ...common, taskQueue: settings.actionTaskQueue, activities: createActionActivities(activityDeps) });
  return {
    sync,
    action,
    connection,
    async run() {
      // Webhooks left undelivered (failed rounds, or a process that died mid-delivery) go out from here.
      const webhooks = startWebhookSweeper({ stores: core.stores, cipher: core.cipher, logger: logger.child({ component: 'webhook-sweeper' }), egress });
      try {
        await Promise.all([sync.run(), action.run()]);
      } finally {
        webhooks.stop();
      }
    },
    shutdown() {
      for (const w of [sync, action]) if (w.getState() === 'RUNNING') w.shutdown();
    },
  };
}
