import { Context } from '@temporalio/activity';
import { ConflictError, WeftError } from '../common/errors';
import type { Logger } from '../common/logger';
import type { Stores } from '../store/db';
import type { ConnectionDoc } from '../store/connections';
import type { SyncOperationProgress } from '../store/sync-operations';
import { withActivityFailures } from './failures';
import type { FanOutBatchInput, FanOutBatchResult, SyncOperation } from './sync-operation-contracts';

/**
 * Applies one operation to one connection, exactly as the API does for a call naming that
 * connection ('skipped': nothing to do there, e.g. it has no such variant). The composition
 * root gives it (it starts workflows and changes schedules through the Temporal client).
 */
export type ApplySyncOperation = (
  connection: ConnectionDoc,
  operation: SyncOperation,
  opts: { waitWhileRunning: (isRunning: () => Promise<boolean>) => Promise<void> },
) => Promise<'applied' | 'skipped'>;

export interface SyncFanOutActivityDeps {
  stores: Stores;
  logger: Logger;
  applySyncOperation: ApplySyncOperation;
}

/** Connections of one batch worked on at once: each is a few Temporal and database calls. */
const CONNECTIONS_IN_FLIGHT = 10;
/** How long a reset waits for a sync's run in progress to end before that connection counts as failed. */
const RUN_WAIT_MS = 30 * 60_000;
const RUN_POLL_MS = 1_000;
/** Reasons kept in the operation's `errors` (the counts are complete). */
const ERRORS_KEPT = 10;

/** The activities of a background sync operation over every connection of an integration. */
export function createSyncFanOutActivities(deps: SyncFanOutActivityDeps) {
  return withActivityFailures({
    /**
     * Applies the operation to the next batch of connections and writes the running totals.
     * Idempotent: a retried batch starts from the totals it was given and writes absolute
     * values, and applying an operation twice to a connection does what once does.
     */
    async applySyncOperationBatch(input: FanOutBatchInput): Promise<FanOutBatchResult> {
      const activity = Context.current();
      const page = await deps.stores.connections.pageForIntegration(input.environment, input.providerConfigKey, {
        after: input.after,
        limit: input.batchSize,
      });
      const progress: SyncOperationProgress = { ...input.progress, errors: [...input.progress.errors] };
      // A reset waits for a run in progress to end (it cannot start over under it), heartbeating.
      const waitWhileRunning = async (isRunning: () => Promise<boolean>) => {
        for (const deadline = Date.now() + RUN_WAIT_MS; await isRunning();) {
          if (Date.now() > deadline) throw new ConflictError('sync_running', `The sync's run was still going after ${RUN_WAIT_MS / 60_000} minutes.`);
          activity.heartbeat();
          await activity.sleep(RUN_POLL_MS);
        }
      };
      const queue = [...page.connections];
      const worker = async () => {
        for (let connection = queue.shift(); connection; connection = queue.shift()) {
          try {
            const outcome = await deps.applySyncOperation(connection, input.operation, { waitWhileRunning });
            if (outcome === 'applied') progress.done++;
            else progress.skipped++;
          } catch (err) {
            // A refusal about this one connection is its outcome; anything else (Temporal or the
            // database out of reach) fails the batch, which Temporal retries.
            if (!(err instanceof WeftError) || err.retryable) throw err;
            progress.failed++;
            if (progress.errors.length < ERRORS_KEPT) progress.errors.push({ connection_id: connection.connection_id, code: err.code, message: err.message });
          }
          activity.heartbeat();
        }
      };
      await Promise.all(Array.from({ length: CONNECTIONS_IN_FLIGHT }, worker));
      await deps.stores.syncOperations.saveProgress(input.operationKey, progress, page.next === null ? 'finished' : 'running');
      return { after: page.next, progress };
    },

    /** Ends an operation the workflow had to give up on: what was done stays counted. */
    async abandonSyncOperation(input: { operationKey: string; progress: SyncOperationProgress; reason: string }): Promise<void> {
      deps.logger.warn({ operation: input.operationKey, reason: input.reason }, 'background sync operation stopped before the end');
      const errors = [...input.progress.errors, { connection_id: '', code: 'operation_abandoned', message: input.reason }];
      await deps.stores.syncOperations.saveProgress(input.operationKey, { ...input.progress, errors }, 'abandoned');
    },
  });
}
