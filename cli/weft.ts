/**
 * The `weft` command. `weft start` is `npm start`; `weft worker` runs one more sync worker
 * against existing servers (TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY).
 *
 * Later: `weft dryrun` (run a sync or action against a real connection without saving) and
 * `weft generate:tests` (saved mocks → snapshot tests) join here.
 */
import { Command } from 'commander';
import { addStartOptions, type StartOptions } from '../scripts/start/options';
import { runStart } from '../scripts/start/run';
import { runWorkerProcess } from '../worker/main';

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
