import type { SyncRunType } from '../store/syncs';
import { eventIdFor } from './deliver';
import type { FailedSyncRun, SucceededSyncRun, SyncRunEvents, SyncRunIdentity } from './sync-run-report';
import { queueWebhook, type OutboxDeps, type WebhookGate } from './outbox';

/** The `sync` webhook body, one per model. */
export interface SyncWebhookPayload {
  from: 'weft';
  type: 'sync';
  connectionId: string;
  providerConfigKey: string;
  syncName: string;
  syncVariant: string;
  model: string;
  syncType: SyncRunType;
  success: boolean;
  /** The run's start: records modified at or after it are the run's (GET /records?modified_after=). */
  modifiedAfter: string;
  /** Success: the records cursor where the run's changes begin (GET /records?cursor=). */
  cursor?: string;
  responseResults?: { added: number; updated: number; deleted: number };
  /** Failure: the run's stable code, its message, and the structured detail (the validation record of `invalid_sync_record`). */
  error?: { type: string; description: string; detail?: unknown };
  startedAt?: string;
  failedAt?: string;
}

function base(run: SyncRunIdentity, model: string): Omit<SyncWebhookPayload, 'success'> {
  return {
    from: 'weft',
    type: 'sync',
    connectionId: run.connectionId,
    providerConfigKey: run.providerConfigKey,
    syncName: run.syncName,
    syncVariant: run.variant,
    model,
    syncType: run.type,
    modifiedAfter: run.startedAt.toISOString(),
  };
}

/**
 * Tells the app what a sync run did, through the outbox (durable, retried for over a day):
 * per model, a success with changes always; one without changes only while
 * `send_sync_completion_always` is on; a failure while `send_sync_error_webhooks` is on. The
 * toggles are read when the event is queued and again at delivery. Event ids come from the
 * run and model, so a retried bookkeeping activity queues each event once.
 */
export function createSyncWebhooks(deps: OutboxDeps): SyncRunEvents {
  const queue = async (run: SyncRunIdentity, id: string, payload: SyncWebhookPayload, gate: WebhookGate | null) => {
    await queueWebhook(deps, {
      environment: run.environment,
      type: 'sync',
      payload: { ...payload },
      gate,
      urlOverride: run.webhookUrlOverride ?? null,
      connection: { providerConfigKey: run.providerConfigKey, connectionId: run.connectionId },
      id,
    });
  };

  return {
    async succeeded(run: SucceededSyncRun) {
      for (const m of run.models) {
        const changed = m.added + m.updated + m.deleted > 0;
        const payload: SyncWebhookPayload = {
          ...base(run, m.model),
          success: true,
          ...(m.cursor === null ? {} : { cursor: m.cursor }),
          responseResults: { added: m.added, updated: m.updated, deleted: m.deleted },
        };
        await queue(run, eventIdFor('sync', run.runId, m.model, 'success'), payload, changed ? null : 'send_sync_completion_always');
      }
    },

    async failed(run: FailedSyncRun) {
      const error = {
        type: run.error.code,
        description: run.error.message,
        ...(run.error.detail === undefined ? {} : { detail: run.error.detail }),
      };
      for (const model of run.models) {
        const payload: SyncWebhookPayload = {
          ...base(run, model),
          success: false,
          error,
          startedAt: run.startedAt.toISOString(),
          failedAt: run.failedAt.toISOString(),
        };
        await queue(run, eventIdFor('sync', run.runId, model, 'failure'), payload, 'send_sync_error_webhooks');
      }
    },
  };
}
