import { MongoClient, type MongoClientOptions } from 'mongodb';
import { ConnectionString } from 'mongodb-connection-string-url';
import { WeftError } from '../common/errors';

/** How long an operation waits for a reachable server by default (WEFT_MONGODB_SELECTION_TIMEOUT_MS). */
const DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 1_500;

/** How often the driver checks a reachable server (while it is unreachable: every 0.5 s). */
export const DATABASE_HEARTBEAT_MS = 5_000;

export interface MongoConnectOptions {
  serverSelectionTimeoutMs?: number;
  /** The client emits every command (tests and the bench count what a request sends). */
  monitorCommands?: boolean;
}

/**
 * Weft's defaults for the driver, each applied only where MONGODB_URI does not set the
 * option itself: an operator's URI (TLS, a replica set, `w=…`, `retryWrites=true` for
 * Atlas) is taken as the driver takes it, since an options object would override the URI.
 *
 * - `w: 'majority'`: a write is acknowledged once a majority of a replica set has it, so a
 *   failover does not roll back a record, a checkpoint or a queued webhook that Weft already
 *   acted on. A standalone server and FerretDB acknowledge it like `w: 1`.
 * - `retryWrites: false`: FerretDB has no sessions to retry with (on a MongoDB replica set,
 *   put `retryWrites=true` in the URI; Weft's writes are idempotent and Temporal retries
 *   activities anyway).
 * - A short server selection: while the database is unreachable an operation fails after
 *   this long with MongoServerSelectionError (the API answers 503 database_unavailable, an
 *   activity is retried by Temporal) instead of holding a request open for many seconds. The
 *   driver reconnects by itself: the first operation after the server is back succeeds.
 * - Bounded recovery: the driver's monitor notices a returned server on its next check, and
 *   a check begun against a server that was stopping or starting (port open, no answer) waits
 *   connectTimeoutMS. With the driver's defaults (30 s, heartbeat 10 s) one CI run saw the
 *   API still unavailable 20 s after FerretDB was back; with these, a few seconds at most.
 */
export function mongoClientOptions(uri: string, opts: MongoConnectOptions = {}): MongoClientOptions {
  const named = new Set([...new ConnectionString(uri).searchParams.keys()].map((k) => k.toLowerCase()));
  const unlessNamed = <T extends object>(option: string, value: T): T | object => (named.has(option.toLowerCase()) ? {} : value);
  return {
    ...unlessNamed('w', { writeConcern: { w: 'majority' as const } }),
    ...unlessNamed('retryWrites', { retryWrites: false }),
    ...unlessNamed('serverSelectionTimeoutMS', { serverSelectionTimeoutMS: opts.serverSelectionTimeoutMs ?? DEFAULT_SERVER_SELECTION_TIMEOUT_MS }),
    ...unlessNamed('connectTimeoutMS', { connectTimeoutMS: 5_000 }),
    ...unlessNamed('heartbeatFrequencyMS', { heartbeatFrequencyMS: DATABASE_HEARTBEAT_MS }),
    monitorCommands: opts.monitorCommands ?? false,
  };
}

/**
 * A connected client for MONGODB_URI (any URI the driver takes: TLS, replica sets, SRV), or
 * `database_unavailable` naming the hosts and the driver's reason: a refused certificate or
 * a wrong host stops a process at start with one line. The URI's user and password are
 * never part of the message.
 */
export async function connectMongo(uri: string, opts: MongoConnectOptions = {}): Promise<MongoClient> {
  const client = new MongoClient(uri, mongoClientOptions(uri, opts));
  try {
    await client.connect();
  } catch (err) {
    await client.close().catch(() => undefined);
    const where = new ConnectionString(uri);
    const tls = ['tls', 'ssl'].some((k) => where.searchParams.get(k) === 'true') || where.isSRV;
    throw new WeftError(
      'database_unavailable',
      `Could not connect to MongoDB at ${where.hosts.join(',')}${tls ? ' (TLS)' : ''}: ${String((err as Error).message)
        .replace(/\s+/g, ' ')
        .trim()}`,
      503,
    );
  }
  return client;
}
