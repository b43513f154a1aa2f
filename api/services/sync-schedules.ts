import { ScheduleAlreadyRunning, ScheduleNotFoundError, type ScheduleDescription, type ScheduleOptions } from '@temporalio/client';
import type { ConnectionDoc } from '../../store/connections';
import type { SyncDoc } from '../../store/syncs';
import type { ScheduledSyncInput } from '../../activities/sync-contracts';
import type { ApiDeps } from '../deps';
import {
  connectionSyncWorkflowId,
  DEFAULT_VARIANT,
  ensureSyncStates,
  startSyncRun,
  syncRunInput,
  syncSearchAttributes,
  type SyncSelector,
} from './sync-control';
import { frequencyLabel, parseFrequency } from './sync-frequency';

/** What managing a sync's schedule needs (the API has it; the worker's reconcile pass builds it). */
export type ScheduleDeps = Pick<ApiDeps, 'temporal' | 'registry'> & {
  settings: Pick<ApiDeps['settings'], 'temporalIdPrefix' | 'syncTaskQueue' | 'heartbeatTimeoutMs'>;
};

/** Stable per (environment, integration, connection, sync, variant), like the sync's run ID. */
function syncScheduleId(deps: { settings: Pick<ApiDeps['settings'], 'temporalIdPrefix'> }, connection: ConnectionDoc, sel: SyncSelector): string {
  return [`${deps.settings.temporalIdPrefix}-schedule`, connection.environment, connection.provider_config_key, connection.connection_id, sel.name, sel.variant]
    .map(encodeURIComponent)
    .join(':');
}

/** The sync's frequency in ms: the connection's override, else its definition's default. */
export function effectiveFrequencyMs(deps: Pick<ApiDeps, 'registry'>, connection: ConnectionDoc, syncName: string, override: string | null): number {
  if (override) return parseFrequency(override);
  const def = deps.registry.getSync(connection.provider, syncName);
  if (!def) throw new Error(`integration ${connection.provider} has no sync ${syncName}`);
  return parseFrequency(def.frequency);
}

/** Everything of a sync's schedule but its state: interval, the action, the policies. */
function scheduleBody(deps: ScheduleDeps, connection: ConnectionDoc, sel: SyncSelector, everyMs: number): Omit<ScheduleOptions, 'scheduleId' | 'state'> {
  const args: [ScheduledSyncInput] = [
    { syncWorkflowId: connectionSyncWorkflowId(deps.settings.temporalIdPrefix, connection, sel), run: syncRunInput(deps, connection, sel) },
  ];
  return {
    // Phased from now: the first fire is one interval after the schedule is made (or its
    // frequency changed), and a thousand connections made at once do not all fire on the hour.
    spec: { intervals: [{ every: everyMs, offset: Date.now() % everyMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'scheduledSync',
      // Temporal appends the fire time; the sync itself runs under its fixed ID (see scheduledSync).
      workflowId: `${deps.settings.temporalIdPrefix}-scheduled:${connectionSyncWorkflowId(deps.settings.temporalIdPrefix, connection, sel)}`,
      taskQueue: deps.settings.syncTaskQueue,
      args,
      typedSearchAttributes: syncSearchAttributes(connection, sel),
    },
    policies: {
      overlap: 'SKIP',
      // A fire missed while Temporal was down is still taken within one interval; anything
      // older is covered by the next fire (a sync catches up on its own data anyway).
      catchupWindow: Math.max(everyMs, 10_000),
    },
  };
}

/**
 * Creates the sync's schedule in the given state, or, if it exists (a retried creation, a
 * connection of an earlier version), brings it to that state and frequency.
 */
export async function putSyncSchedule(
  deps: ScheduleDeps,
  connection: ConnectionDoc,
  sel: SyncSelector,
  want: { paused: boolean; everyMs: number },
): Promise<void> {
  const scheduleId = syncScheduleId(deps, connection, sel);
  const body = scheduleBody(deps, connection, sel, want.everyMs);
  try {
    await deps.temporal.schedule.create({ scheduleId, ...body, state: { paused: want.paused } });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await deps.temporal.schedule.getHandle(scheduleId).update(() => ({ ...body, state: { paused: want.paused } }));
  }
}

/** The schedule as Temporal has it now, or null when the sync has none. */
export async function describeSyncSchedule(
  deps: Pick<ApiDeps, 'temporal'> & { settings: Pick<ApiDeps['settings'], 'temporalIdPrefix'> },
  connection: ConnectionDoc,
  sel: SyncSelector,
): Promise<ScheduleDescription | null> {
  try {
    return await deps.temporal.schedule.getHandle(syncScheduleId(deps, connection, sel)).describe();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  }
}

/** What GET /sync/status reads from a schedule: whether it is paused, when it fires next, how often. */
export function scheduleStatus(desc: ScheduleDescription): { paused: boolean; nextScheduledSyncAt: string | null; frequency: string | null } {
  const every = desc.spec.intervals?.[0]?.every;
  const next = desc.state.paused ? undefined : desc.info.nextActionTimes[0];
  return {
    paused: desc.state.paused,
    nextScheduledSyncAt: next ? next.toISOString() : null,
    frequency: typeof every === 'number' ? frequencyLabel(every) : null,
  };
}

/** Pauses or unpauses the sync's schedule; a sync without one (an earlier version's connection) gets one in that state. */
export async function setSyncSchedulePaused(
  deps: ScheduleDeps,
  connection: ConnectionDoc,
  sel: SyncSelector,
  paused: boolean,
  override: string | null,
): Promise<void> {
  const handle = deps.temporal.schedule.getHandle(syncScheduleId(deps, connection, sel));
  try {
    if (paused) await handle.pause('paused through POST /sync/pause');
    else await handle.unpause('started through POST /sync/start');
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await putSyncSchedule(deps, connection, sel, { paused, everyMs: effectiveFrequencyMs(deps, connection, sel.name, override) });
  }
}

/** Sets the schedule's interval, keeping whether it is paused; creates a paused one if there is none. */
export async function setSyncScheduleFrequency(deps: ScheduleDeps, connection: ConnectionDoc, sel: SyncSelector, everyMs: number): Promise<void> {
  const body = scheduleBody(deps, connection, sel, everyMs);
  try {
    await deps.temporal.schedule
      .getHandle(syncScheduleId(deps, connection, sel))
      .update((prev) => ({ ...body, state: { paused: prev.state.paused, note: prev.state.note } }));
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await putSyncSchedule(deps, connection, sel, { paused: true, everyMs });
  }
}

/**
 * A new connection's syncs: their state and one schedule each, running for syncs marked
 * auto-start (whose first run also starts right away, as in Nango), paused for the others.
 */
export async function startNewConnectionSyncs(deps: ApiDeps, connection: ConnectionDoc): Promise<void> {
  await ensureSyncStates(deps, connection);
  const syncs = deps.registry.get(connection.provider)?.syncs ?? [];
  await Promise.all(
    syncs.map(async (s) => {
      const sel = { name: s.name, variant: DEFAULT_VARIANT };
      await putSyncSchedule(deps, connection, sel, { paused: !s.autoStart, everyMs: parseFrequency(s.frequency) });
      if (s.autoStart) await startSyncRun(deps, connection, sel);
    }),
  );
}

/** Deletes the schedules of a connection's syncs, so nothing fires for it again. Missing ones are fine; Temporal out of reach is not. */
export async function deleteSyncSchedules(
  deps: Pick<ApiDeps, 'temporal'> & { settings: Pick<ApiDeps['settings'], 'temporalIdPrefix'> },
  connection: ConnectionDoc,
  sels: SyncSelector[],
): Promise<void> {
  await Promise.all(
    sels.map((sel) =>
      deps.temporal.schedule
        .getHandle(syncScheduleId(deps, connection, sel))
        .delete()
        .catch((err: unknown) => {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        }),
    ),
  );
}

export interface ReconcileReport {
  checked: number;
  created: number;
  updated: number;
  failed: number;
}

/**
 * Brings every sync's schedule in line with the code the worker runs, at worker start: a
 * schedule at a default frequency that changed in the sync's definition gets the new one
 * (a connection's override stays), and a sync without a schedule (a connection of an
 * earlier version) gets one, running if the sync is auto-start. Idempotent; several workers
 * doing it at once write the same values.
 */
export async function reconcileSyncSchedules(
  deps: ScheduleDeps & Pick<ApiDeps, 'stores'>,
  opts: { concurrency?: number; onError?: (state: SyncDoc, err: unknown) => void } = {},
): Promise<ReconcileReport> {
  const report: ReconcileReport = { checked: 0, created: 0, updated: 0, failed: 0 };
  const connections = new Map<string, ConnectionDoc | null>();
  const reconcileOne = async (state: SyncDoc) => {
    if (!connections.has(state.connection)) connections.set(state.connection, await deps.stores.connections.getById(state.connection));
    const connection = connections.get(state.connection);
    const def = connection ? deps.registry.getSync(connection.provider, state.name) : undefined;
    if (!connection || !def) return;
    report.checked++;
    const sel = { name: state.name, variant: state.variant };
    const everyMs = effectiveFrequencyMs(deps, connection, state.name, state.frequency);
    const desc = await describeSyncSchedule(deps, connection, sel);
    if (!desc) {
      await putSyncSchedule(deps, connection, sel, { paused: !def.autoStart, everyMs });
      report.created++;
    } else if (desc.spec.intervals?.[0]?.every !== everyMs) {
      await setSyncScheduleFrequency(deps, connection, sel, everyMs);
      report.updated++;
    }
  };
  const inFlight = new Set<Promise<void>>();
  for await (const state of deps.stores.syncs.all()) {
    // One sync that fails (Temporal briefly out of reach) does not stop the others; the next worker start retries it.
    const p = reconcileOne(state)
      .catch((err: unknown) => {
        report.failed++;
        opts.onError?.(state, err);
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= (opts.concurrency ?? 10)) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  return report;
}
