import { ActivityFailure, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { createSyncFanOutActivities } from '../activities/sync-fan-out';
import type { SyncFanOutInput } from '../activities/sync-operation-contracts';
import type { SyncOperationProgress } from '../store/sync-operations';

type FanOutActivities = ReturnType<typeof createSyncFanOutActivities>;

/** Connections per activity: each batch is one activity, its progress one write. */
const BATCH_SIZE = 50;
/** Batches per workflow run before it continues as new, keeping the history short (~6 events a batch). */
const BATCHES_PER_RUN = 100;

/**
 * A trigger, reset, start or pause of every connection of an integration, in the
 * background: the API answers at once and this walks the connections batch by batch,
 * writing progress that GET /sync/status shows. A crash anywhere resumes at the batch it
 * was in; a batch that keeps failing (Temporal or the database gone for minutes) ends the
 * operation as ERROR with what it had done.
 */
export async function syncFanOut(input: SyncFanOutInput): Promise<SyncOperationProgress> {
  const { applySyncOperationBatch } = proxyActivities<FanOutActivities>({
    // A reset can wait for runs in progress (up to 30 min each); the heartbeat notices a dead worker.
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 12 },
  });
  const { abandonSyncOperation } = proxyActivities<FanOutActivities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });

  let { after, progress } = input;
  for (let batch = 0; batch < BATCHES_PER_RUN; batch++) {
    try {
      ({ after, progress } = await applySyncOperationBatch({ ...input, after, progress, batchSize: BATCH_SIZE }));
    } catch (err) {
      const reason = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
      await abandonSyncOperation({ operationKey: input.operationKey, progress, reason });
      throw err;
    }
    if (after === null) return progress;
  }
  return continueAsNew<typeof syncFanOut>({ ...input, after, progress });
}
