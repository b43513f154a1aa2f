import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { resolveTestServer } from '../../scripts/infra/test-server';

/** How the time-skipping test server is obtained (the workflow tests use it for real). */
describe('resolveTestServer', () => {
  let scratch: string;
  beforeEach(async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'weft-test-server-'));
  });
  afterEach(async () => rm(scratch, { recursive: true, force: true }));

  test('the cached launcher is found without Maven, and it is the current build', async () => {
    const { binaries } = infraOptionsFromEnv();
    const started = Date.now();
    const launcher = await resolveTestServer({ cacheDir: binaries.cacheDir });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(launcher).toBe(path.join(binaries.cacheDir, 'temporal-test-server'));
  });

  test('an explicit path that does not exist is refused with a stable code', async () => {
    await expect(resolveTestServer({ explicitPath: path.join(scratch, 'nope'), cacheDir: scratch })).rejects.toMatchObject({
      code: 'infra_binary_unavailable',
      message: expect.stringContaining('WEFT_TEMPORAL_TEST_SERVER'),
    });
  });

  test('without Java on PATH and nothing cached it says what is missing and what to set', async () => {
    const savedPath = process.env.PATH;
    const savedJavaHome = process.env.JAVA_HOME;
    // A PATH with nothing on it: neither java nor mvn can be found.
    process.env.PATH = path.join(scratch, 'empty');
    delete process.env.JAVA_HOME;
    try {
      await expect(resolveTestServer({ cacheDir: path.join(scratch, 'cache') })).rejects.toMatchObject({
        code: 'infra_binary_unavailable',
        message: expect.stringMatching(/Java .*not usable.*WEFT_TEMPORAL_TEST_SERVER/s),
      });
    } finally {
      process.env.PATH = savedPath;
      if (savedJavaHome !== undefined) process.env.JAVA_HOME = savedJavaHome;
    }
  });
});
