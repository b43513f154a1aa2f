import { constants as fsConstants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { Runtime } from '@temporalio/worker';
import { loadConfig, type Config } from '../../common/config';
import { buildCore, buildRegistry } from '../core';
import { startApi } from '../api/build-api';
import { resealInBackground } from '../reseal';
import { describeFailure } from '../process-exit';
import { ALLOW_VARIABLE, type EgressPurpose } from '../../egress/purposes';
import { validateAllowLists } from '../../egress/settings';
import { buildWorkers } from '../worker/run-workers';
import { WeftRuntimeLogger } from '../worker/runtime-logger';
import { isPortFree, LOOPBACK } from '../../scripts/infra/free-port';
import { infraOptionsFromEnv, type InfraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startInfrastructure, type Infrastructure } from '../../scripts/infra/infrastructure';
import { say, table, warn } from './console-output';
import { resolveEncryptionKey } from './encryption-key';
import { ensureEnvironments } from './environments';
import { StartError } from './errors';
import { watchLaunchers } from './launcher-watch';
import type { StartOptions } from './options';
import { startSandboxSimulators, type RunningSandbox } from './sandbox';
import { packageRoot, stateDirectory } from '../package-root';
import { prebuiltWorkflowBundle } from '../worker/prebuilt-bundle';
import { startTelemetry, temporalRuntimeTelemetry } from '../telemetry';

const REPO_ROOT = packageRoot();
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
  let config: Config;
  let infraEnv: InfraOptionsFromEnv;
  try {
    // The console is for people here: runtime logs (pino JSON) from warn up, unless LOG_LEVEL says otherwise.
    config = loadConfig({ LOG_LEVEL: 'warn', ...env });
    infraEnv = infraOptionsFromEnv(env);
  } catch (err) {
    // Nothing has started and nothing was printed yet: the one line that says what to change.
    warn(`could not start Weft: ${describe(err)}`);
    return 1;
  }
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
    validateAllowLists(config); // a mistyped entry stops here, before anything starts
    const port = options.port ?? config.PORT;
    if (port !== 0 && !(await isPortFree(port, API_HOST))) {
      throw new StartError(
        'start_port_busy',
        `Port ${port} on ${API_HOST}, needed for the API, is already in use (another \`npm start\`?). Use --port <port> or PORT=<port>.`,
      );
    }
    const stateDir = stateDirectory(config.WEFT_STATE_DIR);
    const encryption = await resolveEncryptionKey(config, stateDir);
    if (encryption.source === 'generated') say(`generated the credential encryption key: ${encryption.file} (keep it; production sets WEFT_ENCRYPTION_KEY)`);

    // Before any Worker or connection exists. Signals are ours: the stop order below matters.
    Runtime.install({
      logger: new WeftRuntimeLogger('WARN', (queue) => queue === config.WEFT_ACTION_TASK_QUEUE),
      shutdownSignals: [],
      telemetryOptions: temporalRuntimeTelemetry(config),
    });

    const needsServers = !infraEnv.external.temporalAddress || !infraEnv.external.mongodbUri;
    if (needsServers) {
      say(
        `starting ${[!infraEnv.external.temporalAddress && 'the Temporal dev server', !infraEnv.external.mongodbUri && 'FerretDB'].filter(Boolean).join(' and ')}…`,
      );
      if (!(await serversCached(infraEnv))) {
        say(`  (first start: unless they are on PATH, the servers are built with Go now — a few minutes, once; kept in ${infraEnv.binaries.cacheDir})`);
      }
    }
    const infra: Infrastructure = await startInfrastructure({
      mode: 'dev',
      repoRoot: REPO_ROOT,
      stateDir,
      external: infraEnv.external,
      binaries: infraEnv.binaries,
      ports: infraEnv.ports,
      log: (msg) => say(`  ${msg}`),
      onServerOutput: isVerbose(config) ? (server, chunk) => process.stderr.write(prefixLines(`[${server}] `, chunk)) : undefined,
    });
    const startedHere = [infra.temporal.startedHere && 'Temporal dev server', infra.mongodbStartedHere && 'FerretDB'].filter(Boolean).join(' and ');
    if (startedHere) resources.push({ name: startedHere, stop: infra.stop });
    checkpoint();

    // The simulators listen before the core exists: its egress client allows exactly their addresses.
    const registry = buildRegistry(config);
    const simulators = options.sandbox
      ? await startSandboxSimulators({ registry, ports: { luma: options.lumaPort, graph: options.graphPort, github: options.githubPort } })
      : undefined;
    if (simulators) resources.push({ name: 'sandbox simulators', stop: simulators.stop });
    checkpoint();

    // The same core, workers and API as `weft api` and `weft worker`, on the servers started (or found) above.
    const processConfig: Config = {
      ...config,
      MONGODB_URI: infra.mongodbUri,
      TEMPORAL_ADDRESS: infra.temporal.address,
      TEMPORAL_NAMESPACE: infra.temporal.namespace,
      // The dev server started here speaks plain TCP; an external Temporal keeps its TLS and API key.
      temporal: infra.temporal.startedHere
        ? { address: infra.temporal.address, namespace: infra.temporal.namespace, profile: 'npm start' }
        : { ...config.temporal, address: infra.temporal.address, namespace: infra.temporal.namespace },
      WEFT_ENCRYPTION_KEY: encryption.key,
      // Alert links go to this start's own Temporal UI (a second sandbox's is not on the default port).
      ...(infra.temporal.uiUrl && !env.WEFT_TEMPORAL_UI_URL ? { WEFT_TEMPORAL_UI_URL: infra.temporal.uiUrl } : {}),
    };
    // OTEL_* set: traces and metrics of the API and workers of this process, as service `weft` (unless OTEL_SERVICE_NAME).
    const telemetry = startTelemetry(processConfig, 'weft');
    if (telemetry) resources.push({ name: 'OpenTelemetry', stop: telemetry.shutdown });
    // The simulators stand in for providers: only the providers' egress allows them.
    const core = await buildCore(processConfig, { registry, watchDatabase: true, egressAllow: { providers: simulators?.egressAllow }, telemetry });
    const { logger } = core;
    resources.push({ name: 'database connection, Temporal client and outbound connections', stop: core.close });
    checkpoint();
    resealInBackground(core);

    await ensureEnvironments(core.stores, config);
    checkpoint();

    let sandbox: RunningSandbox | undefined;
    if (simulators) {
      const { registerIntegrations, ...running } = simulators;
      sandbox = { ...running, integrations: await registerIntegrations(core.stores, core.cipher) };
      checkpoint();
    }

    if (!config.WEFT_WORKFLOW_BUNDLE && !prebuiltWorkflowBundle()) say('bundling the workflows for the workers…');
    const workers = await buildWorkers(core, { logger: logger.child({ component: 'worker' }) });
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
    checkpoint();

    // npm start is for this machine: the API listens on loopback whatever WEFT_API_HOST says.
    const api = await startApi(core, { port, host: API_HOST, logger: logger.child({ component: 'api' }) });
    resources.push({ name: 'API', stop: api.close });
    checkpoint();

    sandbox?.apiReady(config.WEFT_PUBLIC_URL ?? api.url);
    printSummary({ apiUrl: api.url, infra, config, sandbox });

    const outcome = await Promise.race([signals.first, fatalError]);
    if (outcome !== undefined) {
      warn(`\na worker failed: ${describe(outcome)}\nstopping…`);
      exitCode = 1;
    }
  } catch (err) {
    // A signal during start-up may surface as a failure of the step it interrupted (a Go build).
    if (!(err instanceof StopRequested) && !signals.received) {
      warn(`could not start Weft: ${describe(err)}`);
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

/** One purpose's allow-list as the summary shows it: what is let through besides public addresses, and from where. */
function outboundSummary(purpose: EgressPurpose, allowed: readonly string[], sandbox?: RunningSandbox): string {
  const sources = [ALLOW_VARIABLE[purpose], sandbox && 'sandbox simulators'].filter(Boolean).join(' + ');
  return `${purpose}: public addresses only${allowed.length ? `, plus ${allowed.join(', ')}` : ''} (${sources})`;
}

function printSummary(s: { apiUrl: string; infra: Infrastructure; config: Config; sandbox?: RunningSandbox }): void {
  const { infra } = s;
  const rows: Array<[string, string]> = [
    ['API', s.apiUrl],
    ['Console', `${s.apiUrl}/console (sign in with a secret key)`],
    [
      'Temporal UI',
      infra.temporal.uiUrl
        ? `${infra.temporal.uiUrl}/namespaces/${encodeURIComponent(infra.temporal.namespace)}/workflows`
        : '(external Temporal: use its own UI)',
    ],
    ['Temporal', `${infra.temporal.address}, namespace ${infra.temporal.namespace} (${infra.temporal.startedHere ? 'dev server started here' : 'external'})`],
    ['MongoDB', `${redactUri(infra.mongodbUri)} db ${s.config.MONGODB_DB} (${infra.mongodbStartedHere ? 'FerretDB started here' : 'external'})`],
    ['Workers', `workflows and syncs on ${s.config.WEFT_SYNC_TASK_QUEUE}, actions on ${s.config.WEFT_ACTION_TASK_QUEUE}`],
    [
      'Outbound',
      outboundSummary('providers', [...s.config.WEFT_EGRESS_ALLOW_PROVIDERS, ...s.config.WEFT_EGRESS_ALLOW, ...(s.sandbox?.egressAllow ?? [])], s.sandbox),
    ],
    ['', outboundSummary('webhooks', [...s.config.WEFT_EGRESS_ALLOW_WEBHOOKS, ...s.config.WEFT_EGRESS_ALLOW])],
  ];
  for (const sim of s.sandbox?.simulators ?? []) {
    rows.push([`${sim.id} simulator`, `${sim.url} (${sim.hint}${sim.note ? `; ${sim.note}` : ''})`]);
  }
  say();
  say('Weft is running.');
  say(table(rows));
  if (s.sandbox) {
    const list = s.sandbox.integrations.map((i) =>
      i.outcome === 'skipped' ? `${i.uniqueKey} (skipped: ${i.reason})` : `${i.uniqueKey} → ${i.baseUrl} (${i.outcome})`,
    );
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
    needed.map(([name, explicit]) =>
      explicit
        ? Promise.resolve(true)
        : access(path.join(infraEnv.binaries.cacheDir, name), fsConstants.X_OK).then(
            () => true,
            () => false,
          ),
    ),
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
  return err instanceof StartError ? err.message : describeFailure(err);
}
