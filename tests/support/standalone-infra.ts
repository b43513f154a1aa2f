import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startInfrastructure, type Infrastructure } from '../../scripts/infra/infrastructure';
import { bundleWorkflowsTo } from './bundle-workflows';

/**
 * What jest's globalSetup does, for a program run outside jest (the bench, `npm run fuzz`, the
 * replay-history recorder): a Temporal dev server and FerretDB on free ports (or the servers
 * TEMPORAL_ADDRESS / MONGODB_URI name), published where startWeftStack looks for them, and
 * the workflow code bundled once. The caller stops the returned infrastructure.
 */
export async function startStandaloneTestInfra(label: string, log: (msg: string) => void): Promise<Infrastructure> {
  const env = infraOptionsFromEnv();
  const infra = await startInfrastructure({
    mode: 'test',
    repoRoot: path.resolve(__dirname, '..', '..'),
    external: env.external,
    binaries: env.binaries,
    log,
  });
  try {
    process.env.WEFT_TEST_TEMPORAL_ADDRESS = infra.temporal.address;
    process.env.WEFT_TEST_TEMPORAL_NAMESPACE = infra.temporal.namespace;
    process.env.WEFT_TEST_MONGODB_URI = infra.mongodbUri;
    const bundle = path.join(mkdtempSync(path.join(os.tmpdir(), `weft-${label}-`)), 'workflows.js');
    await bundleWorkflowsTo(bundle);
    process.env.WEFT_TEST_WORKFLOW_BUNDLE = bundle;
    return infra;
  } catch (err) {
    await infra.stop();
    throw err;
  }
}
