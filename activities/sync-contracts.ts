/**
 * What the syncRun workflow passes to its activities and gets back. Only ids and
 * summaries: records and credentials never travel through workflow history.
 */
import type { ModelCounts, SyncRunError, SyncRunType } from '../store/syncs';
import type { SyncRunTarget } from '../webhooks/sync-run-report';

/** The variant every sync has; others are made by POST /sync/:name/variant/:variant. */
export const BASE_VARIANT = 'base';

export interface SyncRunInput extends SyncRunTarget {
  /** How long runSync may go silent before Temporal hands it to another worker. */
  heartbeatTimeoutMs: number;
}

export interface StartedSyncRun {
  runId: string;
  startedAt: string;
  lastSyncDate: string | null;
  type: SyncRunType;
  syncType: 'full' | 'incremental';
}

export interface RunSyncInput extends SyncRunInput {
  run: StartedSyncRun;
}

export interface RunSyncResult {
  savedRecords: number;
  /** Models the run declared with ctx.trackDeletes: unseen records are deleted at the end. */
  trackDeletes: string[];
}

export interface FinishSyncRunInput extends RunSyncInput {
  trackDeletes: string[];
}

export interface SyncRunSummary {
  runId: string;
  type: SyncRunType;
  result: ModelCounts;
  recordCount: Record<string, number>;
  changed: boolean;
}

export interface FailSyncRunInput extends SyncRunInput {
  /** The run as startSyncRun opened it (histories of three activities) ... */
  run?: StartedSyncRun;
  /** ... or its id alone (performSyncRun's runs, which open it inside the activity). */
  runId?: string;
  error: SyncRunError;
}

/** What a sync's schedule starts on each fire (workflows/scheduled-sync.ts). */
export interface ScheduledSyncInput {
  /** The sync's one fixed run ID, the same that POST /sync/trigger starts. */
  syncWorkflowId: string;
  run: SyncRunInput;
}

export type ScheduledSyncOutcome = { ran: true; summary: SyncRunSummary } | { ran: false; reason: 'already_running' };
