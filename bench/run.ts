/**
 * `npm run bench`: figures measured side by side in one run, one JSON line each. Not part
 * of `npm test` (timings are not assertions). Starts its own Temporal dev server and
 * FerretDB (or uses TEMPORAL_ADDRESS / MONGODB_URI), like the test run.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { infraOptionsFromEnv } from '../scripts/infra/infra-env';
import { startInfrastructure } from '../scripts/infra/infrastructure';
import { bundleWorkflowsTo } from '../tests/support/bundle-workflows';
import { lumaPacing } from './luma-pacing';
import { userFilesIngest } from './user-files-ingest';

async function main(): Promise<void> {
  const env = infraOptionsFromEnv();
  const infra = await startInfrastructure({ mode: 'test', repoRoot: path.resolve(__dirname, '..'), external: env.external, binaries: env.binaries, log: () => undefined });
  try {
    process.env.WEFT_TEST_TEMPORAL_ADDRESS = infra.temporal.address;
    process.env.WEFT_TEST_TEMPORAL_NAMESPACE = infra.temporal.namespace;
    process.env.WEFT_TEST_MONGODB_URI = infra.mongodbUri;
    const bundle = path.join(mkdtempSync(path.join(os.tmpdir(), 'weft-bench-')), 'workflows.js');
    await bundleWorkflowsTo(bundle);
    process.env.WEFT_TEST_WORKFLOW_BUNDLE = bundle;
    // `npm run bench` (100,000 files), `npm run bench -- 20000`, or `npm run bench -- pacing`.
    const arg = process.argv[2];
    if (arg !== 'pacing') for (const figure of await userFilesIngest(Number(arg ?? 100_000))) console.log(JSON.stringify(figure));
    for (const figure of await lumaPacing()) console.log(JSON.stringify(figure));
  } finally {
    await infra.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
