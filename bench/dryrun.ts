import { execFile } from 'node:child_process';
import path from 'node:path';
import { createLumaIntegration, runSync, startWeftStack } from '../tests/support/weft-stack';
import type { Figure } from './figure';

const EVENTS = 2_500;
const RUNS = 3;

/**
 * `weft dryrun list-events` over 2,500 Luma events (25 pages of 100 through Weft's /proxy),
 * next to the same sync run by the worker (trigger to SUCCESS, records written), each run
 * three times; the dry run as a spawned `weft` process, as a user runs it (its start included:
 * `weft_help_ms` is that start alone, `weft dryrun --help`).
 */
export async function dryrunFigure(): Promise<Figure[]> {
  const suite = await generatedSuiteFigure();
  const stack = await startWeftStack({ luma: { seed: 9, eventCount: EVENTS } });
  try {
    await createLumaIntegration(stack);
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'bench-dryrun', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    if (created.status !== 201) throw new Error(`connecting failed: ${JSON.stringify(created.body)}`);
    await stack.waitForSync('bench-dryrun', 'list-events');

    const worker: number[] = [];
    const dryrun: number[] = [];
    // What a dry run spends before its first call: loading `weft` (tsx compiling on the fly).
    let started = Date.now();
    await spawnWeft(['dryrun', '--help'], stack.apiUrl, stack.keys.dev);
    const processStartMs = Date.now() - started;
    let saved = 0;
    for (let i = 0; i < RUNS; i += 1) {
      started = Date.now();
      await runSync(stack, 'luma', 'bench-dryrun', 'list-events');
      worker.push(Date.now() - started);
      started = Date.now();
      const out = await spawnWeft(['dryrun', 'list-events', 'bench-dryrun', '--json'], stack.apiUrl, stack.keys.dev);
      dryrun.push(Date.now() - started);
      saved = (JSON.parse(out) as { batchSave: { CalendarEvent: unknown[] } }).batchSave.CalendarEvent.length;
    }
    if (saved !== EVENTS) throw new Error(`the dry run listed ${saved} events, not ${EVENTS}`);
    return [
      {
        figure: 'dryrun-list-events',
        events: EVENTS,
        pages: Math.ceil(EVENTS / 100),
        runs: RUNS,
        dryrun_ms: dryrun,
        worker_sync_ms: worker,
        weft_help_ms: processStartMs,
      },
      suite,
    ];
  } finally {
    await stack.shutdown();
  }
}

interface JestReport {
  success: boolean;
  numTotalTests: number;
  numPassedTests: number;
  testResults: Array<{ name: string; startTime: number; endTime: number }>;
}

/**
 * The generated snapshot tests of every pre-built function (`tests/integrations/`), run as
 * `npm test -- tests/integrations` runs them, three times: the whole jest process (`wall_ms`:
 * its start and one worker; no Temporal dev server or FerretDB, the `integrations` project
 * of jest.config.ts has no globalSetup) and the test files alone (`suite_ms`: first file's
 * start to last file's end, from jest's own report). They
 * replay the recorded mocks with no network: the mock backing fails any socket they open.
 */
async function generatedSuiteFigure(): Promise<Figure> {
  const repo = path.resolve(__dirname, '..');
  const wall: number[] = [];
  const suite: number[] = [];
  let report: JestReport | undefined;
  for (let i = 0; i < RUNS; i += 1) {
    const started = Date.now();
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [require.resolve('jest/bin/jest'), 'tests/integrations', '--json', '--maxWorkers=1'],
        { cwd: repo, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => (err ? reject(new Error(`the generated tests failed: ${stderr.slice(-2000)}`)) : resolve(stdout)),
      );
    });
    wall.push(Date.now() - started);
    report = JSON.parse(out) as JestReport;
    const files = report.testResults;
    suite.push(Math.max(...files.map((f) => f.endTime)) - Math.min(...files.map((f) => f.startTime)));
  }
  if (!report?.success || report.numPassedTests !== report.numTotalTests) throw new Error('the generated tests did not all pass');
  return { figure: 'generated-suite', files: report.testResults.length, tests: report.numTotalTests, runs: RUNS, wall_ms: wall, suite_ms: suite };
}

function spawnWeft(args: string[], host: string, key: string): Promise<string> {
  const repo = path.resolve(__dirname, '..');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(repo, 'cli', 'bin.js'), ...args],
      { cwd: repo, env: { ...process.env, WEFT_HOST: host, WEFT_SECRET_KEY_DEV: key, CI: '1' }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => (err ? reject(new Error(`weft dryrun failed: ${stderr}`)) : resolve(stdout)),
    );
  });
}
