/**
 * A standalone API process (`weft api`): scale it apart from the workers. Same configuration
 * as `weft worker` (TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY) plus PORT and
 * WEFT_API_HOST; it neither creates environments nor starts servers (npm start does).
 */
// First: OpenTelemetry must hook module loading before anything requires mongodb.
import '../telemetry-preload';
import { once } from 'node:events';
import { loadConfig } from '../../common/config';
import { buildCore, requireServers } from '../core';
import { describeFailure } from '../process-exit';
import { resealInBackground } from '../reseal';
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
    const api = await startApi(core);
    logger.info({ url: api.url, pid: process.pid }, 'weft api listening');
    await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
    logger.info('weft api stopping');
    await api.close();
  } finally {
    await core.close();
    await telemetry?.shutdown();
  }
}

if (require.main === module) {
  runApiProcess().catch((err: unknown) => {
    console.error(describeFailure(err));
    process.exit(1);
  });
}
