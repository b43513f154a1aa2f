import type { SyncRunError, SyncRunType } from '../store/syncs';

/**
 * What a finished sync run tells the world outside the store: the app (`sync` webhooks,
 * sync-webhooks.ts) and the operators (chat alerts, chat-alerts.ts). Declared here, with its
 * senders (activities/ may import webhooks/, not the other way round); the runs' bookkeeping
 * activities call it, and Temporal may retry them: a sender must make a repeated call for
 * the same run change nothing more (derive event ids from `runId`).
 */
export interface SyncRunEvents {
  succeeded(run: SucceededSyncRun): Promise<void>;
  failed(run: FailedSyncRun): Promise<void>;
}

/** The sync of a connection a run is of: what the syncRun workflow is given (activities/sync-contracts.ts) and the events name. */
export interface SyncRunTarget {
  environment: string;
  /** ConnectionDoc._id */
  connection: string;
  connectionId: string;
  providerConfigKey: string;
  provider: string;
  syncName: string;
  variant: string;
}

/** The run, as the events name it. */
export interface SyncRunIdentity extends SyncRunTarget {
  /** The Temporal run id of the sync's workflow (also the sync run's id in the store). */
  runId: string;
  /** The sync's workflow id: with `runId`, the run's page in the Temporal UI. */
  workflowId: string;
  type: SyncRunType;
  startedAt: Date;
  /** The connection's `webhook_url_override`: the app's events go there instead of the environment's URLs. */
  webhookUrlOverride?: string | null;
}

/** One model's outcome of a successful run. */
export interface ModelChanges {
  model: string;
  added: number;
  updated: number;
  deleted: number;
  /**
   * A `GET /records` cursor just before the run's first change of this model: reading from
   * it returns the run's changes first, in change order. Null for a run started by an
   * earlier version, which did not note where its changes begin.
   */
  cursor: string | null;
}

export interface SucceededSyncRun extends SyncRunIdentity {
  finishedAt: Date;
  models: ModelChanges[];
}

export interface FailedSyncRun extends SyncRunIdentity {
  failedAt: Date;
  /** The sync's models: a failure is reported per model, as Nango's `sync` webhooks are. */
  models: string[];
  error: SyncRunError;
}

/** Each of several senders hears every run's end, one after the other. */
export function allSyncRunEvents(...senders: SyncRunEvents[]): SyncRunEvents {
  return {
    async succeeded(run) {
      for (const s of senders) await s.succeeded(run);
    },
    async failed(run) {
      for (const s of senders) await s.failed(run);
    },
  };
}
