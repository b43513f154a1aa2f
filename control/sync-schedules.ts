import { isGrpcServiceError, ScheduleAlreadyRunning, ScheduleNotFoundError, type ScheduleDescription, type ScheduleOptions } from '@temporalio/client';
import { findConnection, findIntegration } from '../store/connection-lookup';
import type { ConnectionDoc } from '../store/connections';
import type { SyncDoc } from '../store/syncs';
import { BASE_VARIANT } from '../activities/sync-contracts';
import type { ControlDeps, ControlSettings, TemporalIdDeps } from './deps';
import { ensureSyncStates, filterLiteral, startSyncRun, syncRunInput, selectSyncs, syncSearchAttributes, syncStateOf, type SyncSelector } from './sync-runs';
import { frequencyLabel, parseFrequency } from './sync-frequency';
import { connectionSyncWorkflowId, scheduledSyncWorkflowId, syncScheduleId, syncScheduleIdPrefix } from './workflow-ids';
import { scheduledWorkflowAction } from './workflow-start';

/** What managing a sync's schedule needs (the API has it; the worker's reconcile pass builds it). */
export type ScheduleDeps = Pick<ControlDeps, 'temporal' | 'registry' | 'settings'>;

/** The sync's schedule's ID. */
function scheduleIdOf(deps: { settings: Pick<ControlSettings, 'temporalIdPrefix'> }, connection: ConnectionDoc, sel: SyncSelector): string {
  return syncScheduleId(
    deps.settings.temporalIdPrefix,
    connection.environment,
    connection.provider_config_key,
    connection.connection_id,
    sel.name,
    sel.variant,
  );
}

/**
 * How many of the integration's sync schedules are paused, by Weft or by an operator in the
 * Temporal UI: one count over Temporal's visibility (schedule IDs start with the
 * integration's prefix; `TemporalSchedulePaused` is Temporal's own attribute), however many
 * schedules there are. Visibility trails a pause by about a second.
 */
export async function countPausedSchedules(deps: TemporalIdDeps, environment: string, providerConfigKey: string): Promise<number> {
  const prefix = syncScheduleIdPrefix(deps.settings.temporalIdPrefix, { environment, providerConfigKey });
  const { count } = await deps.temporal.workflowService.countWorkflowExecutions({
    namespace: deps.temporal.options.namespace,
    query: `TemporalNamespaceDivision = 'TemporalScheduler' AND ScheduleId STARTS_WITH ${filterLiteral(prefix)} AND TemporalSchedulePaused = true`,
  });
  return Number(count ?? 0);
}

/** The sync's frequency in ms: the connection's override, else its definition's default. */
function effectiveFrequencyMs(deps: Pick<ControlDeps, 'registry'>, connection: ConnectionDoc, syncName: string, override: string | null): number {
  if (override) return parseFrequency(override);
  const def = deps.registry.getSync(connection.provider, syncName);
  if (!def) throw new Error(`integration ${connection.provider} has no sync ${syncName}`);
  return parseFrequency(def.frequency);
}

/** Everything of a sync's schedule but its state: interval, the action, the policies. */
function scheduleBody(deps: ScheduleDeps, connection: ConnectionDoc, sel: SyncSelector, everyMs: number): Omit<ScheduleOptions, 'scheduleId' | 'state'> {
  const syncWorkflowId = connectionSyncWorkflowId(deps.settings.temporalIdPrefix, connection, sel);
  return {
    // Phased from now: the first fire is one interval after the schedule is made (or its
    // frequency changed), and a thousand connections made at once do not all fire on the hour.
    spec: { intervals: [{ every: everyMs, offset: Date.now() % everyMs }] },
    action: scheduledWorkflowAction('scheduledSync', {
      // Temporal appends the fire time; the sync itself runs under its fixed ID (see scheduledSync).
      workflowId: scheduledSyncWorkflowId(deps.settings.temporalIdPrefix, syncWorkflowId),
      taskQueue: deps.settings.syncTaskQueue,
      args: [{ syncWorkflowId, run: syncRunInput(deps, connection, sel) }],
      typedSearchAttributes: syncSearchAttributes(connection, sel),
    }),
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
  const scheduleId = scheduleIdOf(deps, connection, sel);
  const body = scheduleBody(deps, connection, sel, want.everyMs);
  try {
    await deps.temporal.schedule.create({ scheduleId, ...body, state: { paused: want.paused } });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await deps.temporal.schedule.getHandle(scheduleId).update(() => ({ ...body, state: { paused: want.paused } }));
  }
}

/** The schedule as Temporal has it now, or null when the sync has none. */
export async function describeSyncSchedule(deps: TemporalIdDeps, connection: ConnectionDoc, sel: SyncSelector): Promise<ScheduleDescription | null> {
  try {
    return await deps.temporal.schedule.getHandle(scheduleIdOf(deps, connection, sel)).describe();
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
  const handle = deps.temporal.schedule.getHandle(scheduleIdOf(deps, connection, sel));
  try {
    if (paused) await handle.pause('paused through POST /sync/pause');
    else await handle.unpause('started through POST /sync/start');
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await putSyncSchedule(deps, connection, sel, { paused, everyMs: effectiveFrequencyMs(deps, connection, sel.name, override) });
  }
}

/** Sets the schedule's interval, keeping whether it is paused; creates a paused one if there is none. */
async function setSyncScheduleFrequency(deps: ScheduleDeps, connection: ConnectionDoc, sel: SyncSelector, everyMs: number): Promise<void> {
  const body = scheduleBody(deps, connection, sel, everyMs);
  try {
    await deps.temporal.schedule
      .getHandle(scheduleIdOf(deps, connection, sel))
      .update((prev) => ({ ...body, state: { paused: prev.state.paused, note: prev.state.note } }));
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    await putSyncSchedule(deps, connection, sel, { paused: true, everyMs });
  }
}

/**
 * PUT /sync/update-connection-frequency: a connection's sync at its own frequency, or back
 * at its definition's (null). The frequency is parsed, and refused, before anything changes.
 * Returns the frequency now in force, as the status shows it.
 */
export async function setConnectionSyncFrequency(
  deps: ControlDeps,
  req: { environment: string; providerConfigKey: string; connectionId: string; syncName: string; variant?: string; frequency: string | null },
): Promise<string> {
  const integration = await findIntegration(deps.stores, req.environment, req.providerConfigKey);
  const [sel] = selectSyncs(deps, integration.provider, [{ name: req.syncName, variant: req.variant ?? BASE_VARIANT }]);
  const { connection } = await findConnection(deps.stores, req.environment, req.providerConfigKey, req.connectionId);
  const state = await syncStateOf(deps, connection, sel);
  const everyMs = effectiveFrequencyMs(deps, connection, sel.name, req.frequency);
  await setSyncScheduleFrequency(deps, connection, sel, everyMs);
  if (!state) await ensureSyncStates(deps, connection);
  await deps.stores.syncs.setFrequency({ connection: connection._id, name: sel.name, variant: sel.variant }, req.frequency);
  return frequencyLabel(everyMs);
}

/**
 * A new connection's syncs: their state and one schedule each, running for syncs marked
 * auto-start (whose first run also starts right away, as in Nango), paused for the others.
 * The schedule and the first run are independent Temporal calls (the schedule's first fire
 * is one interval away, and a fire meeting the run joins it), so they go out together: on a
 * dev server each takes ~200 ms, most of what creating a connection costs.
 */
export async function startNewConnectionSyncs(deps: ControlDeps, connection: ConnectionDoc): Promise<void> {
  await ensureSyncStates(deps, connection);
  const syncs = deps.registry.get(connection.provider)?.syncs ?? [];
  await Promise.all(
    syncs.flatMap((s) => {
      const sel = { name: s.name, variant: BASE_VARIANT };
      const schedule = putSyncSchedule(deps, connection, sel, { paused: !s.autoStart, everyMs: parseFrequency(s.frequency) });
      return s.autoStart ? [schedule, startSyncRun(deps, connection, sel)] : [schedule];
    }),
  );
}

/** Deletes the schedules of a connection's syncs, so nothing fires for it again. Missing ones are fine; Temporal out of reach is not. */
export async function deleteSyncSchedules(deps: TemporalIdDeps, connection: ConnectionDoc, sels: SyncSelector[]): Promise<void> {
  await Promise.all(
    sels.map((sel) =>
      deps.temporal.schedule
        .getHandle(scheduleIdOf(deps, connection, sel))
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
  /** Temporal calls tried again after a transient error (cancelled, past its deadline, unavailable, busy). */
  retried: number;
  /** Schedules Temporal listed (null: the list failed, and each sync's schedule was described instead). */
  listed: number | null;
  ms: number;
}

/** gRPC codes a call may meet on a busy or restarting server, and succeed when tried again: CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNAVAILABLE. */
const TRANSIENT_CODES = new Set([1, 4, 8, 14]);

/** Whether a Temporal call's failure is one worth trying again (the client wraps the gRPC error in its own). */
function isTransientTemporalError(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (isGrpcServiceError(e) && TRANSIENT_CODES.has((e as { code?: number }).code ?? -1)) return true;
  }
  return false;
}

/**
 * `call`, tried again after a transient error, `attempts` times in all, waiting longer each
 * time (with jitter, so that passes of several workers do not retry in step).
 */
async function withRetries<T>(call: () => Promise<T>, onRetry: () => void, attempts = 4, baseDelayMs = 250): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= attempts || !isTransientTemporalError(err)) throw err;
      onRetry();
      await new Promise((r) => setTimeout(r, baseDelayMs * 4 ** (attempt - 1) * (0.5 + Math.random())));
    }
  }
}

/** Every schedule of this deployment (its ID prefix) and its interval, as Temporal lists them: a call per 1,000. */
async function listedIntervals(deps: ScheduleDeps): Promise<Map<string, number | undefined>> {
  const out = new Map<string, number | undefined>();
  const prefix = syncScheduleIdPrefix(deps.settings.temporalIdPrefix);
  for await (const s of deps.temporal.schedule.list({ query: `ScheduleId STARTS_WITH ${filterLiteral(prefix)}`, pageSize: 1_000 })) {
    out.set(s.scheduleId, s.spec?.intervals?.[0]?.every);
  }
  return out;
}

/**
 * Brings every sync's schedule in line with the code the worker runs, at worker start: a
 * schedule at a default frequency that changed in the sync's definition gets the new one
 * (a connection's override stays), and a sync without a schedule (a connection of an
 * earlier version) gets one, running if the sync is auto-start. What Temporal has is read in
 * a few list calls, not a describe per schedule; only a sync the list shows at another
 * interval or not at all is described.
 * At most `concurrency` syncs at once; a transient Temporal error is tried again. Idempotent;
 * several workers doing it at once write the same values.
 */
export async function reconcileSyncSchedules(
  deps: ControlDeps,
  opts: { concurrency?: number; onError?: (state: SyncDoc, err: unknown) => void; retryDelayMs?: number } = {},
): Promise<ReconcileReport> {
  const started = Date.now();
  const report: ReconcileReport = { checked: 0, created: 0, updated: 0, failed: 0, retried: 0, listed: null, ms: 0 };
  const retrying = <T>(call: () => Promise<T>) => withRetries(call, () => report.retried++, 4, opts.retryDelayMs);
  const listed = await retrying(() => listedIntervals(deps)).catch(() => null);
  report.listed = listed?.size ?? null;
  const connections = new Map<string, Promise<ConnectionDoc | null>>();
  const reconcileOne = async (state: SyncDoc) => {
    if (!connections.has(state.connection)) connections.set(state.connection, deps.stores.connections.getById(state.connection));
    const connection = await connections.get(state.connection);
    const def = connection ? deps.registry.getSync(connection.provider, state.name) : undefined;
    if (!connection || !def) return;
    report.checked++;
    const sel = { name: state.name, variant: state.variant };
    const everyMs = effectiveFrequencyMs(deps, connection, state.name, state.frequency);
    const id = scheduleIdOf(deps, connection, sel);
    // Listed at the right interval: nothing to do. Otherwise the description decides (the
    // list trails changes by a moment, and may not show a schedule made just now).
    if (listed?.has(id) && listed.get(id) === everyMs) return;
    const desc = await retrying(() => describeSyncSchedule(deps, connection, sel));
    if (!desc) {
      await retrying(() => putSyncSchedule(deps, connection, sel, { paused: !def.autoStart, everyMs }));
      report.created++;
    } else if (desc.spec.intervals?.[0]?.every !== everyMs) {
      await retrying(() => setSyncScheduleFrequency(deps, connection, sel, everyMs));
      report.updated++;
    }
  };
  const inFlight = new Set<Promise<void>>();
  for await (const state of deps.stores.syncs.all()) {
    // One sync that still fails (Temporal out of reach) does not stop the others; the next worker start retries it.
    const p = reconcileOne(state)
      .catch((err: unknown) => {
        report.failed++;
        opts.onError?.(state, err);
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= (opts.concurrency ?? 8)) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  report.ms = Date.now() - started;
  return report;
}
