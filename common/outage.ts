import { isGrpcServiceError } from '@temporalio/client';
import {
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoClientClosedError,
} from 'mongodb';
import { WeftError } from './errors';

/**
 * A server Weft stands on is out of reach: MongoDB (`database`) or Temporal (`orchestrator`).
 * Requests that need it are answered 503 with Retry-After instead of a 500 after a long
 * wait; nothing needs restarting, the drivers reconnect by themselves once it is back.
 */
export type Dependency = 'database' | 'orchestrator';

/** What a client is told to wait before trying again; both drivers notice a returned server within a second or two. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

const DESCRIPTIONS: Record<Dependency, { code: string; message: string }> = {
  database: { code: 'database_unavailable', message: 'Weft cannot reach its database right now. Try again shortly.' },
  orchestrator: { code: 'orchestrator_unavailable', message: 'Weft cannot reach its workflow engine (Temporal) right now. Try again shortly.' },
};

class DependencyUnavailableError extends WeftError {
  readonly retryAfterSeconds = OUTAGE_RETRY_AFTER_SECONDS;
  constructor(readonly dependency: Dependency) {
    super(DESCRIPTIONS[dependency].code, DESCRIPTIONS[dependency].message, 503);
  }
}

/**
 * The outage an error stands for, or null when it is something else. The drivers report an
 * unreachable server in several shapes; this is the one place that knows them:
 * - MongoDB: no server selectable in time (MongoServerSelectionError), a connection that
 *   broke or timed out mid-operation (MongoNetworkError and its subclasses, the pool-cleared
 *   errors among them), a client that is closing, and a server that is stepping down or
 *   shutting down (the "not primary" / shutdown codes).
 * - Temporal: a gRPC call that found no server (UNAVAILABLE), no answer before its
 *   deadline (DEADLINE_EXCEEDED; every API call has one, see temporal-connection.ts) or was
 *   given up by a busy server (CANCELLED), possibly wrapped in the client's ServiceError.
 */
export function outageOf(err: unknown): DependencyUnavailableError | null {
  if (err instanceof DependencyUnavailableError) return err;
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (isDatabaseUnreachable(e)) return new DependencyUnavailableError('database');
    if (isGrpcServiceError(e) && ORCHESTRATOR_UNREACHABLE.has((e as { code?: number }).code ?? -1)) return new DependencyUnavailableError('orchestrator');
  }
  return null;
}

/**
 * gRPC status codes: 4 DEADLINE_EXCEEDED, 14 UNAVAILABLE, and 1 CANCELLED, which a Temporal
 * server under load answers for calls it gives up on ("Failed to describe schedule: 1
 * CANCELLED"): worth trying again shortly, like the other two, not a fault of the request.
 */
const ORCHESTRATOR_UNREACHABLE = new Set([1, 4, 14]);

/** Server error codes of a node that is not (or no longer) able to serve: not primary, stepping down, shutting down. */
const UNSERVING_CODES = new Set([91, 189, 10107, 11600, 11602, 13435, 13436]);

function isDatabaseUnreachable(e: object): boolean {
  return (
    e instanceof MongoServerSelectionError ||
    e instanceof MongoNetworkError ||
    e instanceof MongoTopologyClosedError ||
    e instanceof MongoClientClosedError ||
    e instanceof MongoNotConnectedError ||
    (e instanceof MongoServerError && typeof e.code === 'number' && UNSERVING_CODES.has(e.code))
  );
}
