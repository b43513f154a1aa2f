import type { Db } from 'mongodb';
import { EnvironmentStore } from './environments';
import { IntegrationStore } from './integrations';
import { ConnectionStore } from './connections';
import { SyncStore } from './syncs';
import { IntegrationTallyStore } from './integration-tallies';
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
import { ProviderDeliveryStore } from './provider-deliveries';
import { ConsoleSessionStore } from './console-sessions';
import type { ExpiryRule } from './ttl';

/** Every collection Weft uses, each behind its own module. */
export interface Stores {
  db: Db;
  environments: EnvironmentStore;
  integrations: IntegrationStore;
  connections: ConnectionStore;
  syncs: SyncStore;
  /** What the integration status counts (written by the connection and sync stores). */
  tallies: IntegrationTallyStore;
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
  /** Webhook deliveries from the providers, verified and stored as they came. */
  providerDeliveries: ProviderDeliveryStore;
  /** Sign-ins to the operator console. */
  consoleSessions: ConsoleSessionStore;
}

export interface StoreOptions {
  requestLogTtlDays: number;
}

export function createStores(db: Db, options: StoreOptions = { requestLogTtlDays: 14 }): Stores {
  return {
    db,
    environments: new EnvironmentStore(db),
    integrations: new IntegrationStore(db),
    connections: new ConnectionStore(db),
    syncs: new SyncStore(db),
    tallies: new IntegrationTallyStore(db),
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
    providerDeliveries: new ProviderDeliveryStore(db),
    consoleSessions: new ConsoleSessionStore(db),
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
    stores.providerDeliveries.ensureIndexes(),
    stores.consoleSessions.ensureIndexes(),
  ]);
  // A store answers nothing (no expiry), one rule or several.
  return results.flatMap((r) => (Array.isArray(r) ? r : r ? [r] : [])).filter((r) => !r.native);
}
