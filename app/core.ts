import type { MongoClient } from 'mongodb';
import { Client } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { CredentialCipher } from '../auth/credential-cipher';
import { PayloadEncryptionCodec } from '../auth/payload-codec';
import type { Config } from '../common/config';
import { WeftError } from '../common/errors';
import { createLogger, type Logger } from '../common/logger';
import type { DestinationStream } from 'pino';
import type { Egresses, EgressSettings, EgressPurpose } from '../egress/egress';
import { createEgresses, legacyAllowWarning, type ExtraAllow } from '../egress/settings';
import { integrations } from '../integrations';
import { withIntegrationsDir } from '../runtime/integration-loader';
import { IntegrationRegistry } from '../runtime/registry';
import { createStores, ensureIndexes, type Stores } from '../store/db';
import { connectMongo, DATABASE_HEARTBEAT_MS } from '../store/mongo-client';
import { watchDatabase } from '../store/database-watch';
import { refuseUnboundIfRetired } from '../store/reseal';
import type { ExpiryRule } from '../store/ttl';
import { ensureSearchAttributes } from './temporal-search-attributes';
import { boundedTemporalCalls, connectTemporalClient, temporalConnectionOptions } from './temporal-connection';
import type { Telemetry } from './telemetry';

/** The database side of the core: what a one-shot command (`weft reseal`) needs too. */
export interface Storage {
  mongo: MongoClient;
  stores: Stores;
  cipher: CredentialCipher;
  /** Retention the database cannot enforce itself; the worker sweeps these. */
  manualExpiry: ExpiryRule[];
  close(): Promise<void>;
}

/** What the API and the workers of a process stand on, built once per process by buildCore. */
export interface Core extends Storage {
  config: Config;
  logger: Logger;
  registry: IntegrationRegistry;
  /** The process's ways out, one per purpose: `providers` (provider APIs, proxy, token endpoints), `webhooks` (the app's receivers, chat alerts). */
  egress: Egresses;
  temporal: Client;
  /** Encrypts every payload the process's Temporal client and workers write (auth/payload-codec.ts); the codec endpoint uses it too. */
  payloadCodec: PayloadEncryptionCodec;
  /** The process's OpenTelemetry (app/telemetry.ts), null when OTEL_* configures none. */
  telemetry: Telemetry | null;
}

export interface StorageOptions {
  /** A long-running process watches the database connection and logs its state here; a one-shot command does not. */
  watchLog?: Logger;
  /** The MongoClient emits commandStarted events (the bench counts commands). */
  monitorCommands?: boolean;
}

export interface ProcessLogOptions {
  /** The `component` of every line (`api`, `worker`); npm start's root logger has none. */
  component?: string;
  /** Where the lines go (tests capture them); default stdout. */
  destination?: DestinationStream;
  /** Default: LOG_LEVEL. */
  level?: string;
}

export interface CoreOptions extends Omit<StorageOptions, 'watchLog'> {
  /** Already built by the caller (npm start's sandbox needs it before the core); otherwise built here. */
  registry?: IntegrationRegistry;
  log?: ProcessLogOptions;
  /** A long-running process watches its database connection (logged as component `database`). */
  watchDatabase?: boolean;
  /** The process's started OpenTelemetry (startTelemetry): its Temporal client then propagates trace context. */
  telemetry?: Telemetry | null;
  /** Allow-list entries, per purpose, for servers this process started itself: the sandbox's simulators (providers), a test's receivers. */
  egressAllow?: ExtraAllow;
  /** Egress timeouts other than the configured ones (tests). */
  egressTimeouts?: Partial<Omit<EgressSettings<EgressPurpose>, 'allow' | 'purpose'>>;
}

/** Every integration Weft knows: the pre-built ones and the operator's own (WEFT_INTEGRATIONS_DIR); one registry per process. */
export function buildRegistry(config: Pick<Config, 'WEFT_INTEGRATIONS_DIR'>): IntegrationRegistry {
  return new IntegrationRegistry(withIntegrationsDir(integrations, config.WEFT_INTEGRATIONS_DIR));
}

/**
 * The process's logger. It comes from the registry the core uses, so that it redacts every
 * secret header a registered provider declares (custom integrations' too).
 */
function processLogger(config: Pick<Config, 'LOG_LEVEL'>, registry: IntegrationRegistry, log: ProcessLogOptions = {}): Logger {
  const logger = createLogger(log.level ?? config.LOG_LEVEL, log.destination, { secretHeaders: registry.secretHeaders() });
  return log.component ? logger.child({ component: log.component }) : logger;
}

/** The database, its stores (indexes ensured) and the credential cipher. Needs MONGODB_URI and WEFT_ENCRYPTION_KEY. */
export async function openStorage(config: Config, opts: StorageOptions = {}): Promise<Storage> {
  if (!config.MONGODB_URI) throw new WeftError('missing_mongodb_uri', 'MONGODB_URI is required (the MongoDB-wire server Weft stores its data in).');
  if (!config.WEFT_ENCRYPTION_KEY) throw new WeftError('missing_encryption_key', 'WEFT_ENCRYPTION_KEY is required to store credentials.');
  const cipher = new CredentialCipher(config.WEFT_ENCRYPTION_KEY);
  const mongo = await connectMongo(config.MONGODB_URI, {
    serverSelectionTimeoutMs: config.WEFT_MONGODB_SELECTION_TIMEOUT_MS,
    monitorCommands: opts.monitorCommands,
  });
  try {
    const stores = createStores(mongo.db(config.MONGODB_DB), { requestLogTtlDays: config.WEFT_REQUEST_LOG_TTL_DAYS });
    const manualExpiry = await ensureIndexes(stores);
    await refuseUnboundIfRetired(stores.db, cipher);
    const watch = opts.watchLog ? watchDatabase(mongo, { heartbeatFrequencyMs: DATABASE_HEARTBEAT_MS, log: opts.watchLog }) : null;
    return {
      mongo,
      stores,
      cipher,
      manualExpiry,
      close: async () => {
        watch?.stop();
        // Request-log entries still batched in memory are written before the connection goes.
        await stores.requestLogs.flush().catch(() => undefined);
        await mongo.close();
      },
    };
  } catch (err) {
    await mongo.close().catch(() => undefined);
    throw err;
  }
}

/**
 * The core of a long-running process (npm start, `weft api`, `weft worker`, the tests' and
 * the bench's stacks): storage, the integration registry, the egress client and the Temporal
 * client, each built once from `config`. Needs MONGODB_URI, TEMPORAL_ADDRESS and
 * WEFT_ENCRYPTION_KEY.
 */
export async function buildCore(config: Config, opts: CoreOptions): Promise<Core> {
  // Also first: an address missing, a certificate file unreadable.
  const temporalOptions = temporalConnectionOptions(config.temporal);
  // First: a mistyped WEFT_EGRESS_ALLOW_* entry stops here, before any connection is opened.
  const egress = createEgresses(config, { extraAllow: opts.egressAllow, timeouts: opts.egressTimeouts });
  const opened: Array<() => Promise<void>> = [() => egress.close()];
  const closeAll = async () => {
    for (const close of [...opened].reverse()) await close().catch(() => undefined);
  };
  try {
    const registry = opts.registry ?? buildRegistry(config);
    const logger = processLogger(config, registry, opts.log);
    const legacyAllow = legacyAllowWarning(config);
    if (legacyAllow) logger.warn({ variable: 'WEFT_EGRESS_ALLOW' }, legacyAllow);
    const storage = await openStorage(config, {
      watchLog: opts.watchDatabase ? logger.child({ component: 'database' }) : undefined,
      monitorCommands: opts.monitorCommands,
    });
    opened.push(storage.close);
    const connection = await connectTemporalClient(config.temporal, { ...temporalOptions, ...boundedTemporalCalls(config.WEFT_TEMPORAL_CALL_TIMEOUT_MS) });
    opened.push(() => connection.close());
    // openStorage checked the key is there. Every payload this client writes is encrypted.
    const payloadCodec = new PayloadEncryptionCodec(config.WEFT_ENCRYPTION_KEY!);
    // With traces on, a workflow started here continues the caller's trace (context in its headers).
    const temporal = new Client({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      dataConverter: { payloadCodecs: [payloadCodec] },
      ...(opts.telemetry?.spanProcessor && { interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } }),
    });
    await ensureSearchAttributes(temporal, config.TEMPORAL_NAMESPACE, logger);
    return {
      ...storage,
      config,
      logger,
      registry,
      egress,
      temporal,
      payloadCodec,
      telemetry: opts.telemetry ?? null,
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/**
 * A standalone process (`weft api`, `weft worker`) runs against servers that already exist;
 * without them it stops at once with `<process>_not_configured` instead of a driver timeout.
 */
export function requireServers(config: Config, process: 'api' | 'worker' | 'setup'): void {
  const missing = [
    !config.temporal.address && 'TEMPORAL_ADDRESS',
    !config.MONGODB_URI && 'MONGODB_URI',
    !config.WEFT_ENCRYPTION_KEY && 'WEFT_ENCRYPTION_KEY',
  ].filter(Boolean);
  if (missing.length === 0) return;
  throw new WeftError(
    `${process}_not_configured`,
    `weft ${process} needs TEMPORAL_ADDRESS (or a Temporal profile with an address: TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE), MONGODB_URI and WEFT_ENCRYPTION_KEY (missing: ${missing.join(', ')}; in dev the key is in WEFT_STATE_DIR/encryption-key, .weft/ by default). \`npm start\` runs the API and a worker in one process with its own servers.`,
  );
}
