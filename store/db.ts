import { MongoClient, type Db } from 'mongodb';
import { EnvironmentStore } from './environments';
import { IntegrationStore } from './integrations';
import { ConnectionStore } from './connections';
import { SyncStore } from './syncs';
import { SyncRunStore } from './sync-runs';
import { SyncOperationStore } from './sync-operations';
import { RecordStore } from './records';
import { RequestLogStore } from './request-logs';
import { RateBudgetStore } from './rate-budgets';
import { WebhookDeliveryStore } from './webhook-deliveries';
import { WebhookOutboxStore } from './webhook-outbox';
import { ConnectSessionStore } from './connect-sessions';
import { AuthStateStore } from './auth-states';
import { ApiRateCounterStore } from './api-rate-counters';
import { AlertStateStore } from './alert-states';
import type { ExpiryRule } from './ttl';

/** Every collection Weft uses, each behind its own module. */
export interface Stores {
  db: Db;
  environments: EnvironmentStore;
  integrations: IntegrationStore;
  connections: ConnectionStore;
  syncs: SyncStore;
  syncRuns: SyncRunStore;
  syncOperations: SyncOperationStore;
  records: RecordStore;
  requestLogs: RequestLogStore;
  rateBudgets: RateBudgetStore;
  webhookDeliveries: WebhookDeliveryStore;
  webhookOutbox: WebhookOutboxStore;
  connectSessions: ConnectSessionStore;
  authStates: AuthStateStore;
  apiRateCounters: ApiRateCounterStore;
  alertStates: AlertStateStore;
}

export interface StoreOptions {
  requestLogTtlDays: number;
}

/** How long an operation waits for a reachable server by default (WEFT_MONGODB_SELECTION_TIMEOUT_MS). */
const DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 1_500;

/** How often the driver checks a reachable server (while it is unreachable: every 0.5 s). */
export const DATABASE_HEARTBEAT_MS = 5_000;

/** `monitorCommands`: the client emits every command (tests check which filters a request sends). */
export async function connectMongo(uri: string, opts: { serverSelectionTimeoutMs?: number; monitorCommands?: boolean } = {}): Promise<MongoClient> {
  // FerretDB and MongoDB both accept these; retryWrites is off because FerretDB has no
  // transactions/sessions to retry with. A short server selection: while the database is
  // unreachable an operation fails after this long with MongoServerSelectionError (the API
  // answers 503 database_unavailable, an activity is retried by Temporal) instead of holding
  // a request open for many seconds. The driver reconnects by itself: the first
  // operation after the server is back succeeds.
  // Recovery is bounded too: the driver's monitor notices a returned server on its next
  // check, and a check begun against a server that was stopping or starting (port open, no
  // answer) waits connectTimeoutMS. With the defaults (30 s, heartbeat 10 s) one CI run saw
  // the API still unavailable 20 s after FerretDB was back; with these, a few seconds at most.
  const client = new MongoClient(uri, {
    retryWrites: false,
    serverSelectionTimeoutMS: opts.serverSelectionTimeoutMs ?? DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
    connectTimeoutMS: 5_000,
    heartbeatFrequencyMS: DATABASE_HEARTBEAT_MS,
    monitorCommands: opts.monitorCommands ?? false,
  });
  await client.connect();
  return client;
}

export function createStores(db: Db, options: StoreOptions = { requestLogTtlDays: 14 }): Stores {
  return {
    db,
    environments: new EnvironmentStore(db),
    integrations: new IntegrationStore(db),
    connections: new ConnectionStore(db),
    syncs: new SyncStore(db),
    syncRuns: new SyncRunStore(db),
    syncOperations: new SyncOperationStore(db),
    records: new RecordStore(db),
    requestLogs: new RequestLogStore(db, options.requestLogTtlDays),
    rateBudgets: new RateBudgetStore(db),
    webhookDeliveries: new WebhookDeliveryStore(db),
    webhookOutbox: new WebhookOutboxStore(db),
    connectSessions: new ConnectSessionStore(db),
    authStates: new AuthStateStore(db),
    apiRateCounters: new ApiRateCounterStore(db),
    alertStates: new AlertStateStore(db),
  };
}

/**
 * Indexes are created at start-up, idempotently, by each store. Returns the expiry rules
 * that the server cannot enforce itself (see ttl.ts), for the periodic sweep.
 */
export async function ensureIndexes(stores: Stores): Promise<ExpiryRule[]> {
  const results = await Promise.all([
    stores.environments.ensureIndexes(),
    stores.integrations.ensureIndexes(),
    stores.connections.ensureIndexes(),
    stores.syncs.ensureIndexes(),
    stores.syncRuns.ensureIndexes(),
    stores.syncOperations.ensureIndexes(),
    stores.records.ensureIndexes(),
    stores.requestLogs.ensureIndexes(),
    stores.rateBudgets.ensureIndexes(),
    stores.webhookDeliveries.ensureIndexes(),
    stores.webhookOutbox.ensureIndexes(),
    stores.connectSessions.ensureIndexes(),
    stores.authStates.ensureIndexes(),
    stores.apiRateCounters.ensureIndexes(),
    stores.alertStates.ensureIndexes(),
  ]);
  // A store answers nothing (no expiry), one rule or several.
  return results.flatMap((r) => (Array.isArray(r) ? r : r ? [r] : [])).filter((r) => !r.native);
}
