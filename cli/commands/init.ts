import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { WeftError } from '../../common/errors';
import { packageRoot } from '../../app/package-root';
import { writeTemplates } from '../scaffold/templates';

/** What `weft init` wrote. */
export interface InitResult {
  dir: string;
  files: string[];
}

/**
 * `weft init <dir>`: a project for integrations written outside Weft (`integrations/<name>/`,
 * `tests/`), with a working example sync and action against the Luma sandbox simulator, a
 * tsconfig and jest config pointing at this Weft install (no npm install in the folder), and a
 * README with the steps from there to a synced, recorded and tested integration.
 */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description('Scaffold a folder for your own integrations (an example sync and action, tests, tsconfig, jest config, README).')
    .argument('<dir>', 'the folder to create (must not exist, or be empty)')
    .action((dir: string) => {
      const result = initProject(dir);
      console.log(`created ${result.dir}:`);
      for (const file of result.files) console.log(`  ${file}`);
      console.log(`\nnext: read ${join(result.dir, 'README.md')}; run Weft with it: weft dev --project ${result.dir} --sandbox`);
    });
}

function initProject(dir: string, weftRoot: string = packageRoot()): InitResult {
  const target = resolve(dir);
  if (existsSync(target) && (!statSync(target).isDirectory() || readdirSync(target).length > 0)) {
    throw new WeftError('init_dir_not_empty', `${target} exists and is not an empty folder; weft init writes only into a new or empty one.`);
  }
  // The testing workflow's global types (SyncMock, ActionMock) for the folder's compiler, once Weft has them.
  const mockGlobals = join(weftRoot, 'runtime', 'mocks', 'jest-setup.ts');
  const files = writeTemplates(join(weftRoot, 'cli', 'scaffold', 'project'), target, {
    WEFT_ROOT: jsonText(weftRoot),
    WEFT_ROOT_JSON: JSON.stringify(weftRoot),
    PROJECT_NAME:
      basename(target)
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, '-') || 'weft-integrations',
    EXTRA_INCLUDES: existsSync(mockGlobals) ? `, ${JSON.stringify(mockGlobals)}` : '',
  });
  return { dir: target, files };
}

/** A string as it appears inside a JSON string literal. */
function jsonText(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}
