/**
 * `npm run fuzz`: 12,000 malformed requests over every route against a whole Weft on a real
 * Temporal dev server and FerretDB (started here on free loopback ports, or TEMPORAL_ADDRESS
 * / MONGODB_URI), then the report. Exits 1 when anything failed.
 *
 *   npm run fuzz                         # 12,000 requests, seed 20261123
 *   npm run fuzz -- --requests 20000 --seed 7
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startInfrastructure } from '../../scripts/infra/infrastructure';
import { bundleWorkflowsTo } from '../support/bundle-workflows';
import { startFuzzFixture } from './fixture';
import { formatReport, runFuzz } from './fuzz';

async function main(): Promise<number> {
  const opts = new Command()
    .option('--requests <n>', 'malformed requests to send', (v) => Number(v), 12_000)
    .option('--seed <n>', 'seed of the request generator', (v) => Number(v), 20_261_123)
    .option('--concurrency <n>', 'requests in flight', (v) => Number(v), 8)
    .parse(process.argv)
    .opts<{ requests: number; seed: number; concurrency: number }>();

  const env = infraOptionsFromEnv();
  const infra = await startInfrastructure({
    mode: 'test',
    repoRoot: path.resolve(__dirname, '..', '..'),
    external: env.external,
    binaries: env.binaries,
    log: (m) => process.stderr.write(`[infra] ${m}\n`),
  });
  try {
    process.env.WEFT_TEST_TEMPORAL_ADDRESS = infra.temporal.address;
    process.env.WEFT_TEST_TEMPORAL_NAMESPACE = infra.temporal.namespace;
    process.env.WEFT_TEST_MONGODB_URI = infra.mongodbUri;
    const bundle = path.join(mkdtempSync(path.join(os.tmpdir(), 'weft-fuzz-')), 'workflows.js');
    await bundleWorkflowsTo(bundle);
    process.env.WEFT_TEST_WORKFLOW_BUNDLE = bundle;

    console.log(
      `fuzzing ${opts.requests} requests, seed ${opts.seed}, ${opts.concurrency} in flight (Temporal ${infra.temporal.address}, MongoDB ${infra.mongodbUri})`,
    );
    const fixture = await startFuzzFixture();
    try {
      const report = await runFuzz(fixture, { seed: opts.seed, requests: opts.requests, concurrency: opts.concurrency, progress: (line) => console.log(line) });
      console.log(formatReport(report));
      return report.failures.length ? 1 : 0;
    } finally {
      await fixture.shutdown();
    }
  } finally {
    await infra.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
