import { Context } from '@temporalio/activity';
import { NotFoundError } from '../common/errors';
import type { Logger } from '../common/logger';
import type { Stores } from '../store/db';
import { sealedAt, type CredentialCipher } from '../auth/credential-cipher';
import type { Credentials } from '../auth/credentials';
import type { IntegrationRegistry } from '../runtime/registry';
import { createWorkerSyncContext } from '../runtime/worker-context';
import type { MetadataStore } from '../runtime/base-context';
import type { OpenProviderSession } from './provider-session';
import { connectionInfo } from './connection-info';
import { readCheckpoint, type AttemptCheckpoint } from '../runtime/checkpoint';
import { withActivityFailures } from './failures';
import { recordSyncRunEnd } from './sync-metrics';
import type { ConnectionDoc } from '../store/connections';
import type { IntegrationDoc } from '../store/integrations';
import type { SyncRunEvents, SyncRunIdentity } from '../webhooks/sync-run-report';
import { recordCursorAfterSeq } from '../store/record-cursor';
import type { SyncRunDoc } from '../store/sync-runs';
import {
  BASE_VARIANT,
  type FailSyncRunInput,
  type FinishSyncRunInput,
  type RunSyncInput,
  type RunSyncResult,
  type StartedSyncRun,
  type SyncRunInput,
  type SyncRunSummary,
} from './sync-contracts';

export interface SyncActivityDeps {
  stores: Stores;
  cipher: CredentialCipher;
  registry: IntegrationRegistry;
  logger: Logger;
  /** Provider calls: credentials, throttle, budget, request log, egress (app/provider-session.ts). */
  openProviderSession: OpenProviderSession;
  /** Who hears how each run ended: the app's `sync` webhooks, chat alerts (wired in app/). */
  events: SyncRunEvents;
}

/** The activities of a sync run, given their dependencies (Temporal samples style). */
export function createSyncActivities(deps: SyncActivityDeps) {
  const { stores, registry } = deps;

  async function loadScope(input: SyncRunInput): Promise<{ connection: ConnectionDoc; integration: IntegrationDoc }> {
    const connection = await stores.connections.getById(input.connection);
    if (!connection || connection.environment !== input.environment) {
      throw new NotFoundError('unknown_connection', `Connection "${input.connectionId}" no longer exists.`);
    }
    const integration = await stores.integrations.get(input.environment, input.providerConfigKey);
    if (!integration) {
      throw new NotFoundError('unknown_provider_config', `Integration "${input.providerConfigKey}" no longer exists.`);
    }
    return { connection, integration };
  }

  function openCredentials(connection: ConnectionDoc): Credentials {
    return deps.cipher.open<Credentials>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection));
  }

  function metadataStore(connection: ConnectionDoc): MetadataStore {
    return {
      replace: (m) => stores.connections.updateMetadata(connection._id, m, 'replace'),
      merge: (m) => stores.connections.updateMetadata(connection._id, m, 'merge'),
    };
  }

  function syncDefinition(input: SyncRunInput) {
    const def = registry.getSync(input.provider, input.syncName);
    if (!def) throw new NotFoundError('unknown_sync', `Integration "${input.provider}" has no sync "${input.syncName}".`);
    return def;
  }

  /** The run as its events name it, with the connection's webhook override as `connection` has it. */
  function runIdentity(input: RunSyncInput, runDoc: SyncRunDoc | null, connection: ConnectionDoc | null): SyncRunIdentity {
    return {
      environment: input.environment,
      connection: input.connection,
      connectionId: input.connectionId,
      providerConfigKey: input.providerConfigKey,
      provider: input.provider,
      syncName: input.syncName,
      variant: input.variant,
      runId: input.run.runId,
      workflowId: runDoc?.workflow_id ?? '',
      type: input.run.type,
      startedAt: new Date(input.run.startedAt),
      webhookUrlOverride: connection?.webhook_url_override ?? null,
    };
  }

  async function startRun(input: SyncRunInput & { runId: string; workflowId: string }): Promise<StartedSyncRun> {
    const def = syncDefinition(input);
    const key = { connection: input.connection, name: input.syncName, variant: input.variant };
    // A base sync's state is made if missing (a connection of an earlier version); a variant's
    // only by POST /sync/:name/variant/:variant, so a run of a deleted one (a fire already on
    // its way as the variant went) stops here instead of bringing it back.
    const sync =
      input.variant === BASE_VARIANT
        ? await stores.syncs.ensure({
            environment: input.environment,
            connection: input.connection,
            connection_id: input.connectionId,
            provider_config_key: input.providerConfigKey,
            name: input.syncName,
            variant: input.variant,
          })
        : await stores.syncs.get(key);
    if (!sync) throw new NotFoundError('unknown_sync_variant', `Variant "${input.variant}" of sync "${input.syncName}" no longer exists.`);
    const type = sync.last_success_started_at ? 'INCREMENTAL' : 'INITIAL';
    // Where each model's changes of this run will begin: the records cursor of its `sync` webhook.
    const startSeqs: Record<string, number> = {};
    for (const model of Object.keys(def.models)) {
      startSeqs[model] = await stores.records.committedSeq({ environment: input.environment, connection: input.connection, model, variant: input.variant });
    }
    const run = await stores.syncRuns.start({
      _id: input.runId,
      workflow_id: input.workflowId,
      environment: input.environment,
      connection: input.connection,
      sync_name: input.syncName,
      variant: input.variant,
      type,
      started_at: new Date(),
      start_seqs: startSeqs,
    });
    await stores.syncs.markRunStarted(key, run._id, run.started_at);
    return startedRun(run, sync.last_success_started_at ?? null, def.syncType);
  }

  /** The integration's exec(ctx), resuming from `attempt`'s checkpoint; heartbeats it as it goes. */
  async function execRun(
    input: RunSyncInput,
    scope: { connection: ConnectionDoc; integration: IntegrationDoc },
    attempt: AttemptCheckpoint,
  ): Promise<RunSyncResult> {
    const activity = Context.current();
    const def = syncDefinition(input);
    const { connection, integration } = scope;
    const logger = deps.logger.child({ runId: input.run.runId, connectionId: input.connectionId, sync: input.syncName, attempt: activity.info.attempt });
    if (attempt.savedRecords > 0) logger.info({ savedRecords: attempt.savedRecords }, 'resuming sync from checkpoint');

    const session = deps.openProviderSession({
      environment: input.environment,
      integration,
      connection,
      credentials: openCredentials(connection),
      connectionId: input.connectionId,
      operation: `sync:${input.syncName}`,
      runId: input.run.runId,
      sleep: (ms) => sleepWithHeartbeat(activity, ms, attempt),
      signal: activity.cancellationSignal,
    });
    const syncKey = { connection: input.connection, name: input.syncName, variant: input.variant };
    const { ctx } = createWorkerSyncContext({
      scope: {
        environment: input.environment,
        connection: input.connection,
        variant: input.variant,
        runId: input.run.runId,
        lastSyncDate: input.run.lastSyncDate ? new Date(input.run.lastSyncDate) : null,
        models: def.models,
      },
      transport: session.client,
      providerPagination: session.provider.definition.pagination,
      records: stores.records,
      connection: connectionInfo(connection),
      metadata: metadataStore(connection),
      checkpointStore: {
        get: () => stores.syncs.getCheckpoint(syncKey),
        save: (value) => stores.syncs.saveCheckpoint(syncKey, value),
      },
      attempt,
      heartbeat: (details) => activity.heartbeat(details),
      logger,
    });
    await def.exec(ctx);
    return { savedRecords: attempt.savedRecords, trackDeletes: attempt.trackDeletes ?? [] };
  }

  async function finishRun(input: FinishSyncRunInput, connection: ConnectionDoc | null): Promise<SyncRunSummary> {
    const def = syncDefinition(input);
    const result: SyncRunSummary['result'] = {};
    const recordCount: SyncRunSummary['recordCount'] = {};
    for (const model of Object.keys(def.models)) {
      const scope = { environment: input.environment, connection: input.connection, model, variant: input.variant };
      const detectDeletes = def.syncType === 'full' || input.trackDeletes.includes(model);
      // Since the run's start: what an action saved meanwhile is not deleted for being unseen.
      const { live, ...changes } = await stores.records.finishScope(scope, input.run.runId, detectDeletes, new Date(), new Date(input.run.startedAt));
      result[model] = changes;
      recordCount[model] = live;
    }
    const runDoc = await stores.syncRuns.finish(input.run.runId, { status: 'SUCCESS', result });
    await stores.syncs.markRunSucceeded(
      { connection: input.connection, name: input.syncName, variant: input.variant },
      { id: input.run.runId, startedAt: new Date(input.run.startedAt), result, recordCount },
    );
    recordSyncRunEnd({ provider: input.provider, syncName: input.syncName, outcome: 'success', startedAt: input.run.startedAt, changes: result });
    await deps.events.succeeded({
      ...runIdentity(input, runDoc, connection),
      finishedAt: runDoc?.finished_at ?? new Date(),
      models: Object.entries(result).map(([model, changes]) => {
        const startSeq = runDoc?.start_seqs?.[model];
        return { model, ...changes, cursor: startSeq === undefined ? null : recordCursorAfterSeq(startSeq) };
      }),
    });
    const changed = Object.values(result).some((c) => c.added + c.updated + c.deleted > 0);
    return { runId: input.run.runId, type: input.run.type, result, recordCount, changed };
  }

  // Whatever an activity throws reaches the workflow as toActivityFailure made it (stable code, retry decision).
  return withActivityFailures({
    /**
     * A whole run in one activity: opens it (idempotent on retry), runs the integration's
     * exec from the attempt's checkpoint, then ends it (delete detection, counts, events).
     * One activity task instead of three, and one read of the connection and integration.
     * Heartbeats throughout, so a worker that dies in any part of it is noticed within the
     * heartbeat timeout. Once exec has finished, the checkpoint says so: an attempt retried
     * after that (a failed end) only ends the run.
     */
    async performSyncRun(input: SyncRunInput & { runId: string; workflowId: string }): Promise<SyncRunSummary> {
      const activity = Context.current();
      const attempt = readCheckpoint(activity.info.heartbeatDetails);
      return whileHeartbeating(activity, attempt, async () => {
        const scope = await loadScope(input);
        const loadedAt = Date.now();
        const run = await startRun(input);
        if (!attempt.execDone) {
          await execRun({ ...input, run }, scope, attempt);
          attempt.execDone = true;
          activity.heartbeat(attempt);
        }
        // The connection as it is now, for the webhook override its events go to: read again
        // unless it was read moments ago (it may have changed during a long run).
        const connection = Date.now() - loadedAt < FRESH_CONNECTION_MS ? scope.connection : await stores.connections.getById(input.connection);
        return finishRun({ ...input, run, trackDeletes: attempt.trackDeletes ?? [] }, connection);
      });
    },

    /** Checks the connection and opens the run's records (idempotent on retry). Runs of older histories only. */
    async startSyncRun(input: SyncRunInput & { runId: string; workflowId: string }): Promise<StartedSyncRun> {
      await loadScope(input);
      return startRun(input);
    },

    /** Runs the integration's exec(ctx). Long; heartbeats its checkpoint. Runs of older histories only. */
    async runSync(input: RunSyncInput): Promise<RunSyncResult> {
      return execRun(input, await loadScope(input), readCheckpoint(Context.current().info.heartbeatDetails));
    },

    /** Delete detection (complete full runs only), counts, and the run's final state. Runs of older histories only. */
    async finishSyncRun(input: FinishSyncRunInput): Promise<SyncRunSummary> {
      return finishRun(input, await stores.connections.getById(input.connection));
    },

    /**
     * Records a run's failure. Given the run's id only (performSyncRun's runs), it reads the
     * run it opened; a run that never opened (its connection was gone) has nothing to record.
     */
    async failSyncRun(input: FailSyncRunInput): Promise<void> {
      const runDoc = await stores.syncRuns.finish(input.run?.runId ?? input.runId ?? '', { status: 'ERROR', error: input.error });
      if (!runDoc) return;
      const run = input.run ?? startedRun(runDoc, null, syncDefinition(input).syncType);
      await stores.syncs.markRunFailed(
        { connection: input.connection, name: input.syncName, variant: input.variant },
        { id: run.runId, startedAt: new Date(run.startedAt), error: input.error },
      );
      if (input.error.code === 'provider_auth_failed') {
        await stores.connections.markNeedsReauthorization(input.connection, input.error.message);
      }
      recordSyncRunEnd({ provider: input.provider, syncName: input.syncName, outcome: 'error', startedAt: run.startedAt });
      await deps.events.failed({
        ...runIdentity({ ...input, run }, runDoc, await stores.connections.getById(input.connection)),
        failedAt: runDoc.finished_at ?? new Date(),
        // A sync removed from its integration since the run began still has its failure recorded.
        models: Object.keys(registry.getSync(input.provider, input.syncName)?.models ?? {}),
        error: input.error,
      });
    },
  });
}

/** A connection read this recently is taken as current at the run's end. */
const FRESH_CONNECTION_MS = 5_000;

function startedRun(run: SyncRunDoc, lastSuccessStartedAt: Date | null, syncType: StartedSyncRun['syncType']): StartedSyncRun {
  return { runId: run._id, startedAt: run.started_at.toISOString(), lastSyncDate: lastSuccessStartedAt?.toISOString() ?? null, type: run.type, syncType };
}

/**
 * Heartbeats `details` every few seconds while `work` runs, besides the heartbeats the work
 * sends itself: the parts of a run that do not page (opening it, delete detection at its end)
 * may take longer than the heartbeat timeout on a big scope.
 */
async function whileHeartbeating<T>(activity: Context, details: AttemptCheckpoint, work: () => Promise<T>): Promise<T> {
  const everyMs = Math.max(1_000, Math.floor((activity.info.heartbeatTimeoutMs ?? 30_000) / 3));
  const timer = setInterval(() => activity.heartbeat(details), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

export type SyncActivities = ReturnType<typeof createSyncActivities>;

/** Sleeps in slices, heartbeating, so a short heartbeat timeout survives an inline wait. */
async function sleepWithHeartbeat(activity: Context, ms: number, details: unknown): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    activity.heartbeat(details);
    await activity.sleep(Math.min(1_000, end - Date.now()));
  }
}
