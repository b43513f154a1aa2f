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
import { readCheckpoint } from '../runtime/checkpoint';
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

  /** The run as its events name it; the connection's override is read now (it may have changed since the run began). */
  async function runIdentity(input: RunSyncInput, runDoc: SyncRunDoc | null): Promise<SyncRunIdentity> {
    const connection = await stores.connections.getById(input.connection);
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

  // Whatever an activity throws reaches the workflow as toActivityFailure made it (stable code, retry decision).
  return withActivityFailures({
    /** Checks the connection and opens the run's records (idempotent on retry). */
    async startSyncRun(input: SyncRunInput & { runId: string; workflowId: string }): Promise<StartedSyncRun> {
      const def = syncDefinition(input);
      await loadScope(input);
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
      return {
        runId: run._id,
        startedAt: run.started_at.toISOString(),
        lastSyncDate: sync.last_success_started_at?.toISOString() ?? null,
        type: run.type,
        syncType: def.syncType,
      };
    },

    /** Runs the integration's exec(ctx). Long; heartbeats its checkpoint. */
    async runSync(input: RunSyncInput): Promise<RunSyncResult> {
      const activity = Context.current();
      const def = syncDefinition(input);
      const { connection, integration } = await loadScope(input);
      const logger = deps.logger.child({ runId: input.run.runId, connectionId: input.connectionId, sync: input.syncName, attempt: activity.info.attempt });
      const attempt = readCheckpoint(activity.info.heartbeatDetails);
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
    },

    /** Delete detection (complete full runs only), counts, and the run's final state. */
    async finishSyncRun(input: FinishSyncRunInput): Promise<SyncRunSummary> {
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
      await stores.syncRuns.finish(input.run.runId, { status: 'SUCCESS', result });
      await stores.syncs.markRunSucceeded(
        { connection: input.connection, name: input.syncName, variant: input.variant },
        { id: input.run.runId, startedAt: new Date(input.run.startedAt), result, recordCount },
      );
      recordSyncRunEnd({ provider: input.provider, syncName: input.syncName, outcome: 'success', startedAt: input.run.startedAt, changes: result });
      const runDoc = await stores.syncRuns.get(input.run.runId);
      await deps.events.succeeded({
        ...(await runIdentity(input, runDoc)),
        finishedAt: runDoc?.finished_at ?? new Date(),
        models: Object.entries(result).map(([model, changes]) => {
          const startSeq = runDoc?.start_seqs?.[model];
          return { model, ...changes, cursor: startSeq === undefined ? null : recordCursorAfterSeq(startSeq) };
        }),
      });
      const changed = Object.values(result).some((c) => c.added + c.updated + c.deleted > 0);
      return { runId: input.run.runId, type: input.run.type, result, recordCount, changed };
    },

    async failSyncRun(input: FailSyncRunInput): Promise<void> {
      await stores.syncRuns.finish(input.run.runId, { status: 'ERROR', error: input.error });
      await stores.syncs.markRunFailed(
        { connection: input.connection, name: input.syncName, variant: input.variant },
        { id: input.run.runId, startedAt: new Date(input.run.startedAt), error: input.error },
      );
      if (input.error.code === 'provider_auth_failed') {
        await stores.connections.markNeedsReauthorization(input.connection, input.error.message);
      }
      recordSyncRunEnd({ provider: input.provider, syncName: input.syncName, outcome: 'error', startedAt: input.run.startedAt });
      const runDoc = await stores.syncRuns.get(input.run.runId);
      await deps.events.failed({
        ...(await runIdentity(input, runDoc)),
        failedAt: runDoc?.finished_at ?? new Date(),
        // A sync removed from its integration since the run began still has its failure recorded.
        models: Object.keys(registry.getSync(input.provider, input.syncName)?.models ?? {}),
        error: input.error,
      });
    },
  });
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
