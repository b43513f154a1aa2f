/**
 * A standalone API process (`weft api`): scale it apart from the workers. Same configuration
 * as `weft worker` (TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY) plus PORT and
 * WEFT_API_HOST; it neither creates environments nor starts servers (npm start does).
 */
// First: OpenTelemetry must hook module loading before anything requires mongodb.
import '../telemetry-preload';
import { loadConfig } from '../../common/config';
import { buildCore, requireServers } from '../core';
import { describeFailure } from '../process-exit';
import { resealInBackground } from '../reseal';
import type { ApiLifecycle } from '../../api/deps';
import { startApi } from './build-api';
import { startTelemetry } from '../telemetry';

export async function runApiProcess(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  requireServers(config, 'api');
  const telemetry = startTelemetry(config, 'weft-api');
  const core = await buildCore(config, { log: { component: 'api' }, watchDatabase: true, telemetry });
  const { logger } = core;
  try {
    resealInBackground(core);
    const lifecycle: ApiLifecycle = { shuttingDown: false };
    const api = await startApi(core, { alter: (deps) => ({ ...deps, lifecycle }) });
    logger.info({ url: api.url, pid: process.pid }, 'weft api listening');
    const signals = listenForStopSignals();
    await signals.first;
    // Draining: still serving, but GET /ready answers 503 shutting_down so a load balancer
    // stops sending requests here (WEFT_API_DRAIN_MS); a second signal ends it at once.
    lifecycle.shuttingDown = true;
    if (config.WEFT_API_DRAIN_MS > 0) {
      logger.info({ drainMs: config.WEFT_API_DRAIN_MS }, 'weft api draining');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, config.WEFT_API_DRAIN_MS))), signals.second]);
      clearTimeout(timer);
    }
    signals.stop();
    logger.info('weft api stopping');
    await api.close();
  } finally {
    await core.close();
    await telemetry?.shutdown();
  }
}

/**
 * SIGINT and SIGTERM from now on: `first` resolves at the first, `second` at the next one.
 * While listening, a signal does not kill the process; after `stop()` one does again (as
 * before listening), so a close that hangs can still be interrupted.
 */
function listenForStopSignals(): { first: Promise<void>; second: Promise<void>; stop(): void } {
  let received = 0;
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const onSignal = () => {
    received++;
    for (const w of waiting.filter((w) => received >= w.n)) w.resolve();
  };
  const nth = (n: number) => new Promise<void>((resolve) => waiting.push({ n, resolve }));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    first: nth(1),
    second: nth(2),
    stop() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

if (require.main === module) {
  runApiProcess().catch((err: unknown) => {
    console.error(describeFailure(err));
    process.exit(1);
  });
}
