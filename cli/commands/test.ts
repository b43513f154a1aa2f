import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { WeftError } from '../../common/errors';

/**
 * `weft test [--project <dir>] [jest args...]`: a project's tests (its generated snapshot tests
 * and its own) run by Weft's jest, with the jest config `weft init` wrote, so the project
 * needs no jest or node_modules of its own. Jest's options pass through (`-- --watch`,
 * `--coverage`, a file pattern).
 */
export function registerTest(program: Command): void {
  program
    .command('test')
    .description("Run a project's tests with Weft's jest (the jest.config.js `weft init` wrote); jest options pass through.")
    .option('--project <dir>', 'the project folder', '.')
    .argument('[jest-args...]', 'passed to jest: --watch, --coverage, a test file pattern')
    .allowUnknownOption()
    .action(async (jestArgs: string[], o: { project: string }) => {
      process.exitCode = await runProjectTests(o.project, jestArgs);
    });
}

async function runProjectTests(projectDir: string, jestArgs: string[]): Promise<number> {
  const project = resolve(projectDir);
  const config = ['jest.config.js', 'jest.config.ts'].map((f) => join(project, f)).find((f) => existsSync(f));
  if (!config) {
    throw new WeftError('test_config_missing', `${project} has no jest.config.js; weft test runs a project made by \`weft init\` (or Weft's own).`);
  }
  const child = spawn(process.execPath, [require.resolve('jest/bin/jest'), '--config', config, ...jestArgs], { cwd: project, stdio: 'inherit' });
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('exit', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}
