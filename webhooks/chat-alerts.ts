import { randomUUID } from 'node:crypto';
import type { StoredConnection } from '../common/stored-documents';
import { alertScope, type AlertEpisode, type AlertMark } from '../store/alert-states';
import type { Stores } from '../store/db';
import { failureMessage, resolvedMessage, temporalRunUrl, type AlertSubject, type ChatMessage, type FailureAlert } from './chat-alert-messages';
import { eventIdFor } from './deliver';
import { queueWebhook, type OutboxDeps } from './outbox';
import type { FailedSyncRun, SucceededSyncRun, SyncRunEvents, SyncRunIdentity } from './sync-run-report';

/** What alerts without a run (a refused token refresh) need. */
export interface AlertWindowDeps extends OutboxDeps {
  stores: OutboxDeps['stores'] & Pick<Stores, 'alertStates'>;
  /** WEFT_ALERT_WINDOW_MINUTES: one message per connection, sync and error code within it. */
  windowMs: number;
}

export interface ChatAlertDeps extends AlertWindowDeps {
  /** WEFT_TEMPORAL_UI_URL: alerts link to the run there. */
  temporalUiUrl: string;
  /** TEMPORAL_NAMESPACE, part of the run's link. */
  temporalNamespace: string;
}

/** A refused token refresh (auth/'s `refreshFailed`): the connection needs its end user to authorize again. */
export interface ReauthorizationNeeded {
  connection: Pick<StoredConnection, '_id' | 'environment' | 'connection_id' | 'provider_config_key' | 'provider'>;
  code: string;
  message: string;
  at?: Date;
}

export interface ChatAlerts extends SyncRunEvents {
  needsReauthorization(event: ReauthorizationNeeded): Promise<void>;
}

/** A sync failing with it needs the end user, not the operator's patience: the alert says so. */
const REAUTHORIZE_CODE = 'provider_auth_failed';

/**
 * Chat alerts for operators, posted to the environment's `alert_webhook_url` (a Slack
 * incoming webhook or a compatible one) through the outbox, so they are retried like every
 * webhook. Per connection, sync and error code, one message per window: the first failure of
 * a window sends it, later ones are counted into the next message (the next window's first,
 * or the "resolved" one when the sync next succeeds). Several processes may report at once;
 * which of them sends is decided by an insert of the alert's key (store/alert-states.ts),
 * and event ids come from the episode, code and alert number, so a retried report queues
 * nothing new.
 */
export function createChatAlerts(deps: ChatAlertDeps): ChatAlerts {
  const runUrl = (run: { workflowId: string; runId: string }) => temporalRunUrl(deps.temporalUiUrl, deps.temporalNamespace, run.workflowId, run.runId);
  return {
    async failed(run: FailedSyncRun) {
      await reportFailure(deps, subjectOfRun(run), alertScope(run.connection, { name: run.syncName, variant: run.variant }), {
        run: run.runId,
        kind: run.error.code === REAUTHORIZE_CODE ? 'reauthorize' : 'sync_failed',
        code: run.error.code,
        message: run.error.message,
        at: run.failedAt,
        runUrl: runUrl(run),
      });
    },

    async succeeded(run: SucceededSyncRun) {
      const subject = subjectOfRun(run);
      const syncScope = alertScope(run.connection, { name: run.syncName, variant: run.variant });
      // A run that succeeded had working credentials: the connection's own episode (a refused refresh) is over too.
      const connectionScope = alertScope(run.connection, null);
      // Both looked up in one read: nearly always neither is open.
      const open = await deps.stores.alertStates.episodes([syncScope, connectionScope]);
      const sync = open.get(syncScope);
      if (sync) await resolve(deps, subject, sync, run.finishedAt, runUrl(run));
      const connection = open.get(connectionScope);
      if (connection) await resolve(deps, { ...subject, sync: null }, connection, run.finishedAt, runUrl(run));
    },

    ...reauthorizationAlerts(deps),
  };
}

/** The re-authorization alert alone, for the token refresher (webhooks/auth-events.ts). */
export function reauthorizationAlerts(deps: AlertWindowDeps): Pick<ChatAlerts, 'needsReauthorization'> {
  return {
    async needsReauthorization({ connection, code, message, at }) {
      const subject: AlertSubject = {
        environment: connection.environment,
        connectionId: connection.connection_id,
        providerConfigKey: connection.provider_config_key,
        provider: connection.provider,
        sync: null,
      };
      // Not a run: each refusal is a failure of its own (several processes may be refused at once).
      await reportFailure(deps, subject, alertScope(connection._id, null), {
        run: `refresh:${randomUUID()}`,
        kind: 'reauthorize',
        code,
        message,
        at: at ?? new Date(),
        runUrl: null,
      });
    },
  };
}

interface ReportedFailure {
  run: string;
  kind: FailureAlert['kind'];
  code: string;
  message: string;
  at: Date;
  runUrl: string | null;
}

async function reportFailure(deps: AlertWindowDeps, subject: AlertSubject, scope: string, failure: ReportedFailure): Promise<void> {
  // Nothing is kept for environments without an alert URL: their syncs' successes read nothing more than one key.
  const env = await deps.stores.environments.get(subject.environment);
  if (!env?.alert_webhook_url) return;
  const alerts = deps.stores.alertStates;
  const episode = await alerts.openEpisode(scope, failure.at);
  await alerts.recordFailure(episode, { run: failure.run, code: failure.code, at: failure.at });

  const marks = await alerts.alerts(episode, failure.code);
  const last = marks.at(-1);
  const retried = last !== undefined && last.run === failure.run;
  // Inside the window of the last alert: counted, told with the next message.
  if (!retried && last && failure.at.getTime() - last.at.getTime() < deps.windowMs) return;

  const failures = (await alerts.failures(episode)).filter((f) => f.at.getTime() <= failure.at.getTime());
  let mark: AlertMark;
  if (retried) {
    // This report again (a retried activity): its alert is queued again under the same id, which stores it once.
    mark = last;
  } else {
    // What this alert accounts for, counted before it is claimed: failures recorded meanwhile are the next one's.
    mark = { index: (last?.index ?? -1) + 1, run: failure.run, at: failure.at, reported: failures.filter((f) => f.code === failure.code).length };
    // Another process reporting another failure of this code took this alert: this failure is counted into the next one.
    if (!(await alerts.claimAlert(episode, failure.code, mark.index, mark))) return;
  }

  const previous = marks.filter((m) => m.index < mark.index).at(-1);
  const message = failureMessage(subject, {
    kind: failure.kind,
    code: failure.code,
    message: failure.message,
    at: failure.at,
    runUrl: failure.runUrl,
    sincePrevious: previous ? { count: Math.max(mark.reported - 1 - previous.reported, 0), at: previous.at } : null,
    failures: Math.max(failures.length, 1),
    since: episode.since,
  });
  await queueAlert(deps, subject.environment, eventIdFor('weft-alert', episode.episode, failure.code, String(mark.index)), message);
}

/** The episode of `scope` (if one is open) is over: "resolved", with its failures counted, then forgotten. */
async function resolve(deps: AlertWindowDeps, subject: AlertSubject, episode: AlertEpisode, at: Date, runUrl: string): Promise<void> {
  const alerts = deps.stores.alertStates;
  const failures = await alerts.failures(episode);
  if (failures.length > 0) {
    const byCode: Record<string, number> = {};
    for (const f of failures) byCode[f.code] = (byCode[f.code] ?? 0) + 1;
    const message = resolvedMessage(subject, { at, failures: byCode, since: episode.since, runUrl });
    // Queued before the episode is forgotten: a retry after a crash in between queues the same id again.
    await queueAlert(deps, subject.environment, eventIdFor('weft-alert-resolved', episode.episode), message);
  }
  await alerts.closeEpisode(episode);
}

async function queueAlert(deps: AlertWindowDeps, environment: string, id: string, message: ChatMessage): Promise<void> {
  await queueWebhook(deps, { environment, type: 'alert', payload: { ...message }, gate: null, id });
}

function subjectOfRun(run: SyncRunIdentity): AlertSubject {
  return {
    environment: run.environment,
    connectionId: run.connectionId,
    providerConfigKey: run.providerConfigKey,
    provider: run.provider,
    sync: { name: run.syncName, variant: run.variant },
  };
}
