import { constants as fsConstants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startApiServer } from '../../api/server';
import { loadConfig, type Config } from '../../common/config';
import { openCore } from '../core';
import { boundedTemporalCalls } from '../../common/temporal-connection';
import { WeftError } from '../../common/errors';
import { createLogger } from '../../common/logger';
import { parseAllowList } from '../../egress/address-policy';
import { createEgress } from '../../egress/egress';
import { egressSettings } from '../../egress/settings';
import { startExpirySweeper } from '../worker/expiry-sweeper';
import { resealWithCurrentKey } from '../../store/reseal';
import { buildWorkers } from '../worker/run-workers';
import { isPortFree, LOOPBACK } from '../../scripts/infra/free-port';
import { infraOptionsFromEnv, type InfraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startInfrastructure, type Infrastructure } from '../../scripts/infra/infrastructure';
import { say, table, warn } from './console-output';
import { resolveEncryptionKey } from './encryption-key';
import { ensureEnvironments } from './environments';
import { StartError } from './errors';
import { watchLaunchers } from './launcher-watch';
import type { StartOptions } from './options';
import { startSandbox, type RunningSandbox } from './sandbox';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const API_HOST = LOOPBACK;
/** One Ctrl-C can arrive two or three times (terminal group + npm + tsx relaying it): not a "second" press. */
const DUPLICATE_SIGNAL_WINDOW_MS = 1_000;
const SLOW_STOP_HINT_MS = 10_000;

/** Thrown between start-up steps when a signal asked us to stop. */
class StopRequested extends Error {}

interface Resource {
  name: string;
  stop(): Promise<void>;
}

/**
 * `npm start` / `weft start`: the embedded infrastructure (or external servers), one sync
 * worker and the API in this process, optionally the sandbox simulators. Resolves with the
 * process exit code once everything it started has stopped again.
 */
export async function runStart(options: StartOptions, env: NodeJS.ProcessEnv): Promise<number> {
  // The console is for people here: runtime logs (pino JSON) from warn up, unless LOG_LEVEL says otherwise.
  const config = loadConfig({ LOG_LEVEL: 'warn', ...env });
  const logger = createLogger(config.LOG_LEVEL);
  const resources: Resource[] = [];
  const signals = watchStopRequests();
  // Started by an npm script: stop if npm goes away without passing its signal on.
  const launchers = env.npm_lifecycle_event ? watchLaunchers((why) => signals.request(why)) : undefined;
  let exitCode = 0;
  let fatal: ((err: unknown) => void) | undefined;
  const fatalError = new Promise<unknown>((resolve) => (fatal = resolve));

  const checkpoint = () => {
    if (signals.received) throw new StopRequested();
  };

  try {
    parseAllowList(config.WEFT_EGRESS_ALLOW); // a mistyped entry stops here, before anything starts
    const port = options.port ?? config.PORT;
    if (port !== 0 && !(await isPortFree(port, API_HOST))) {
      throw new StartError('start_port_busy', `Port ${port} on ${API_HOST}, needed for the API, is already in use (another \`npm start\`?). Use --port <port> or PORT=<port>.`);
    }
    const stateDir = path.resolve(REPO_ROOT, config.WEFT_STATE_DIR);
    const encryption = await resolveEncryptionKey(config, stateDir);
    if (encryption.source === 'generated') say(`generated the credential encryption key: ${encryption.file} (keep it; production sets WEFT_ENCRYPTION_KEY)`);

    // Before any Worker or connection exists. Signals are ours: the stop order below matters.
    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });

    const infraEnv = infraOptionsFromEnv(env);
    const needsServers = !infraEnv.external.temporalAddress || !infraEnv.external.mongodbUri;
    if (needsServers) {
      say(`starting ${[!infraEnv.external.temporalAddress && 'the Temporal dev server', !infraEnv.external.mongodbUri && 'FerretDB'].filter(Boolean).join(' and ')}…`);
      if (!(await serversCached(infraEnv))) {
        say(`  (first start: unless they are on PATH, the servers are built with Go now — a few minutes, once; kept in ${infraEnv.binaries.cacheDir})`);
      }
    }
    const infra: Infrastructure = await startInfrastructure({
      mode: 'dev',
      repoRoot: REPO_ROOT,
      external: infraEnv.external,
      binaries: infraEnv.binaries,
      ports: infraEnv.ports,
      log: (msg) => say(`  ${msg}`),
      onServerOutput: isVerbose(config) ? (server, chunk) => process.stderr.write(prefixLines(`[${server}] `, chunk)) : undefined,
    });
    const startedHere = [infra.temporal.startedHere && 'Temporal dev server', infra.mongodbStartedHere && 'FerretDB'].filter(Boolean).join(' and ');
    if (startedHere) resources.push({ name: startedHere, stop: infra.stop });
    checkpoint();

    const core = await openCore({
      mongodbUri: infra.mongodbUri,
      dbName: config.MONGODB_DB,
      encryptionKey: encryption.key,
      requestLogTtlDays: config.WEFT_REQUEST_LOG_TTL_DAYS,
      serverSelectionTimeoutMs: config.WEFT_MONGODB_SELECTION_TIMEOUT_MS,
      log: logger.child({ component: 'database' }),
    });
    resources.push({ name: 'database connection', stop: core.close });
    checkpoint();

    await ensureEnvironments(core.stores, config);
    checkpoint();

    let sandbox: RunningSandbox | undefined;
    if (options.sandbox) {
      sandbox = await startSandbox({ stores: core.stores, cipher: core.cipher, registry: core.registry, ports: { luma: options.lumaPort, graph: options.graphPort, github: options.githubPort } });
      resources.push({ name: 'sandbox simulators', stop: sandbox.stop });
      checkpoint();
    }

    // The simulators are the only loopback destinations the sandbox adds to WEFT_EGRESS_ALLOW.
    const outbound = egressSettings(config, sandbox?.egressAllow ?? []);
    const egress = createEgress(outbound);
    resources.push({ name: 'outbound connections', stop: () => egress.close() });

    const clientConnection = await Connection.connect({ address: infra.temporal.address, ...boundedTemporalCalls(config.WEFT_TEMPORAL_CALL_TIMEOUT_MS) });
    resources.push({ name: 'Temporal client', stop: () => clientConnection.close() });
    const temporal = new Client({ connection: clientConnection, namespace: infra.temporal.namespace });
    checkpoint();

    if (!config.WEFT_WORKFLOW_BUNDLE) say('bundling the workflows for the workers…');
    const workers = await buildWorkers(
      core,
      {
        temporalAddress: infra.temporal.address,
        namespace: infra.temporal.namespace,
        syncTaskQueue: config.WEFT_SYNC_TASK_QUEUE,
        actionTaskQueue: config.WEFT_ACTION_TASK_QUEUE,
        maxInlineWaitMs: config.WEFT_MAX_INLINE_WAIT_MS,
        workflowBundlePath: config.WEFT_WORKFLOW_BUNDLE,
      },
      logger.child({ component: 'worker' }),
      egress,
    );
    const workerRun = workers.run();
    workerRun.catch((err: unknown) => fatal?.(err));
    resources.push({
      name: 'workers',
      stop: async () => {
        workers.shutdown();
        await workerRun.catch(() => {}); // a failure was already reported through `fatal`
        await workers.connection.close();
      },
    });
    const sweeper = startExpirySweeper(core.manualExpiry, logger.child({ component: 'expiry-sweeper' }));
    // As `weft worker` does at start: a rotated key, or values of an older Weft not yet bound to their place.
    resealWithCurrentKey(core.stores.db, core.cipher)
      .then((n) => n > 0 && logger.info({ resealed: n }, 'secrets re-sealed with the current encryption key'))
      .catch((err: unknown) => logger.warn({ err }, 'could not re-seal secrets with the current encryption key'));
    resources.push({ name: 'expiry sweeper', stop: async () => sweeper.stop() });
    checkpoint();

    const api = await startApiServer(
      {
        stores: core.stores,
        cipher: core.cipher,
        registry: core.registry,
        temporal,
        logger: logger.child({ component: 'api' }),
        egress,
        settings: { syncTaskQueue: config.WEFT_SYNC_TASK_QUEUE, actionTaskQueue: config.WEFT_ACTION_TASK_QUEUE, heartbeatTimeoutMs: config.WEFT_SYNC_HEARTBEAT_TIMEOUT_MS, publicUrl: config.WEFT_PUBLIC_URL, apiRateLimit: { limit: config.WEFT_API_RATE_LIMIT, windowMs: config.WEFT_API_RATE_LIMIT_WINDOW_S * 1000 }, actionTimeoutMs: config.WEFT_ACTION_TIMEOUT_MS },
      },
      port,
      API_HOST,
      { headersTimeoutMs: config.WEFT_HTTP_HEADERS_TIMEOUT_MS, requestTimeoutMs: config.WEFT_HTTP_REQUEST_TIMEOUT_MS, keepAliveTimeoutMs: config.WEFT_HTTP_KEEP_ALIVE_TIMEOUT_MS },
    );
    resources.push({ name: 'API', stop: api.close });
    checkpoint();

    sandbox?.apiReady(config.WEFT_PUBLIC_URL ?? api.url);
    printSummary({ apiUrl: api.url, infra, config, sandbox, egressAllow: outbound.allow });

    const outcome = await Promise.race([signals.first, fatalError]);
    if (outcome !== undefined) {
      warn(`\na worker failed: ${describe(outcome)}\nstopping…`);
      exitCode = 1;
    }
  } catch (err) {
    // A signal during start-up may surface as a failure of the step it interrupted (a Go build).
    if (!(err instanceof StopRequested) && !signals.received) {
      warn(`\ncould not start Weft: ${describe(err)}`);
      exitCode = 1;
    }
  }

  launchers?.stop();
  const stopped = await stopAll(resources);
  signals.dispose();
  if (!stopped) exitCode = exitCode || 1;
  if (exitCode === 0) say('stopped.');
  return exitCode;
}

/** Reverse start order: API, worker, client, simulators, database, servers. Keeps going past failures. */
async function stopAll(resources: Resource[]): Promise<boolean> {
  let clean = true;
  const slow = setTimeout(() => say('  still stopping (an activity may be finishing its page)… press Ctrl-C again to force'), SLOW_STOP_HINT_MS);
  try {
    for (const resource of [...resources].reverse()) {
      try {
        await resource.stop();
        say(`  stopped ${resource.name}`);
      } catch (err) {
        clean = false;
        warn(`  could not stop ${resource.name}: ${describe(err)}`);
      }
    }
  } finally {
    clearTimeout(slow);
  }
  return clean;
}

interface StopWatch {
  /** Resolves on the first stop request: SIGINT / SIGTERM / SIGHUP, or the launcher going away. */
  first: Promise<void>;
  readonly received: boolean;
  request(reason: string): void;
  dispose(): void;
}

/**
 * First signal: stop gracefully. A later one (a real second Ctrl-C, not the same one relayed
 * by npm and tsx a few milliseconds apart) exits at once; the supervisors of the servers see
 * this process go and stop them, so even that leaves nothing behind.
 */
function watchStopRequests(): StopWatch {
  let firstAt: number | undefined;
  let resolveFirst!: () => void;
  const first = new Promise<void>((resolve) => (resolveFirst = resolve));
  const request = (reason: string) => {
    if (firstAt !== undefined) return;
    firstAt = Date.now();
    say(`\n${reason}: stopping everything this start started… (Ctrl-C again to force)`);
    resolveFirst();
  };
  const handler = (signal: NodeJS.Signals) => {
    if (firstAt === undefined) return request(signal);
    if (Date.now() - firstAt < DUPLICATE_SIGNAL_WINDOW_MS) return;
    warn(`${signal} again: exiting now; the Temporal and FerretDB supervisors stop their servers.`);
    process.exit(130);
  };
  const names: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const name of names) process.on(name, handler);
  return {
    first,
    get received() {
      return firstAt !== undefined;
    },
    request,
    dispose: () => names.forEach((name) => process.off(name, handler)),
  };
}

function printSummary(s: { apiUrl: string; infra: Infrastructure; config: Config; sandbox?: RunningSandbox; egressAllow: readonly string[] }): void {
  const { infra } = s;
  const rows: Array<[string, string]> = [
    ['API', s.apiUrl],
    [
      'Temporal UI',
      infra.temporal.uiUrl ? `${infra.temporal.uiUrl}/namespaces/${encodeURIComponent(infra.temporal.namespace)}/workflows` : '(external Temporal: use its own UI)',
    ],
    ['Temporal', `${infra.temporal.address}, namespace ${infra.temporal.namespace} (${infra.temporal.startedHere ? 'dev server started here' : 'external'})`],
    ['MongoDB', `${redactUri(infra.mongodbUri)} db ${s.config.MONGODB_DB} (${infra.mongodbStartedHere ? 'FerretDB started here' : 'external'})`],
    ['Workers', `syncs on ${s.config.WEFT_SYNC_TASK_QUEUE}, actions on ${s.config.WEFT_ACTION_TASK_QUEUE}`],
    ['Outbound', `public addresses only${s.egressAllow.length ? `, plus ${s.egressAllow.join(', ')}` : ''} (WEFT_EGRESS_ALLOW${s.sandbox ? ' + sandbox simulators' : ''})`],
  ];
  for (const sim of s.sandbox?.simulators ?? []) {
    rows.push([`${sim.id} simulator`, `${sim.url} (${sim.hint}${sim.note ? `; ${sim.note}` : ''})`]);
  }
  say();
  say('Weft is running.');
  say(table(rows));
  if (s.sandbox) {
    const list = s.sandbox.integrations.map((i) => (i.outcome === 'skipped' ? `${i.uniqueKey} (skipped: ${i.reason})` : `${i.uniqueKey} → ${i.baseUrl} (${i.outcome})`));
    say(`  sandbox integrations in dev: ${list.length ? list.join(', ') : 'none (no integration has a simulator yet)'}`);
  }
  say(`runtime logs: pino JSON at level ${s.config.LOG_LEVEL} (LOG_LEVEL=info for more). Press Ctrl-C to stop.`);
  say();
}

/** Whether every server that must start has a binary given explicitly or already in the build cache. */
async function serversCached(infraEnv: InfraOptionsFromEnv): Promise<boolean> {
  const needed: Array<[string, string | undefined]> = [];
  if (!infraEnv.external.temporalAddress) needed.push(['temporal', infraEnv.binaries.temporal]);
  if (!infraEnv.external.mongodbUri) needed.push(['ferretdb', infraEnv.binaries.ferretdb]);
  const present = await Promise.all(
    needed.map(([name, explicit]) => (explicit ? Promise.resolve(true) : access(path.join(infraEnv.binaries.cacheDir, name), fsConstants.X_OK).then(() => true, () => false))),
  );
  return present.every(Boolean);
}

function isVerbose(config: Config): boolean {
  return config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace';
}

function prefixLines(prefix: string, chunk: string): string {
  return chunk.replace(/^(?=.)/gm, prefix);
}

/** An external MongoDB URI may carry a password; the console does not need it. */
function redactUri(uri: string): string {
  return uri.replace(/^([a-z+]+:\/\/[^:/@]+):[^@/]*@/i, '$1:***@');
}

function describe(err: unknown): string {
  if (err instanceof StartError) return err.message;
  if (err instanceof WeftError) return `${err.message} (${err.code})`;
  if (err instanceof Error) return err.stack ?? err.message;
  return String(err);
}
