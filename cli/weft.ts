/**
 * The `weft` command. `weft start` is `npm start`; `weft worker` runs one more sync worker
 * against existing servers (TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY).
 *
 * Later: `weft dryrun` (run a sync or action against a real connection without saving) and
 * `weft generate:tests` (saved mocks → snapshot tests) join here.
 */
import { Command } from 'commander';
import { addStartOptions, type StartOptions } from '../app/start/options';
import { runStart } from '../app/start/run';
import { runWorkerProcess } from '../app/worker/main';
import { loadConfig } from '../common/config';
import { openCore } from '../app/core';
import { resealWithCurrentKey } from '../store/reseal';

export function buildProgram(): Command {
  const program = new Command('weft').description('Weft: a self-hostable integration platform.');

  addStartOptions(program.command('start').description('Start the infrastructure, a sync worker and the API (like npm start).')).action(
    async (options: StartOptions) => {
      process.exitCode = await runStart(options, process.env);
    },
  );

  program
    .command('worker')
    .description('Run a sync worker against existing servers (needs TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY).')
    .action(async () => {
      await runWorkerProcess();
    });

  program
    .command('reseal')
    .description('Re-seal stored secrets with the first key of WEFT_ENCRYPTION_KEY (rotation: put the new key first, run this, then drop the old key).')
    .action(async () => {
      const config = loadConfig();
      if (!config.MONGODB_URI || !config.WEFT_ENCRYPTION_KEY) throw new Error('weft reseal needs MONGODB_URI and WEFT_ENCRYPTION_KEY.');
      const core = await openCore({ mongodbUri: config.MONGODB_URI, dbName: config.MONGODB_DB, encryptionKey: config.WEFT_ENCRYPTION_KEY, requestLogTtlDays: config.WEFT_REQUEST_LOG_TTL_DAYS, serverSelectionTimeoutMs: config.WEFT_MONGODB_SELECTION_TIMEOUT_MS });
      try {
        console.log(`re-sealed ${await resealWithCurrentKey(core.stores.db, core.cipher)} secret(s) with the current key`);
      } finally {
        await core.close();
      }
    });

  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  }
  // Whatever a command left open (a keep-alive socket, a timer) must not keep `weft` running.
  process.exit(process.exitCode ?? 0);
}

if (require.main === module) void main();
