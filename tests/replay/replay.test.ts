import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker, type ReplayResult } from '@temporalio/worker';
import { PayloadEncryptionCodec } from '../../auth/payload-codec';
import { quietTestRuntime, workflowCode } from '../workflows/time-skipping-env';
import { REPLAY_ENCRYPTION_KEY } from './replay-key';

/**
 * Histories of real runs (recorded by tests/replay/record-histories.ts) replayed against
 * today's workflow code: a change that would make a run in flight take another path when a
 * new worker picks it up fails here, not in production. A change meant to be incompatible
 * either guards itself with `patched()` or re-records the histories (README, "Testing workflows").
 *
 * They replay as a Weft worker runs: with the payload codec (keyed with the key they were
 * recorded with). Histories from before payloads were encrypted are plaintext and pass
 * through it; action-encrypted holds ciphertext only.
 */

const HISTORIES = path.join(__dirname, 'histories');
const REPO = path.resolve(__dirname, '../..');

function committedHistories(): Array<{ workflowId: string; history: ReturnType<typeof historyFromJSON> }> {
  return readdirSync(HISTORIES)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ workflowId: path.basename(f, '.json'), history: historyFromJSON(JSON.parse(readFileSync(path.join(HISTORIES, f), 'utf8'))) }));
}

type ReplayOptions = Parameters<typeof Worker.runReplayHistories>[0];
const withCodec = (key: string) => ({ dataConverter: { payloadCodecs: [new PayloadEncryptionCodec(key)] } });

async function replayAll(code: ReplayOptions, key = REPLAY_ENCRYPTION_KEY): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ ...code, ...withCodec(key) }, committedHistories())) results.push(result);
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
      'action-encrypted',
      'action',
      'scheduled-sync',
      'sync-failed',
      'sync-fan-out',
      'sync-retried-after-worker-crash',
      'sync-single-activity',
      'sync-success',
      'webhook-delivery',
    ]);
    expect(results.map((r) => ({ history: r.workflowId, error: r.error?.message }))).toEqual(results.map((r) => ({ history: r.workflowId, error: undefined })));
  });

  test('the encrypted history holds no plaintext payload, and replays only with the key it was recorded with', async () => {
    const file = readFileSync(path.join(HISTORIES, 'action-encrypted.json'), 'utf8');
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    // Its payloads are ciphertext; json/plain is left only in the search attributes Temporal indexes.
    expect(file).toContain(b64('binary/encrypted'));
    const withoutSearchAttributes = JSON.stringify(JSON.parse(file, (key, value) => (key === 'searchAttributes' ? undefined : value)));
    expect(withoutSearchAttributes).not.toContain(b64('json/plain'));

    const otherKey = Buffer.alloc(32, 7).toString('base64');
    const results = await replayAll(workflowCode(), otherKey);
    const byHistory = Object.fromEntries(results.map((r) => [r.workflowId, r.error === undefined ? 'replays' : 'fails']));
    expect(byHistory['action-encrypted']).toBe('fails');
    // The plaintext ones pass through the codec whatever its key.
    expect(byHistory['sync-success']).toBe('replays');
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
        'action-encrypted': undefined,
        'scheduled-sync': undefined,
        'sync-failed': 'DeterminismViolationError',
        'sync-fan-out': undefined,
        'sync-retried-after-worker-crash': 'DeterminismViolationError',
        'sync-single-activity': 'DeterminismViolationError',
        'sync-success': 'DeterminismViolationError',
        'webhook-delivery': undefined,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
