import { readFileSync } from 'node:fs';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { Logger } from '../../common/logger';
import type { Core } from '../core';
import { providerSessionOpener } from '../provider-session';
import { connectOrExplain, temporalConnectionOptions } from '../temporal-connection';
import { createSyncActivities } from '../../activities/sync-activities';
import { createActionActivities } from '../../activities/action-activities';
import { createWeftWorker } from './create-worker';
import { prebuiltWorkflowBundle } from './prebuilt-bundle';
import { startExpirySweeper } from './expiry-sweeper';
import { startWebhookDispatcher, type WebhookDispatcher } from '../../webhooks/dispatcher';
import { coreWebhookDelivery } from '../webhook-delivery';
import { createWebhookDeliveryActivities } from '../../activities/webhook-delivery';
import { reconcileSyncSchedules, applySyncOperation, recordRoutesOfEarlierConnections, startProviderDeliveryProcessor, type ControlDeps } from '../../control';
import { rebuildTallies } from '../../store/integration-tallies';
import { createSyncFanOutActivities } from '../../activities/sync-fan-out';
import { allSyncRunEvents } from '../../webhooks/sync-run-report';
import { createSyncWebhooks } from '../../webhooks/sync-webhooks';
import { createChatAlerts } from '../../webhooks/chat-alerts';
import { createActionCompletionActivities } from '../../activities/action-completion';
import { createSubscriptionActivities } from '../../activities/subscription-activities';
import { createSyncWebhookHandler } from '../../activities/provider-webhook-handler';

export interface WeftWorkers {
  sync: Worker;
  action: Worker;
  connection: NativeConnection;
  /**
   * Runs both until shutdown() (or a signal), with the process's webhook dispatcher (due
   * events: first attempts, workflows for the failed) and expiry sweeper alongside; resolves when both workers have stopped.
   */
  run(): Promise<void>;
  shutdown(): void;
}

/**
 * The two workers of a Weft worker process, on the core's configuration (TEMPORAL_*,
 * WEFT_SYNC_TASK_QUEUE, WEFT_ACTION_TASK_QUEUE, WEFT_MAX_INLINE_WAIT_MS, WEFT_WORKFLOW_BUNDLE):
 * every workflow on the sync queue (one workflow isolate per process: ~30 MB each), the
 * action activities on their own queue, so an interactive action never queues behind a
 * sync's work. Every provider call of their activities goes out through the core's egress.
 */
export async function buildWorkers(core: Core, opts: { logger?: Logger } = {}): Promise<WeftWorkers> {
  const { config } = core;
  const logger = opts.logger ?? core.logger;
  const connection = await connectOrExplain(config.temporal, () => NativeConnection.connect(temporalConnectionOptions(config.temporal)));
  // Webhook events go out through their webhookDelivery workflows, on the sync queue with the other workflows.
  const startWebhookDelivery = coreWebhookDelivery(core);
  const sessionDeps = {
    startWebhookDelivery,
    stores: core.stores,
    cipher: core.cipher,
    registry: core.registry,
    logger,
    maxInlineWaitMs: config.WEFT_MAX_INLINE_WAIT_MS,
    egress: core.egress,
    alertWindowMs: config.WEFT_ALERT_WINDOW_MINUTES * 60_000,
  };
  const webhookDeps = { stores: core.stores, cipher: core.cipher, logger, egress: core.egress.webhooks };
  // Events this process stores (a run's `sync` events, alerts) wake its dispatcher at once.
  let dispatcher: WebhookDispatcher | null = null;
  const outboxDeps = { ...webhookDeps, startDelivery: startWebhookDelivery, wakeDispatcher: () => dispatcher?.wake() };
  // How runs end reaches the app (`sync` webhooks) and the operators, each event through the outbox.
  const chatAlerts = createChatAlerts({
    ...outboxDeps,
    temporalUiUrl: config.WEFT_TEMPORAL_UI_URL,
    temporalNamespace: config.TEMPORAL_NAMESPACE,
    windowMs: config.WEFT_ALERT_WINDOW_MINUTES * 60_000,
  });
  const syncRunEvents = allSyncRunEvents(createSyncWebhooks(outboxDeps), chatAlerts);
  const activityDeps = { stores: core.stores, cipher: core.cipher, registry: core.registry, logger, openProviderSession: providerSessionOpener(sessionDeps) };
  const controlDeps = syncControlDeps(core);
  // A background operation over every connection applies to each what the API applies to one.
  const fanOutActivities = createSyncFanOutActivities({
    stores: core.stores,
    logger,
    applySyncOperation: (connection, operation, opts) => applySyncOperation(controlDeps, connection, operation, opts),
  });
  // A compiled worker uses the bundle built with it: webpack at start costs seconds and memory.
  const bundleFile = config.WEFT_WORKFLOW_BUNDLE || prebuiltWorkflowBundle({ traced: Boolean(core.telemetry?.spanProcessor) });
  const workflowBundle = bundleFile ? { code: readFileSync(bundleFile, 'utf8') } : undefined;
  const common = { connection, namespace: config.TEMPORAL_NAMESPACE, workflowBundle, telemetry: core.telemetry, payloadCodec: core.payloadCodec };
  try {
    // Every workflow (syncs' and actions') on the sync queue; the action queue has activities only.
    const sync = await createWeftWorker({
      ...common,
      workflows: true,
      taskQueue: config.WEFT_SYNC_TASK_QUEUE,
      activities: {
        ...createSyncActivities({ ...activityDeps, events: syncRunEvents }),
        ...createActionCompletionActivities(outboxDeps),
        ...fanOutActivities,
        ...createWebhookDeliveryActivities(webhookDeps),
        ...createSubscriptionActivities({ ...activityDeps, publicUrl: config.WEFT_PUBLIC_URL }),
      },
    });
    const action = await createWeftWorker({
      ...common,
      workflows: false,
      taskQueue: config.WEFT_ACTION_TASK_QUEUE,
      activities: createActionActivities(activityDeps),
    });
    return {
      sync,
      action,
      connection,
      async run() {
        // Webhook events whose workflow could not be started (Temporal was down) get it from here.
        // Due webhook events: their first attempt from here, the retries of failed ones by their workflows.
        dispatcher = startWebhookDispatcher({ ...outboxDeps, logger: logger.child({ component: 'webhook-dispatcher' }) });
        const expiry = startExpirySweeper(core.manualExpiry, logger.child({ component: 'expiry-sweeper' }));
        // Provider webhook deliveries the API stored: forwarded to the app, and the syncs they concern run.
        const deliveryDeps = {
          ...controlDeps,
          outbox: outboxDeps,
          logger: logger.child({ component: 'provider-deliveries' }),
          handleWithSync: createSyncWebhookHandler(activityDeps),
        };
        const deliveries = startProviderDeliveryProcessor(deliveryDeps);
        // Connections stored before provider webhooks existed get their routes, once per database.
        recordRoutesOfEarlierConnections(deliveryDeps).then(
          (connections) => {
            if (connections) logger.info({ connections }, 'provider webhook routes recorded for earlier connections');
          },
          (err: unknown) => logger.warn({ err }, 'could not record the provider webhook routes of earlier connections; the next start tries again'),
        );
        const reconciled = reconcileSchedules(core, logger.child({ component: 'schedule-reconcile' }));
        try {
          await Promise.all([sync.run(), action.run()]);
        } finally {
          // A first attempt in progress ends (its lease covers a process that dies meanwhile).
          await deliveries.stop();
          await dispatcher.stop();
          dispatcher = null;
          expiry.stop();
          await reconciled;
        }
      },
      shutdown() {
        for (const w of [sync, action]) if (w.getState() === 'RUNNING') w.shutdown();
      },
    };
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Every sync's schedule brought in line with this worker's code (a changed default
 * frequency, a connection of an earlier version without schedules), in the background
 * while the worker already runs; then the integrations' tallies (what their status counts)
 * repaired from the documents. Never fails the worker: what fails is logged and retried at
 * the next start. The report line counts what was checked, created, updated, retried and
 * failed.
 */
async function reconcileSchedules(core: Core, logger: Logger): Promise<void> {
  try {
    const report = await reconcileSyncSchedules(syncControlDeps(core), {
      onError: (state, err) => logger.warn({ err, syncState: state._id }, 'could not reconcile the schedule of a sync'),
    });
    logger.info(report, 'sync schedules reconciled');
  } catch (err) {
    logger.warn({ err }, 'sync schedule reconcile pass stopped');
  }
  try {
    const started = Date.now();
    const tallies = await rebuildTallies(core.stores.db, core.stores.tallies);
    logger.info({ ...tallies, ms: Date.now() - started }, 'integration tallies rebuilt');
  } catch (err) {
    logger.warn({ err }, 'integration tally rebuild stopped');
  }
}

/** Starting sync runs and changing schedules from the worker, on the core's Temporal client. */
function syncControlDeps(core: Core): ControlDeps {
  const { config } = core;
  return {
    temporal: core.temporal,
    registry: core.registry,
    stores: core.stores,
    settings: {
      temporalIdPrefix: config.WEFT_TEMPORAL_ID_PREFIX,
      syncTaskQueue: config.WEFT_SYNC_TASK_QUEUE,
      heartbeatTimeoutMs: config.WEFT_SYNC_HEARTBEAT_TIMEOUT_MS,
    },
  };
}
