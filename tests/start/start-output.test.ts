import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { testInfra } from '../support/weft-stack';

const REPO = path.resolve(__dirname, '../..');

interface Started {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `npm start` (app/start/main.ts, as the npm script runs it) with `env` over this process's
 * environment; once stdout says it runs, it is stopped as Ctrl-C stops it. Resolves when it exits.
 */
function runStart(env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/start/main.ts'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let stopping = false;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    // One Ctrl-C: a second would be the "force" one.
    if (!stopping && stdout.includes('Weft is running.')) {
      stopping = true;
      child.kill('SIGINT');
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** This process's environment without what would configure the child by accident (a LOG_LEVEL, the test run's NODE_OPTIONS). */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name === 'LOG_LEVEL' || name === 'NODE_OPTIONS' || name.startsWith('npm_')) delete env[name];
  return env;
}

describe('npm start output', () => {
  let stateDir: string;
  beforeAll(async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'weft-start-'));
  });
  afterAll(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it.each([
    ['WEFT_DEV_SECRET_KEY', 'too-short', /WEFT_DEV_SECRET_KEY: .*16 characters.*unset it/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL: .*"warn".*unset it/],
    ['WEFT_TEMPORAL_PORT', 'seven', /WEFT_TEMPORAL_PORT: .*number.*unset it/],
    ['WEFT_EGRESS_ALLOW_PROVIDERS', 'not a host', /WEFT_EGRESS_ALLOW_PROVIDERS: "not a host" is not a CIDR/],
  ])('a bad %s stops the start with one line naming it and the fix, and exit code 1', async (name, value, says) => {
    const { code, stdout, stderr } = await runStart({ ...baseEnv(), WEFT_STATE_DIR: stateDir, [name]: value });
    expect(code).toBe(1);
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(says);
    expect(lines[0]).toMatch(/^could not start Weft: .*\((config_invalid|infra_env_invalid)\)$/);
    // Nothing was started or generated before the check.
    expect(stdout).toBe('');
  });

  it('a normal start prints no warning: stderr stays empty from start to stop', async () => {
    const infra = testInfra();
    const id = randomBytes(4).toString('hex');
    const { code, stdout, stderr } = await runStart({
      ...baseEnv(),
      // The test run's servers, so nothing is started but Weft itself; a database and queues of its own.
      TEMPORAL_ADDRESS: infra.temporalAddress,
      TEMPORAL_NAMESPACE: infra.namespace,
      MONGODB_URI: infra.mongodbUri,
      MONGODB_DB: `weft_start_${id}`,
      WEFT_SYNC_TASK_QUEUE: `weft-syncs-start-${id}`,
      WEFT_ACTION_TASK_QUEUE: `weft-actions-start-${id}`,
      WEFT_TEMPORAL_ID_PREFIX: `weft-start-${id}`,
      WEFT_WORKFLOW_BUNDLE: infra.bundle,
      WEFT_STATE_DIR: stateDir,
      PORT: '0',
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('Weft is running.');
    expect(stdout).toContain('stopped.');
    const mongo = new MongoClient(infra.mongodbUri);
    await mongo.db(`weft_start_${id}`).dropDatabase();
    await mongo.close();
  });
});
