/**
 * `npm run fuzz`: 12,000 malformed requests over every route against a whole Weft on a real
 * Temporal dev server and FerretDB (started here on free loopback ports, or TEMPORAL_ADDRESS
 * / MONGODB_URI), then the report. Exits 1 when anything failed.
 *
 *   npm run fuzz                         # 12,000 requests, seed 20261123
 *   npm run fuzz -- --requests 20000 --seed 7
 */
import { Command } from 'commander';
import { startFuzzFixture } from './fixture';
import { formatReport, runFuzz } from './fuzz';
import { startStandaloneTestInfra } from '../support/standalone-infra';

async function main(): Promise<number> {
  const opts = new Command()
    .option('--requests <n>', 'malformed requests to send', (v) => Number(v), 12_000)
    .option('--seed <n>', 'seed of the request generator', (v) => Number(v), 20_261_123)
    .option('--concurrency <n>', 'requests in flight', (v) => Number(v), 8)
    .parse(process.argv)
    .opts<{ requests: number; seed: number; concurrency: number }>();

  const infra = await startStandaloneTestInfra('fuzz', (m) =>
    process.stderr.write(`[infra] ${m}
`),
  );
  try {
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
