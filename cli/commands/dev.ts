import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { watch } from 'chokidar';
import type { Command } from 'commander';
import { WeftError } from '../../common/errors';
import { packageRoot, stateDirectory } from '../../app/package-root';
import { loadConfig } from '../../common/config';
import { addStartOptions, type StartOptions } from '../../app/start/options';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { devServerTemporalEnv } from '../../common/temporal-settings';
// Types only: the module (the MongoDB driver, the Temporal client, grpc, yaml) is required when
// `weft dev` runs, so every other command starts without it. `require`, not `import()`: see
// cli/weft.ts (bin.js without a build runs the sources through tsx's require hook).
import type * as InfraModule from '../../scripts/infra/infrastructure';

interface DevOptions extends StartOptions {
  project: string;
  workersOnly: boolean;
}

/** Changes that land together (an editor's save, a git checkout) restart once. */
const SETTLE_MS = 150;
/** A worker finishing a long activity gets this long to stop before it is killed. */
const STOP_TIMEOUT_MS = 20_000;

/**
 * `weft dev`: Weft with a project's integrations (`<project>/integrations` as
 * WEFT_INTEGRATIONS_DIR), restarted when a file there changes, so the next run uses the
 * changed code. Workers and API keep their registry for the life of a process (both load
 * the folder at start, and Node cannot unload modules), so the restartable part runs as a
 * child process: `weft start` (API and workers) or, with --workers-only, `weft worker`. The
 * Temporal dev server and FerretDB are started once, here, so a restart does not restart
 * them. A definition Weft refuses stops the child with its message; the next change tries again.
 */
export function registerDev(program: Command): void {
  addStartOptions(
    program
      .command('dev')
      .description("Run Weft with a project's integrations and restart the workers and API when a file in them changes.")
      .option('--project <dir>', 'the project folder (its integrations/ is loaded)', '.')
      .option(
        '--workers-only',
        'restart only workers (`weft worker`), against servers and an API that already run (TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY)',
        false,
      ),
  ).action(async (o: DevOptions) => {
    process.exitCode = await runDev(o, process.env);
  });
}

async function runDev(o: DevOptions, env: NodeJS.ProcessEnv): Promise<number> {
  const integrationsDir = join(resolve(o.project), 'integrations');
  if (!existsSync(integrationsDir) || !statSync(integrationsDir).isDirectory()) {
    throw new WeftError('dev_integrations_missing', `${integrationsDir} is not a folder; weft dev runs a project made by \`weft init\` (its integrations/).`);
  }
  const say = (line: string) => process.stdout.write(`weft dev: ${line}\n`);

  let infra: InfraModule.Infrastructure | undefined;
  let childEnv: NodeJS.ProcessEnv = { ...env, WEFT_INTEGRATIONS_DIR: integrationsDir };
  if (!o.workersOnly) {
    const infraEnv = infraOptionsFromEnv(env);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { startInfrastructure }: typeof InfraModule = require('../../scripts/infra/infrastructure');
    // The servers' data goes where the child's `weft start` keeps the encryption key: WEFT_STATE_DIR.
    const stateDir = stateDirectory(loadConfig(env).WEFT_STATE_DIR);
    infra = await startInfrastructure({ mode: 'dev', repoRoot: packageRoot(), stateDir, ...infraEnv, log: (msg) => say(msg) });
    childEnv = infra.temporal.startedHere
      ? devServerTemporalEnv(childEnv, infra.temporal.address, infra.temporal.namespace)
      : { ...childEnv, TEMPORAL_ADDRESS: infra.temporal.address, TEMPORAL_NAMESPACE: infra.temporal.namespace };
    childEnv.MONGODB_URI = infra.mongodbUri;
    if (infra.temporal.uiUrl) say(`Temporal UI ${infra.temporal.uiUrl}`);
  }
  const args = o.workersOnly ? ['worker'] : ['start', ...startArgs(o)];

  let child: ChildProcess | undefined;
  const start = () => {
    const started = spawn(process.execPath, [join(packageRoot(), 'cli', 'bin.js'), ...args], { env: childEnv, stdio: 'inherit' });
    child = started;
    say(`weft ${args[0]} started (pid ${started.pid}) with WEFT_INTEGRATIONS_DIR=${integrationsDir}`);
    started.once('exit', (code, signal) => {
      if (child === started) {
        child = undefined;
        say(`weft ${args[0]} exited (${signal ?? code}); waiting for a change in ${integrationsDir} to start it again`);
      }
    });
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  // One restart at a time; changes during a restart lead to one more.
  let restarting: Promise<void> | null = null;
  let pending = false;
  const restart = async (why: string) => {
    if (restarting) {
      pending = true;
      return;
    }
    restarting = (async () => {
      say(`${why}: restarting weft ${args[0]}`);
      await stop();
      start();
    })();
    await restarting;
    restarting = null;
    if (pending) {
      pending = false;
      await restart('more changes');
    }
  };

  let settle: NodeJS.Timeout | undefined;
  const changed: string[] = [];
  const watcher = watch(integrationsDir, {
    ignoreInitial: true,
    ignored: (path) => /(^|[\\/])(node_modules|\.[^\\/]+)([\\/]|$)/.test(relative(integrationsDir, path)),
  });
  watcher.on('all', (_event, path) => {
    changed.push(relative(integrationsDir, path));
    clearTimeout(settle);
    settle = setTimeout(() => void restart(`changed: ${changed.splice(0).join(', ')}`), SETTLE_MS);
  });
  await once(watcher, 'ready');
  start();

  await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
  say('stopping');
  clearTimeout(settle);
  await watcher.close();
  await restarting;
  await stop();
  await infra?.stop();
  return 0;
}

/** The start options given to `weft dev`, passed on to `weft start`. */
function startArgs(o: StartOptions): string[] {
  const ports: Array<[string, number | undefined]> = [
    ['--port', o.port],
    ['--luma-port', o.lumaPort],
    ['--graph-port', o.graphPort],
    ['--github-port', o.githubPort],
  ];
  return [...(o.sandbox ? ['--sandbox'] : []), ...ports.flatMap(([flag, value]) => (value === undefined ? [] : [flag, String(value)]))];
}
