import { loadConfig } from '../common/config';
import { buildCore, requireServers } from './core';
import { ensureEnvironments } from './start/environments';

/**
 * `weft setup`: what a new deployment needs once before its first `weft api` and `weft
 * worker`, as a one-shot job (a Kubernetes Job, a compose service run to completion), and
 * harmless to run again at every deploy: the database's indexes (and TTLs where the server has
 * them), Weft's search attributes on the Temporal namespace (or
 * temporal_search_attributes_missing, naming the command for an admin), and the `dev` and
 * `prod` environments, whose generated secret keys it prints once (WEFT_DEV_SECRET_KEY /
 * WEFT_PROD_SECRET_KEY choose them instead; `weft api` never creates environments).
 */
export async function runSetup(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadConfig(env);
  requireServers(config, 'setup');
  // buildCore ensures the indexes and the search attributes on its way up.
  const core = await buildCore(config, { log: { component: 'setup' } });
  try {
    await ensureEnvironments(core.stores, config, 'weft setup');
  } finally {
    await core.close();
  }
}
