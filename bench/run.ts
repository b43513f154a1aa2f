/**
 * `npm run bench`: figures measured side by side in one run, one JSON line each. Not part
 * of `npm test` (timings are not assertions). Starts its own Temporal dev server and
 * FerretDB (or uses TEMPORAL_ADDRESS / MONGODB_URI), like the test run.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { lumaPacing } from './luma-pacing';
import { readFigures } from './read-figures';
import type { Figure } from './figure';
import { schedulesFigure } from './schedules';
import { triggerLatency } from './trigger-latency';
import { userFilesIngest } from './user-files-ingest';
import { webhookThroughput } from './webhook-throughput';
import { syncWebhookLatency } from './sync-webhook-latency';
import { proxyOverhead } from './proxy-overhead';
import { dryrunFigure } from './dryrun';
import { payloadCodecFigures } from './payload-codec';
import { sharedAccountFigures } from './shared-account';
import { runCostFigures } from './run-cost';
import { providerWebhookFigures } from './provider-webhooks';
import { consolePageFigures } from './console-pages';
import { startStandaloneTestInfra } from '../tests/support/standalone-infra';

async function main(): Promise<void> {
  const infra = await startStandaloneTestInfra('bench', () => undefined);
  try {
    // `npm run bench` (everything, 100,000 files), `npm run bench -- 20000` (another size),
    // `npm run bench -- pacing`, `npm run bench -- reads [files]`, `npm run bench -- memory [files]`,
    // `npm run bench -- shared` (a no-change run on a provider account shared with 100 connections, next to one of its own),
    // `npm run bench -- trigger`, `npm run bench -- schedules [connections]` `npm run bench -- webhooks [events]` (throughput, then a sync run's end to its webhook)
    // `npm run bench -- proxy`, `npm run bench -- dryrun`, `npm run bench -- codec`, `npm run bench -- runs [connections]`
    // `npm run bench -- provider-webhooks [deliveries]`, or `npm run bench -- console [connections]` (one part only).
    const args = process.argv.slice(2);
    const only = args.find((a) => !/^\d+$/.test(a));
    if (
      only !== undefined &&
      !['pacing', 'reads', 'memory', 'trigger', 'schedules', 'webhooks', 'proxy', 'dryrun', 'codec', 'shared', 'runs', 'provider-webhooks', 'console'].includes(
        only,
      )
    )
      throw new Error(
        `unknown part "${only}": pacing, reads, memory, trigger, schedules, webhooks, proxy, dryrun, codec, shared, runs, provider-webhooks, console, or a number (files; connections for schedules, runs and console; events for webhooks; deliveries for provider-webhooks)`,
      );
    const count = args.find((a) => /^\d+$/.test(a));
    const files = Number(count ?? 100_000);
    const emit = (figure: Figure) => console.log(JSON.stringify(figure));
    if (only === undefined || ['reads', 'memory'].includes(only))
      await userFilesIngest(files, emit, { ingest: only === undefined, then: only === 'memory' ? undefined : readFigures });
    // The same sync again in a worker compiled by `npm run build`, for its memory next to the tsx worker's.
    if (only === undefined || only === 'memory')
      await withBuild((buildDir) => userFilesIngest(files, emit, { ingest: false, worker: { kind: 'compiled', buildDir } }));
    if (only === undefined || only === 'pacing') for (const figure of await lumaPacing()) emit(figure);
    if (only === undefined || only === 'trigger') for (const figure of await triggerLatency()) emit(figure);
    if (only === undefined || only === 'schedules') for (const figure of await schedulesFigure(Number((only === 'schedules' && count) || 1_000))) emit(figure);
    if (only === undefined || only === 'webhooks') {
      for (const figure of await webhookThroughput(Number((only === 'webhooks' && count) || 1_000))) emit(figure);
      for (const figure of await syncWebhookLatency()) emit(figure);
    }
    if (only === undefined || only === 'proxy') for (const figure of await proxyOverhead()) emit(figure);
    if (only === undefined || only === 'dryrun') for (const figure of await dryrunFigure()) emit(figure);
    if (only === undefined || only === 'codec') for (const figure of await payloadCodecFigures()) emit(figure);
    if (only === undefined || only === 'shared') for (const figure of await sharedAccountFigures()) emit(figure);
    if (only === undefined || only === 'runs') for (const figure of await runCostFigures(Number((only === 'runs' && count) || 200))) emit(figure);
    if (only === undefined || only === 'provider-webhooks')
      for (const figure of await providerWebhookFigures(Number((only === 'provider-webhooks' && count) || 5_000))) emit(figure);
    if (only === undefined || only === 'console') for (const figure of await consolePageFigures(Number((only === 'console' && count) || 10_000))) emit(figure);
  } finally {
    await infra.stop();
  }
}

/** `npm run build` into a directory of the bench's own (not dist/, which may be someone's deployment), removed after. */
async function withBuild(measure: (buildDir: string) => Promise<void>): Promise<void> {
  const repo = path.resolve(__dirname, '..');
  const buildDir = path.join(repo, '.weft', 'bench-build');
  const build = spawnSync('npm', ['run', '--silent', 'build', '--', '--out-dir', path.relative(repo, buildDir)], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error(`npm run build failed (exit ${build.status ?? build.signal})`);
  try {
    await measure(buildDir);
  } finally {
    rmSync(buildDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
