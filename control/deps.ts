import type { Client } from '@temporalio/client';
import type { IntegrationRegistry } from '../runtime/registry';
import type { Stores } from '../store/db';

/**
 * What controlling syncs needs, declared here rather than taken from the API's or the
 * worker's own deps: the API's deps have all of it, and the worker builds it from its core
 * (app/worker/run-workers.ts) for background operations and the schedule reconcile pass.
 */
export interface ControlDeps {
  temporal: Client;
  registry: IntegrationRegistry;
  stores: Stores;
  settings: ControlSettings;
}

export interface ControlSettings {
  /** WEFT_TEMPORAL_ID_PREFIX: the first part of every workflow and schedule ID. */
  temporalIdPrefix: string;
  /** WEFT_SYNC_TASK_QUEUE: every workflow (syncs', actions', operations') runs on it. */
  syncTaskQueue: string;
  /** How long a sync's activity may go silent before Temporal hands it to another worker. */
  heartbeatTimeoutMs: number;
}

/** Functions that only read Temporal by ID need the client and the ID prefix. */
export type TemporalIdDeps = Pick<ControlDeps, 'temporal'> & { settings: Pick<ControlSettings, 'temporalIdPrefix'> };
