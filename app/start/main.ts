/**
 * `npm start [-- --sandbox] [--port N] [--luma-port N]`: Temporal + MongoDB (embedded or
 * external), the sync worker and the API, until Ctrl-C. The same as `weft start`.
 */
// First: OpenTelemetry must hook module loading before anything requires mongodb.
import '../telemetry-preload';
import { Command } from 'commander';
import { addStartOptions, type StartOptions } from './options';
import { runStart } from './run';
import { describeFailure } from '../process-exit';

export function startProgram(): Command {
  return addStartOptions(new Command('npm start').description('Start Weft: infrastructure, sync worker and API (Ctrl-C stops everything).'));
}

if (require.main === module) {
  const program = startProgram();
  program.parse(process.argv);
  runStart(program.opts<StartOptions>(), process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(describeFailure(err));
      process.exit(1);
    },
  );
}
