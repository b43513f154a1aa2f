import type { RequestLogEntry } from '../../store/request-logs';
import type { Stores } from '../../store/db';
import type { ListLogsQuery } from '../schemas/logs';

/** An entry as `GET /logs` shows it: the store's internal connection key and environment stay inside. */
type RequestLogView = Omit<RequestLogEntry, 'at' | 'environment' | 'connection' | 'provider_request_id'> & {
  at: string;
  provider_request_id: string | null;
};

/**
 * One page of an environment's request log, newest first. Connection and integration pick
 * the scope key that is read (an `_id` range, see store/request-logs.ts); operation and
 * status are checked within it, so a page over a rare value may hold fewer entries than
 * `limit` (even none) and still carry a `next_cursor`.
 */
export async function listRequestLogs(stores: Pick<Stores, 'requestLogs'>, environment: string, q: ListLogsQuery) {
  const page = await stores.requestLogs.range({
    environment,
    connectionId: q.connection_id,
    integration: q.integration,
    operation: q.operation,
    match: q.status === undefined ? undefined : statusMatcher(q.status),
    from: q.from,
    to: q.to,
    cursor: q.cursor,
    limit: q.limit,
  });
  return { logs: page.entries.map(toView), next_cursor: page.nextCursor };
}

function statusMatcher(status: NonNullable<ListLogsQuery['status']>): (e: RequestLogEntry) => boolean {
  if (typeof status === 'number') return (e) => e.status === status;
  if (status === 'error') return (e) => e.status === null || e.error !== null;
  const hundreds = Number(status[0]);
  return (e) => e.status !== null && Math.floor(e.status / 100) === hundreds;
}

function toView(e: RequestLogEntry): RequestLogView {
  return {
    id: e.id,
    at: e.at.toISOString(),
    connection_id: e.connection_id,
    integration: e.integration,
    operation: e.operation,
    run_id: e.run_id,
    method: e.method,
    url: e.url,
    status: e.status,
    duration_ms: e.duration_ms,
    attempt: e.attempt,
    rate_limit_wait_ms: e.rate_limit_wait_ms,
    error: e.error,
    provider_request_id: e.provider_request_id ?? null,
  };
}
