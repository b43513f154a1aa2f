import { DefaultLogger, type LogEntry, type LogLevel, type LogMetadata } from '@temporalio/worker';

/** What Temporal's worker says, at WARN, when it starts polling a queue it has no workflows for. */
const NO_WORKFLOWS_WARNING = 'No workflows registered, not polling for workflow tasks';

/**
 * The Temporal Runtime's logger of `npm start` (and of the tests' workers): Temporal's
 * DefaultLogger, except that the warning about a worker without workflows is a debug line for
 * the queues it is told of. The action worker has activities only on purpose (every workflow, actions' included, runs on
 * the sync queue, one workflow isolate per process), so that warning is no news on any start.
 */
export class WeftRuntimeLogger extends DefaultLogger {
  constructor(
    level: LogLevel,
    private readonly isActivityOnlyQueue: (taskQueue: string) => boolean,
    logFunction?: (entry: LogEntry) => void,
  ) {
    super(level, logFunction);
  }

  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const expected = level === 'WARN' && message === NO_WORKFLOWS_WARNING && this.isActivityOnlyQueue(String(meta?.taskQueue));
    super.log(expected ? 'DEBUG' : level, message, meta);
  }
}
