import { spawnSync } from 'node:child_process';
import path from 'node:path';

const REPO = path.resolve(__dirname, '../..');

/**
 * `npm test` is quiet where nothing is wrong: what a test file holds back (Temporal's log of
 * the failures tests provoke) is printed only for a file with a failed test. Two fixture
 * files run through jest with the suite's own test environment: one green, one failing.
 */
test('held output is printed for a failing file and dropped for a green one', () => {
  const config = {
    rootDir: REPO,
    roots: ['<rootDir>/tests/lint/held-output-fixture'],
    testMatch: ['**/*.fixture.ts'],
    testEnvironment: '<rootDir>/tests/support/test-environment.ts',
    transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  };
  const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), '--ci', '--runInBand', '--config', JSON.stringify(config)], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('Tests:       1 failed, 2 passed, 3 total');
  expect(run.stderr).toContain('held-by-the-failing-file');
  expect(run.stderr).not.toContain('held-by-the-green-file');
});
