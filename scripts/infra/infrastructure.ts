import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BINARY_SPECS, resolveBinary } from './binaries';
import { loadDevConfig, type DevConfig } from './dev-config';
import { InfraError } from './errors';
import { startFerretDB, type FerretDBServer } from './ferretdb-server';
import { tryAcquirePidLock } from './pid-lock';
import { getFreePort, getFreePorts, isPortFree, LOOPBACK } from './free-port';
import { PORT_ENV } from './infra-env';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-dev-server';

interface CommonInfrastructureOptions {
  repoRoot: string;
  /** Servers that already exist; nothing is started for a part that is given here. */
  external: { temporalAddress?: string; temporalNamespace?: string; mongodbUri?: string };
  binaries: { temporal?: string; ferretdb?: string; cacheDir?: string };
  /** Dev-mode overrides of the default ports (WEFT_TEMPORAL_PORT, WEFT_TEMPORAL_UI_PORT, WEFT_FERRETDB_PORT). */
  ports?: { temporal?: number; temporalUi?: number; ferretdb?: number };
  log: (msg: string) => void;
  /** Server stdout/stderr, e.g. for `npm start` to forward; tests leave it unset (kept for error messages). */
  onServerOutput?: (server: 'temporal' | 'ferretdb', chunk: string) => void;
  /** FerretDB log level; its "warn" logs a full wire dump for every failed command (duplicate keys included). */
  ferretdbLogLevel?: string;
  readyTimeoutMs?: number;
}

/**
 * dev: fixed ports from temporal-dev.yaml (or the WEFT_*_PORT overrides), the servers' data
 * kept in `stateDir` (WEFT_STATE_DIR, resolved), which one start at a time may use.
 * test: free ports, throwaway state.
 */
export type StartInfrastructureOptions = CommonInfrastructureOptions & ({ mode: 'dev'; stateDir: string } | { mode: 'test' });

export interface Infrastructure {
  temporal: { address: string; namespace: string; uiUrl?: string; startedHere: boolean };
  mongodbUri: string;
  mongodbStartedHere: boolean;
  /** Spawn-to-ready time of each server started here, in milliseconds. */
  readyInMs: { temporal?: number; ferretdb?: number };
  /** Stops what was started, in reverse order. Idempotent. */
  stop(): Promise<void>;
}

interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

/** The namespace an external cluster is used with when TEMPORAL_NAMESPACE is not set. */
const DEFAULT_EXTERNAL_NAMESPACE = 'default';

export async function startInfrastructure(opts: StartInfrastructureOptions): Promise<Infrastructure> {
  const needTemporal = !opts.external.temporalAddress;
  const needMongo = !opts.external.mongodbUri;
  const started: Stoppable[] = [];
  const stopAll = memoize(async () => {
    // Reverse order; keep going on failure so one stuck server does not leak the others.
    const errors: unknown[] = [];
    for (const item of [...started].reverse()) {
      await item.stop().catch((err: unknown) => errors.push(err));
    }
    if (errors.length) throw errors[0];
  });

  try {
    const config = needTemporal ? await loadDevConfig(opts.repoRoot) : undefined;
    if (config && config.version !== BINARY_SPECS.temporal.version) {
      opts.log(`warning: temporal-dev.yaml asks for Temporal CLI ${config.version}, but Weft builds and checks ${BINARY_SPECS.temporal.version}`);
    }
    const plan = opts.mode === 'dev' ? await planDev(opts, opts.stateDir, config, needTemporal, needMongo, started) : await planTest(opts, config, needMongo);

    const [temporalBinary, ferretdbBinary] = await Promise.all([
      needTemporal ? resolveBinary('temporal', { explicitPath: opts.binaries.temporal, cacheDir: opts.binaries.cacheDir, log: opts.log }) : undefined,
      needMongo ? resolveBinary('ferretdb', { explicitPath: opts.binaries.ferretdb, cacheDir: opts.binaries.cacheDir, log: opts.log }) : undefined,
    ]);

    if (plan.ferretdb?.tempRoot) {
      const tempRoot = plan.ferretdb.tempRoot;
      started.push({ name: 'ferretdb temp dir', stop: () => rm(tempRoot, { recursive: true, force: true }) });
    }

    // In parallel: the Temporal dev server dominates start-up; FerretDB is ready well before it.
    const results = await Promise.allSettled([
      temporalBinary && config && plan.temporal
        ? startTemporalDevServer({
            binary: temporalBinary,
            port: plan.temporal.port,
            uiPort: plan.temporal.uiPort,
            dbFile: plan.temporal.dbFile,
            namespace: plan.temporal.namespace,
            searchAttributes: config.searchAttributes,
            dynamicConfig: config.dynamicConfig,
            logLevel: config.logLevel,
            readyTimeoutMs: opts.readyTimeoutMs,
            onOutput: opts.onServerOutput && ((chunk) => opts.onServerOutput!('temporal', chunk)),
          })
        : undefined,
      ferretdbBinary && plan.ferretdb
        ? startFerretDB({
            binary: ferretdbBinary,
            port: plan.ferretdb.port,
            debugPort: plan.ferretdb.debugPort,
            dataDir: plan.ferretdb.dataDir,
            stateDir: plan.ferretdb.stateDir,
            logLevel: opts.ferretdbLogLevel ?? 'error',
            readyTimeoutMs: opts.readyTimeoutMs,
            onOutput: opts.onServerOutput && ((chunk) => opts.onServerOutput!('ferretdb', chunk)),
          })
        : undefined,
    ]);
    const [temporalResult, ferretdbResult] = results;
    // Temporal first so the reverse-order stop takes FerretDB down before it.
    const temporal = settledValue<TemporalDevServer | undefined>(temporalResult);
    const ferretdb = settledValue<FerretDBServer | undefined>(ferretdbResult);
    if (temporal) started.push({ name: 'temporal', stop: temporal.stop });
    if (ferretdb) started.push({ name: 'ferretdb', stop: ferretdb.stop });
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;

    if (temporal) opts.log(`temporal dev server ready at ${temporal.address} in ${(temporal.readyInMs / 1000).toFixed(1)} s`);
    if (ferretdb) opts.log(`ferretdb ready at ${ferretdb.uri} in ${(ferretdb.readyInMs / 1000).toFixed(1)} s`);

    return {
      temporal: temporal
        ? { address: temporal.address, namespace: temporal.namespace, uiUrl: temporal.uiUrl, startedHere: true }
        : {
            address: opts.external.temporalAddress!,
            namespace: opts.external.temporalNamespace ?? DEFAULT_EXTERNAL_NAMESPACE,
            startedHere: false,
          },
      mongodbUri: ferretdb ? ferretdb.uri : opts.external.mongodbUri!,
      mongodbStartedHere: Boolean(ferretdb),
      readyInMs: { temporal: temporal?.readyInMs, ferretdb: ferretdb?.readyInMs },
      stop: stopAll,
    };
  } catch (err) {
    // Whatever did start must not outlive a failed start-up.
    await stopAll().catch(() => {});
    throw err;
  }
}

interface Plan {
  temporal?: { port: number; uiPort: number | null; dbFile?: string; namespace: string };
  ferretdb?: { port: number; debugPort: number; dataDir: string; stateDir: string; tempRoot?: string };
}

/** The lock file of a state directory, held by the process whose servers use it. */
export const STATE_DIR_LOCK_FILE = 'servers.lock';

async function planDev(
  opts: StartInfrastructureOptions,
  stateDir: string,
  config: DevConfig | undefined,
  needTemporal: boolean,
  needMongo: boolean,
  started: Stoppable[],
): Promise<Plan> {
  const plan: Plan = {};
  if (!needTemporal && !needMongo) return plan;
  // First the state directory: two servers writing one SQLite file would damage it, and
  // "set WEFT_STATE_DIR" is the first thing a second start beside a running one needs.
  await lockStateDir(stateDir, opts.log, started);
  const busy: BusyPort[] = [];
  if (needTemporal && config) {
    const port = opts.ports?.temporal ?? config.port;
    const uiPort = config.ui.enabled ? (opts.ports?.temporalUi ?? config.ui.port) : null;
    busy.push(
      ...(await busyPorts([
        {
          port,
          what: 'the Temporal frontend (gRPC)',
          envName: PORT_ENV.temporal,
          alternative: 'TEMPORAL_ADDRESS=<host:port> to use a Temporal server that is already running',
        },
        ...(uiPort === null
          ? []
          : [
              {
                port: uiPort,
                what: 'the Temporal web UI',
                envName: PORT_ENV.temporalUi,
                alternative: 'ui.enabled: false in temporal-dev.yaml to run without the UI',
              },
            ]),
      ])),
    );
    plan.temporal = {
      port,
      uiPort,
      // Relative to the state directory, so WEFT_STATE_DIR places it with everything else.
      dbFile: path.resolve(stateDir, config.dbFile),
      namespace: opts.external.temporalNamespace ?? config.namespace,
    };
  }
  if (needMongo) {
    const port = opts.ports?.ferretdb ?? 27017;
    busy.push(
      ...(await busyPorts([
        {
          port,
          what: 'FerretDB (MongoDB wire protocol)',
          envName: PORT_ENV.ferretdb,
          alternative: 'MONGODB_URI=<uri> to use a MongoDB that is already running',
        },
      ])),
    );
    plan.ferretdb = {
      port,
      // Nobody connects to the debug (metrics) endpoint by a fixed port; a free one avoids clashes.
      debugPort: await getFreePort(),
      dataDir: path.join(stateDir, 'ferretdb', 'data'),
      stateDir: path.join(stateDir, 'ferretdb', 'state'),
    };
  }
  if (busy.length) throw portsBusyError(busy);
  return plan;
}

/**
 * Takes `<stateDir>/servers.lock` for as long as the servers run (released by stop(), last);
 * a lock whose process is gone is taken over. Held by a live process: infra_state_dir_busy.
 */
async function lockStateDir(stateDir: string, log: (msg: string) => void, started: Stoppable[]): Promise<void> {
  await mkdir(stateDir, { recursive: true });
  const lockFile = path.join(stateDir, STATE_DIR_LOCK_FILE);
  const attempt = await tryAcquirePidLock(lockFile, (stale) => log(`taking over ${lockFile} (pid ${stale.pid} is gone)`));
  if (attempt.acquired) {
    started.push({ name: 'state directory lock', stop: attempt.release });
    return;
  }
  const holder = attempt.holder ? `pid ${attempt.holder.pid}${attempt.holder.startedAt ? `, since ${attempt.holder.startedAt}` : ''}` : 'starting now';
  throw new InfraError(
    'infra_state_dir_busy',
    `The state directory ${stateDir} is in use by another Weft (${holder}, lock ${lockFile}). ` +
      `To run a second one beside it, set WEFT_STATE_DIR=<another directory> and free ports (${PORT_ENV.temporal}, ${PORT_ENV.temporalUi}, ${PORT_ENV.ferretdb}, PORT).`,
    { stateDir, lockFile, holderPid: attempt.holder?.pid },
  );
}

async function planTest(opts: StartInfrastructureOptions, config: DevConfig | undefined, needMongo: boolean): Promise<Plan> {
  const plan: Plan = {};
  // Drawn together so the three are distinct.
  const [temporalPort, ferretdbPort, debugPort] = await getFreePorts(3);
  if (config) {
    // In memory and headless: nothing to clean up, nothing extra listening.
    plan.temporal = { port: temporalPort, uiPort: null, namespace: opts.external.temporalNamespace ?? config.namespace };
  }
  if (needMongo) {
    const tempRoot = await mkdtemp(path.join(os.tmpdir(), 'weft-ferretdb-'));
    plan.ferretdb = { port: ferretdbPort, debugPort, dataDir: path.join(tempRoot, 'data'), stateDir: path.join(tempRoot, 'state'), tempRoot };
  }
  return plan;
}

interface PortNeed {
  port: number;
  what: string;
  envName: string;
  /** The other way out, when there is one (an external server). */
  alternative: string;
}
type BusyPort = PortNeed;

async function busyPorts(needs: PortNeed[]): Promise<BusyPort[]> {
  const free = await Promise.all(needs.map((n) => isPortFree(n.port, LOOPBACK)));
  return needs.filter((_, i) => !free[i]);
}

/** Every taken port in one message, so a second start beside a running one learns all it must set at once. */
function portsBusyError(busy: BusyPort[]): InfraError {
  const parts = busy.map((b) => `${b.port} for ${b.what}: set ${b.envName}=<free port>, or ${b.alternative}`);
  return new InfraError(
    'infra_port_busy',
    `${busy.length === 1 ? 'A port' : 'Ports'} on ${LOOPBACK} already in use (another \`npm start\`?): ${parts.join('; ')}.`,
    { ports: busy.map((b) => ({ port: b.port, envName: b.envName })) },
  );
}

function settledValue<T>(result: PromiseSettledResult<T>): T | undefined {
  return result.status === 'fulfilled' ? result.value : undefined;
}

function memoize(fn: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined;
  return () => (promise ??= fn());
}
