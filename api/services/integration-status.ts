import type { ConnectionDoc } from '../../store/connections';
import type { RequestLogEntry } from '../../store/request-logs';
import type { SyncDoc } from '../../store/syncs';
import type { ApiDeps } from '../deps';
import { findIntegration } from './connection-lookup';
import { describeSyncSchedule } from './sync-schedules';

/** Temporal calls and store reads in flight at once per status request: many connections must not flood either. */
const CONCURRENCY = 8;
/**
 * Schedules described per request at most. Temporal has no count of paused schedules by
 * search attribute on every server, so each is described; past this many the paused figure
 * covers the first ones (in key order) and says so (`paused_complete: false`).
 */
const MAX_SCHEDULES_DESCRIBED = 500;
/** Request log entries read per request at most (newest first); past this the hour's figures cover the newest ones. */
const MAX_LOG_ENTRIES = 20_000;
const LOG_PAGE = 1_000;
const CONNECTION_PAGE = 500;
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
    by_last_state: { SUCCESS: number; ERROR: number; RUNNING: number; NEVER_RUN: number };
    paused: number;
    /** Syncs whose schedule was read; the rest are not counted in `paused` (see MAX_SCHEDULES_DESCRIBED). */
    paused_checked: number;
    paused_complete: boolean;
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
 * schedules, and its third-party calls of the last hour, all of this environment only. Every
 * read is by key (`_id` ranges and lookups): connections through their key aliases, syncs by
 * connection, the request log by the integration's time range.
 */
export async function integrationStatus(
  deps: StatusDeps,
  environment: string,
  providerConfigKey: string,
  opts: { errors: number },
): Promise<IntegrationStatus> {
  await findIntegration(deps.stores, environment, providerConfigKey);
  const now = new Date();
  const connections = await allConnections(deps, environment, providerConfigKey);
  const syncsByConnection = await mapBounded(connections, CONCURRENCY, (c) => deps.stores.syncs.listForConnection(c._id));
  const pairs = connections.flatMap((connection, i) => syncsByConnection[i].map((sync) => ({ connection, sync })));

  const described = pairs.slice(0, MAX_SCHEDULES_DESCRIBED);
  const schedules = await mapBounded(described, CONCURRENCY, ({ connection, sync }) =>
    describeSyncSchedule(deps, connection, { name: sync.name, variant: sync.variant }),
  );

  const byLastState = { SUCCESS: 0, ERROR: 0, RUNNING: 0, NEVER_RUN: 0 };
  for (const { sync } of pairs) byLastState[sync.last_run?.status ?? 'NEVER_RUN'] += 1;

  return {
    provider_config_key: providerConfigKey,
    generated_at: now.toISOString(),
    connections: {
      total: connections.length,
      by_auth_state: {
        ok: connections.filter((c) => c.auth_status === 'ok').length,
        needs_reauthorization: connections.filter((c) => c.auth_status !== 'ok').length,
      },
    },
    syncs: {
      total: pairs.length,
      by_last_state: byLastState,
      paused: schedules.filter((s) => s?.state.paused === true).length,
      paused_checked: described.length,
      paused_complete: described.length === pairs.length,
    },
    latest_errors: latestErrors(connections, pairs, opts.errors),
    last_hour: await lastHourCalls(deps, environment, providerConfigKey, now),
  };
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

/** Every connection of the integration, page by page in key order. */
async function allConnections(deps: StatusDeps, environment: string, providerConfigKey: string): Promise<ConnectionDoc[]> {
  const all: ConnectionDoc[] = [];
  let after: string | null = null;
  do {
    const page = await deps.stores.connections.pageForIntegration(environment, providerConfigKey, { after, limit: CONNECTION_PAGE });
    all.push(...page.connections);
    after = page.next;
  } while (after !== null);
  return all;
}

/** The integration's request log of the hour before `now`: one `_id` range, read newest first in pages. */
async function lastHourCalls(deps: StatusDeps, environment: string, integration: string, now: Date): Promise<IntegrationStatus['last_hour']> {
  const from = new Date(now.getTime() - HOUR_MS);
  const entries: RequestLogEntry[] = [];
  let cursor: string | undefined;
  let complete = true;
  for (;;) {
    const page = await deps.stores.requestLogs.range({ environment, integration, from, to: now, cursor, limit: LOG_PAGE, direction: 'desc' });
    entries.push(...page.entries);
    if (page.nextCursor === null) break;
    if (entries.length >= MAX_LOG_ENTRIES) {
      complete = false;
      break;
    }
    cursor = page.nextCursor;
  }
  const failed = entries.filter((e) => e.status === null || e.status >= 400 || e.error !== null).length;
  const durations = entries.map((e) => e.duration_ms).sort((a, b) => a - b);
  const waits = entries.filter((e) => e.rate_limit_wait_ms > 0);
  return {
    from: (complete || entries.length === 0 ? from : entries[entries.length - 1].at).toISOString(),
    to: now.toISOString(),
    requests: entries.length,
    errors: failed,
    error_rate: entries.length === 0 ? 0 : failed / entries.length,
    latency_ms: { p50: percentile(durations, 0.5), p95: percentile(durations, 0.95) },
    rate_limit_waits: { count: waits.length, total_ms: waits.reduce((sum, e) => sum + e.rate_limit_wait_ms, 0) },
    rate_limited: entries.filter((e) => e.status === 429).length,
    complete,
  };
}

/** Nearest-rank percentile of sorted values (null when there are none). */
function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

/** `fn` over `items` with at most `limit` calls in flight, results in input order. */
async function mapBounded<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
