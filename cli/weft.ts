/**
 * The `weft` command. `weft start` is `npm start`; `weft api` and `weft worker` run the API
 * and a sync worker as processes of their own against existing servers (TEMPORAL_ADDRESS,
 * MONGODB_URI, WEFT_ENCRYPTION_KEY), so they scale apart. Each command is a thin call into
 * app/, the composition root.
 *
 * The integration author's commands (`weft init`, `clone`, `dev`, `test`, `dryrun`,
 * `generate:tests`) live in cli/commands/, one module each.
 */
// First: OpenTelemetry must hook module loading before anything requires mongodb.
import '../app/telemetry-preload';
// The processes' own modules (Temporal, MongoDB, Express, ...) are loaded by the command that
// runs them, so the author's commands (`weft dryrun`, `weft init`) start without them.
import { Command } from 'commander';
import { addStartOptions, type StartOptions } from '../app/start/options';
import { describeFailure } from '../app/process-exit';
import { loadConfig } from '../common/config';
import { createWeftClient, listRecords, type RecordModel } from './api-client/client';
import { registerInit } from './commands/init';
import { registerTest } from './commands/test';
import { registerClone } from './commands/clone';
import { registerDev } from './commands/dev';
import { registerDryrun } from './commands/dryrun';
import { registerGenerateTests } from './commands/generate-tests';
// Types only; the modules are required by their command. `require`, not `import()`: without a
// build, bin.js runs the sources through tsx's require hook, and a dynamic import goes to Node's
// ESM loader, which cannot load them (`weft worker`: ERR_MODULE_NOT_FOUND).
import type * as StartRun from '../app/start/run';
import type * as ApiMain from '../app/api/main';
import type * as WorkerMain from '../app/worker/main';
import type * as Reseal from '../app/reseal';
import type * as Setup from '../app/setup';

export function buildProgram(): Command {
  const program = new Command('weft').description('Weft: a self-hostable integration platform.');

  addStartOptions(program.command('start').description('Start the infrastructure, a sync worker and the API (like npm start).')).action(
    async (options: StartOptions) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { runStart }: typeof StartRun = require('../app/start/run');
      process.exitCode = await runStart(options, process.env);
    },
  );

  program
    .command('api')
    .description('Run the API against existing servers (needs TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY; listens on WEFT_API_HOST:PORT).')
    .action(async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { runApiProcess }: typeof ApiMain = require('../app/api/main');
      await runApiProcess();
    });

  program
    .command('worker')
    .description('Run a sync worker against existing servers (needs TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY).')
    .action(async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { runWorkerProcess }: typeof WorkerMain = require('../app/worker/main');
      await runWorkerProcess();
    });

  program
    .command('setup')
    .description(
      'Prepare a deployment once, before its first api and worker (safe to repeat): database indexes, Temporal search attributes, the dev and prod environments (their keys printed once). Needs what weft api needs.',
    )
    .action(async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { runSetup }: typeof Setup = require('../app/setup');
      await runSetup();
    });

  program
    .command('reseal')
    .description('Re-seal stored secrets with the first key of WEFT_ENCRYPTION_KEY (rotation: put the new key first, run this, then drop the old key).')
    .action(async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { resealSecrets }: typeof Reseal = require('../app/reseal');
      console.log(`re-sealed ${await resealSecrets(loadConfig())} secret(s) with the current key`);
    });

  program
    .command('records')
    .description("Print a connection's synced records of one model as JSON lines, through the API (the typed client; the key from WEFT_KEY).")
    .requiredOption('--model <model>', 'the model, e.g. CalendarEvent or UnifiedFile')
    .requiredOption('--connection-id <id>', 'the connection id')
    .requiredOption('--integration <key>', "the integration's unique key (provider config key)")
    .option('--url <url>', 'the API', `http://127.0.0.1:${process.env.PORT ?? 3003}`)
    .option('--limit <n>', 'records per page', '100')
    .action(async (o: { model: string; connectionId: string; integration: string; url: string; limit: string }) => {
      const secretKey = process.env.WEFT_KEY;
      if (!secretKey) throw new Error('Set WEFT_KEY to an environment secret key.');
      const client = createWeftClient({ baseUrl: o.url, secretKey });
      let cursor: string | undefined;
      do {
        const page = await listRecords(client, {
          model: o.model as RecordModel,
          connectionId: o.connectionId,
          providerConfigKey: o.integration,
          limit: Number(o.limit),
          cursor,
        });
        for (const record of page.records) process.stdout.write(`${JSON.stringify(record)}\n`);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
    });

  registerInit(program);
  registerTest(program);
  registerClone(program);
  registerDev(program);
  registerDryrun(program);
  registerGenerateTests(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  // A reader that stops early (`| head`, a jq that exited) closes the pipe: stop quietly, as
  // command-line tools do, instead of an unhandled EPIPE with its stack trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? 0);
  });
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    console.error(describeFailure(err));
    process.exitCode = 1;
  }
  // Whatever a command left open (a keep-alive socket, a timer) must not keep `weft` running.
  process.exit(process.exitCode ?? 0);
}

if (require.main === module) void main();
