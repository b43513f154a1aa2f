import type { ConnectionDoc } from '../../store/connections';
import type { RequestLogEntry } from '../../store/request-logs';
import type { SyncDoc } from '../../store/syncs';
import { CONNECTION_OK, SYNC_ERROR, SYNC_NEVER_RUN, SYNC_SUCCESS, type TallyEntry } from '../../store/integration-tallies';
import type { ApiDeps } from '../deps';
import { outageOf } from '../../common/outage';
import { findIntegration } from '../../store/connection-lookup';
import { countRunningSyncs, countPausedSchedules } from '../../control';
import { mapBounded } from '../../common/map-bounded';

/** Store reads in flight at once (GET /connections' errors, one range read per listed connection). */
const CONCURRENCY = 8;
/** Request log entries read per request at most (newest first); past this the hour's figures cover the newest ones. */
const MAX_LOG_ENTRIES = 20_000;
const LOG_PAGE = 1_000;
const HOUR_MS = 3_600_000;

type StatusDeps = Pick<ApiDeps, 'stores' | 'temporal'> & { settings: Pick<ApiDeps['settings'], 'temporalIdPrefix'> };

export interface StatusError {
  type: 'auth' | 'sync';
  /** When it happened: the run's end for a sync, the connection's last change for an auth error. */
  at: string;
  connection_id: string;
  sync: { name: string; variant: string } | null;
  /** The failed run (the `run_id` of its request log entries); null for auth errors. */
  run_id: string | null;
  code: string;
  message: string;
}

export interface IntegrationStatus {
  provider_config_key: string;
  generated_at: string;
  connections: { total: number; by_auth_state: { ok: number; needs_reauthorization: number } };
  syncs: {
    total: number;
    /**
     * SUCCESS, ERROR, NEVER_RUN: each sync by its last finished run. RUNNING: syncs running
     * now, as Temporal counts them (a running sync is also counted by its last finished run);
     * null when Temporal did not answer.
     */
    by_last_state: { SUCCESS: number; ERROR: number; RUNNING: number | null; NEVER_RUN: number };
    /** Schedules paused (by Weft or in the Temporal UI), as Temporal counts them; null when it did not answer. */
    paused: number | null;
    /** Syncs the paused figure covers: all of them, or none when Temporal did not answer. */
    paused_checked: number;
    paused_complete: boolean;
    /** Why RUNNING and paused are missing (Temporal out of reach or refusing the count); null when they are there. */
    temporal_error: { code: string; message: string } | null;
  };
  latest_errors: StatusError[];
  last_hour: {
    from: string;
    to: string;
    requests: number;
    /** Requests that got no answer or an HTTP status of 400 or more. */
    errors: number;
    error_rate: number;
    latency_ms: { p50: number | null; p95: number | null };
    rate_limit_waits: { count: number; total_ms: number };
    /** Answers 429 from the provider. */
    rate_limited: number;
    /** False when more than MAX_LOG_ENTRIES were logged: the figures cover the newest ones, from `from`. */
    complete: boolean;
  };
}

/**
 * `GET /integrations/:key/status`: the integration's connections, its syncs' last runs and
 * schedules, and its third-party calls of the last hour, all of this environment only. Its
 * cost does not grow with the number of connections: the counts come from the integration's
 * tally (a few documents, see store/integration-tallies.ts), the latest errors from the
 * documents the tally names (at most `errors` of each kind, by `_id`), running and paused
 * syncs from two counts in Temporal, the calls from the request log's time range. When
 * Temporal does not answer, those two figures are null and `temporal_error` says why: the
 * rest is still answered.
 */
export async function integrationStatus(
  deps: StatusDeps,
  environment: string,
  providerConfigKey: string,
  opts: { errors: number },
): Promise<IntegrationStatus> {
  await findIntegration(deps.stores, environment, providerConfigKey);
  const now = new Date();
  const [tally, temporal, lastHour] = await Promise.all([
    deps.stores.tallies.read(environment, providerConfigKey),
    temporalFigures(deps, environment, providerConfigKey),
    lastHourCalls(deps, environment, providerConfigKey, now),
  ]);
  const byLastState = { SUCCESS: 0, ERROR: 0, RUNNING: temporal.running, NEVER_RUN: 0 };
  for (const s of tally.syncs) {
    if (s.code === SYNC_SUCCESS) byLastState.SUCCESS += 1;
    else if (s.code === SYNC_ERROR) byLastState.ERROR += 1;
    else if (s.code === SYNC_NEVER_RUN) byLastState.NEVER_RUN += 1;
  }
  const ok = tally.connections.filter((c) => c.code === CONNECTION_OK).length;
  return {
    provider_config_key: providerConfigKey,
    generated_at: now.toISOString(),
    connections: { total: tally.connections.length, by_auth_state: { ok, needs_reauthorization: tally.connections.length - ok } },
    syncs: {
      total: tally.syncs.length,
      by_last_state: byLastState,
      paused: temporal.paused,
      paused_checked: temporal.paused === null ? 0 : tally.syncs.length,
      paused_complete: temporal.paused !== null,
      temporal_error: temporal.error,
    },
    latest_errors: await latestTallyErrors(deps, tally, opts.errors),
    last_hour: lastHour,
  };
}

/** Running syncs and paused schedules, two counts; a failure of either is reported, never thrown. */
async function temporalFigures(
  deps: StatusDeps,
  environment: string,
  providerConfigKey: string,
): Promise<{ running: number | null; paused: number | null; error: { code: string; message: string } | null }> {
  const [running, paused] = await Promise.allSettled([
    countRunningSyncs(deps, environment, providerConfigKey),
    countPausedSchedules(deps, environment, providerConfigKey),
  ]);
  const failed = [running, paused].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  return {
    running: running.status === 'fulfilled' ? running.value : null,
    paused: paused.status === 'fulfilled' ? paused.value : null,
    error: failed ? temporalError(failed.reason) : null,
  };
}

function temporalError(err: unknown): { code: string; message: string } {
  const outage = outageOf(err);
  if (outage) return { code: outage.code, message: outage.message };
  // Anything else Temporal answered (a cancelled call, a server without the count): its words, without a stack.
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'orchestrator_count_failed', message: `Temporal did not count running or paused syncs: ${message}` };
}

/**
 * The newest auth and sync errors the tally names, read by `_id` (a few more than asked, in
 * case some were mended since the tally was read), and shown as the documents say.
 */
async function latestTallyErrors(deps: StatusDeps, tally: { connections: TallyEntry[]; syncs: TallyEntry[] }, limit: number): Promise<StatusError[]> {
  const newest = (entries: TallyEntry[]) =>
    entries
      .sort((a, b) => b.at - a.at)
      .slice(0, limit + 5)
      .map((e) => e.id);
  const [connections, syncs] = await Promise.all([
    deps.stores.connections.getManyById(newest(tally.connections.filter((c) => c.code !== CONNECTION_OK))),
    deps.stores.syncs.getMany(newest(tally.syncs.filter((s) => s.code === SYNC_ERROR))),
  ]);
  const owners = new Map(connections.map((c) => [c._id, c]));
  const missing = syncs.filter((s) => !owners.has(s.connection)).map((s) => s.connection);
  for (const c of await deps.stores.connections.getManyById([...new Set(missing)])) owners.set(c._id, c);
  const pairs = syncs.flatMap((sync) => {
    const connection = owners.get(sync.connection);
    return connection ? [{ connection, sync }] : [];
  });
  return latestErrors(connections, pairs, limit);
}

/** Auth and sync errors of these connections, newest first. */
function latestErrors(connections: ConnectionDoc[], pairs: Array<{ connection: ConnectionDoc; sync: SyncDoc }>, limit: number): StatusError[] {
  const errors: StatusError[] = [
    ...connections.filter((c) => c.auth_status !== 'ok').map(authError),
    ...pairs.flatMap(({ connection, sync }) => {
      const e = syncError(connection, sync);
      return e ? [e] : [];
    }),
  ];
  return errors.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, limit);
}

function authError(c: ConnectionDoc): StatusError {
  return {
    type: 'auth',
    at: c.updated_at.toISOString(),
    connection_id: c.connection_id,
    sync: null,
    run_id: null,
    code: 'needs_reauthorization',
    message: c.last_auth_error ?? 'The connection needs to be re-authorized.',
  };
}

/** The sync's last run, when it failed. */
function syncError(c: ConnectionDoc, s: SyncDoc): StatusError | null {
  const run = s.last_run;
  if (run?.status !== 'ERROR') return null;
  return {
    type: 'sync',
    at: (run.finished_at ?? run.started_at).toISOString(),
    connection_id: c.connection_id,
    sync: { name: s.name, variant: s.variant },
    run_id: run.id,
    code: run.error?.code ?? 'sync_failed',
    message: run.error?.message ?? 'The sync run failed.',
  };
}

/** An error as `GET /connections` lists it (Nango's `{ type, log_id }`, plus what went wrong). */
export interface ConnectionListError {
  type: 'auth' | 'sync';
  /** The failed sync run's id (the `run_id` of its request log entries); null for auth errors. */
  log_id: string | null;
  sync_name?: string;
  variant?: string;
  code: string;
  message: string;
}

/** Each connection's auth error and failed syncs (last run ERROR), in input order: one `_id` range read per connection. */
export async function connectionListErrors(deps: Pick<ApiDeps, 'stores'>, connections: ConnectionDoc[]): Promise<ConnectionListError[][]> {
  const syncs = await mapBounded(connections, CONCURRENCY, (c) => deps.stores.syncs.listForConnection(c._id));
  return connections.map((c, i) => {
    const found: StatusError[] = [...(c.auth_status === 'ok' ? [] : [authError(c)]), ...syncs[i].flatMap((s) => syncError(c, s) ?? [])];
    return found.map((e) => ({
      type: e.type,
      log_id: e.run_id,
      ...(e.sync ? { sync_name: e.sync.name, variant: e.sync.variant } : {}),
      code: e.code,
      message: e.message,
    }));
  });
}

/** The hour's calls are summed per slice of this long; the hour's older edge is counted to one slice. */
const SLICE_MS = 10_000;
/** Each request reads again this far back: entries are written in batches, a moment after their call. */
const LATE_WRITE_MS = 5_000;
/** Integrations whose hour this process keeps (the least recently asked for goes first). */
const MAX_HOURS_KEPT = 200;

/** Sums of the calls of one slice; latencies as counts per bucket of ~5 %. */
interface Slice {
  requests: number;
  errors: number;
  rateLimited: number;
  waits: number;
  waitMs: number;
  latency: Map<number, number>;
}

/** One integration's hour as this process last read it. */
interface Hour {
  slices: Map<number, Slice>;
  /** Entries up to this time are summed. */
  readTo: number;
  /** Ids of the summed entries of the last LATE_WRITE_MS before `readTo` (read again, not summed twice). */
  recent: Set<string>;
  /** Entries before this were past MAX_LOG_ENTRIES when the hour was first read: not summed. */
  coveredFrom: number;
}

const hours = new Map<string, Hour>();

/**
 * The integration's calls of the hour before `now`, from the request log's time range of the
 * integration. The first request of this process for an integration reads the hour (newest
 * first, at most MAX_LOG_ENTRIES); later ones read only what was logged since the last (and
 * the LATE_WRITE_MS before it, for entries written late), and keep per-slice sums: a status
 * polled every few seconds costs the calls made meanwhile, not the hour's. An entry written
 * more than LATE_WRITE_MS after its call, after this process last read past it, is not counted
 * here (the log and GET /logs have it).
 */
async function lastHourCalls(deps: StatusDeps, environment: string, integration: string, now: Date): Promise<IntegrationStatus['last_hour']> {
  // The database's name too: one process may serve several (the tests' stacks do).
  const key = [deps.stores.db.databaseName, environment, integration].join('\n');
  const from = now.getTime() - HOUR_MS;
  let hour = hours.get(key);
  hours.delete(key);
  if (hour && hour.readTo >= from) {
    const known = hour;
    const read = await readLog(deps, environment, integration, new Date(known.readTo - LATE_WRITE_MS), now);
    if (read.complete)
      addEntries(
        known,
        read.entries.filter((e) => !known.recent.has(e.id)),
        now.getTime(),
        read.entries,
      );
    // More than MAX_LOG_ENTRIES since the last read: the hour is read afresh.
    else hour = undefined;
  } else hour = undefined;
  if (!hour) {
    hour = { slices: new Map(), readTo: from, recent: new Set(), coveredFrom: from };
    const read = await readLog(deps, environment, integration, new Date(from), now);
    if (!read.complete) hour.coveredFrom = read.entries.length ? read.entries[read.entries.length - 1].at.getTime() : from;
    addEntries(hour, read.entries, now.getTime());
  }
  for (const start of hour.slices.keys()) if (start + SLICE_MS <= from) hour.slices.delete(start);
  hours.set(key, hour);
  if (hours.size > MAX_HOURS_KEPT) hours.delete(hours.keys().next().value as string);

  const total: Slice = { requests: 0, errors: 0, rateLimited: 0, waits: 0, waitMs: 0, latency: new Map() };
  for (const slice of hour.slices.values()) {
    total.requests += slice.requests;
    total.errors += slice.errors;
    total.rateLimited += slice.rateLimited;
    total.waits += slice.waits;
    total.waitMs += slice.waitMs;
    for (const [bucket, n] of slice.latency) total.latency.set(bucket, (total.latency.get(bucket) ?? 0) + n);
  }
  const complete = hour.coveredFrom <= from;
  return {
    from: new Date(complete ? from : hour.coveredFrom).toISOString(),
    to: now.toISOString(),
    requests: total.requests,
    errors: total.errors,
    error_rate: total.requests === 0 ? 0 : total.errors / total.requests,
    latency_ms: { p50: latencyPercentile(total.latency, total.requests, 0.5), p95: latencyPercentile(total.latency, total.requests, 0.95) },
    rate_limit_waits: { count: total.waits, total_ms: total.waitMs },
    rate_limited: total.rateLimited,
    complete,
  };
}

/** Entries logged in [from, to], newest first, at most MAX_LOG_ENTRIES. */
async function readLog(
  deps: StatusDeps,
  environment: string,
  integration: string,
  from: Date,
  to: Date,
): Promise<{ entries: RequestLogEntry[]; complete: boolean }> {
  const entries: RequestLogEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await deps.stores.requestLogs.range({ environment, integration, from, to, cursor, limit: LOG_PAGE, direction: 'desc' });
    entries.push(...page.entries);
    if (page.nextCursor === null) return { entries, complete: true };
    if (entries.length >= MAX_LOG_ENTRIES) return { entries, complete: false };
    cursor = page.nextCursor;
  }
}

/** Sums `entries` into their slices; `read` (all the read returned) gives the ids to remember for the next read's overlap. */
function addEntries(hour: Hour, entries: RequestLogEntry[], readTo: number, read: RequestLogEntry[] = entries): void {
  for (const e of entries) {
    const start = Math.floor(e.at.getTime() / SLICE_MS) * SLICE_MS;
    let slice = hour.slices.get(start);
    if (!slice) hour.slices.set(start, (slice = { requests: 0, errors: 0, rateLimited: 0, waits: 0, waitMs: 0, latency: new Map() }));
    slice.requests += 1;
    if (e.status === null || e.status >= 400 || e.error !== null) slice.errors += 1;
    if (e.status === 429) slice.rateLimited += 1;
    if (e.rate_limit_wait_ms > 0) {
      slice.waits += 1;
      slice.waitMs += e.rate_limit_wait_ms;
    }
    const bucket = latencyBucket(e.duration_ms);
    slice.latency.set(bucket, (slice.latency.get(bucket) ?? 0) + 1);
  }
  hour.readTo = readTo;
  hour.recent = new Set(read.filter((e) => e.at.getTime() > readTo - LATE_WRITE_MS).map((e) => e.id));
}

/** Latency buckets 5 % wide: a percentile is its bucket's upper bound, at most 5 % (and 1 ms) above the exact one. */
function latencyBucket(ms: number): number {
  return Math.ceil(Math.log1p(Math.max(0, ms)) / Math.log(1.05));
}

function latencyPercentile(buckets: Map<number, number>, count: number, p: number): number | null {
  if (count === 0) return null;
  const rank = Math.min(count, Math.max(1, Math.ceil(p * count)));
  let seen = 0;
  for (const bucket of [...buckets.keys()].sort((a, b) => a - b)) {
    seen += buckets.get(bucket)!;
    if (seen >= rank) return Math.round(Math.expm1(bucket * Math.log(1.05)));
  }
  return null;
}
