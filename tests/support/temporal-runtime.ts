import { format } from 'node:util';
import { makeTelemetryFilterString, Runtime, type LogEntry, type LogLevel, type TelemetryOptions } from '@temporalio/worker';
import { WeftRuntimeLogger } from '../../app/worker/runtime-logger';
import { HELD_OUTPUT, RUNTIME_SHUTDOWN } from './held-output';

let installed = false;

/**
 * The Temporal Runtime of a test file, installed once, before its first worker or connection.
 * Tests fail activities and workflows on purpose, so Temporal's warnings and errors are held
 * back (tests/support/test-environment.ts prints them only when a test of the file failed);
 * the action workers' "no workflows" warning is expected and dropped like `npm start` does.
 * The first caller decides: a stack with OTEL_* in its env exports the worker's own metrics.
 */
export function installTestRuntime(opts: { level?: LogLevel; telemetryOptions?: TelemetryOptions; coreLogLevel?: LogLevel } = {}): void {
  if (installed) return;
  installed = true;
  const level = opts.level ?? 'WARN';
  const coreLevel = opts.coreLogLevel ?? level;
  const runtime = Runtime.install({
    logger: new WeftRuntimeLogger(level, (queue) => queue.startsWith('weft-actions'), holdEntry),
    // The core's own log (its gRPC retries while a test stops a server) is forwarded to the same logger, so it is held too.
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: coreLevel, other: coreLevel }), forward: {} }, ...opts.telemetryOptions },
  });
  // Shut down at the file's end by the test environment (tests/support/test-environment.ts):
  // a Runtime left running keeps the jest worker process from exiting.
  RUNTIME_SHUTDOWN.push(() => runtime.shutdown());
}

function holdEntry({ level, timestampNanos, message, meta }: LogEntry): void {
  const at = new Date(Number(timestampNanos / 1_000_000n)).toISOString();
  HELD_OUTPUT.push(meta === undefined ? `${at} [${level}] ${message}` : `${at} [${level}] ${message} ${format(meta)}`);
}
