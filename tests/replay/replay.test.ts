import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { quietTestRuntime, workflowCode } from '../workflows/time-skipping-env';

/**
 * Histories of real runs (recorded by tests/replay/record-histories.ts) replayed against
 * today's workflow code: a change that would make a run in flight take another path when a
 * new worker picks it up fails here, not in production. A change meant to be incompatible
 * either guards itself with `patched()` or re-records the histories (README, "Testing workflows").
 */

const HISTORIES = path.join(__dirname, 'histories');
const REPO = path.resolve(__dirname, '../..');

function committedHistories(): Array<{ workflowId: string; history: ReturnType<typeof historyFromJSON> }> {
  return readdirSync(HISTORIES)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ workflowId: path.basename(f, '.json'), history: historyFromJSON(JSON.parse(readFileSync(path.join(HISTORIES, f), 'utf8'))) }));
}

async function replayAll(code: Parameters<typeof Worker.runReplayHistories>[0]): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories(code, committedHistories())) results.push(result);
  return results;
}

const silent = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never;

describe('replaying recorded histories', () => {
  // The changed workflow below fails its replays on purpose.
  beforeAll(quietTestRuntime);

  test('every committed history replays against the current workflows', async () => {
    const results = await replayAll(workflowCode());
    expect(results.map((r) => r.workflowId)).toEqual([
      'action-async',
      'action',
      'scheduled-sync',
      'sync-failed',
      'sync-fan-out',
      'sync-retried-after-worker-crash',
      'sync-success',
      'webhook-delivery',
    ]);
    expect(results.map((r) => ({ history: r.workflowId, error: r.error?.message }))).toEqual(results.map((r) => ({ history: r.workflowId, error: undefined })));
  });

  test('a workflow changed incompatibly fails replay (the test above would catch it)', async () => {
    // A copy of workflows/ whose syncRun waits on a timer before its first activity: the kind
    // of edit that looks harmless and breaks every run in flight. Kept inside the repository
    // (under the git-ignored .weft/) so @temporalio/workflow resolves as for the real folder.
    const scratch = path.join(REPO, '.weft', 'tmp');
    mkdirSync(scratch, { recursive: true });
    const dir = mkdtempSync(path.join(scratch, 'replay-changed-workflows-'));
    try {
      cpSync(path.join(REPO, 'workflows'), dir, { recursive: true });
      const file = path.join(dir, 'sync-run.ts');
      const source = readFileSync(file, 'utf8');
      const signature = /export async function syncRun\([^)]*\)[^{]*\{\n/;
      expect(source).toMatch(signature);
      writeFileSync(
        file,
        `import { sleep as changedSleep } from '@temporalio/workflow';\n${source.replace(signature, (m) => `${m}  await changedSleep('1 second');\n`)}`,
      );
      const bundle = await bundleWorkflowCode({ workflowsPath: dir, logger: silent });

      const results = await replayAll({ workflowBundle: bundle });
      const byHistory = Object.fromEntries(results.map((r) => [r.workflowId, r.error?.name]));
      expect(byHistory).toEqual({
        action: undefined,
        'action-async': undefined,
        'scheduled-sync': undefined,
        'sync-failed': 'DeterminismViolationError',
        'sync-fan-out': undefined,
        'sync-retried-after-worker-crash': 'DeterminismViolationError',
        'sync-success': 'DeterminismViolationError',
        'webhook-delivery': undefined,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
