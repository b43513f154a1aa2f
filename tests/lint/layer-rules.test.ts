import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The layer rules (.dependency-cruiser.cjs, `npm run lint:layers`) are only worth having if
 * an import that runs back up fails them. Each case is a tiny tree in a temporary folder,
 * laid out like Weft's, checked with the project's own config.
 */
const repo = join(__dirname, '..', '..');
const depcruise = join(repo, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const config = join(repo, '.dependency-cruiser.cjs');

async function cruise(files: Record<string, string>): Promise<{ failed: boolean; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-layers-'));
  try {
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', moduleResolution: 'node', strict: true } }));
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    const folders = [...new Set(Object.keys(files).map((p) => p.split('/')[0]))];
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [depcruise, ...folders, '--config', config, '--output-type', 'err'], {
        cwd: dir,
        // Plain text to match on: CI=true (as .ci/run sets it) makes depcruise colour its output.
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      });
      return { failed: false, output: stdout };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      if (typeof e.code !== 'number') throw err;
      return { failed: true, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('layer rules', () => {
  test('imports that point down pass', async () => {
    const result = await cruise({
      'common/errors.ts': 'export class WeftError extends Error {}\n',
      'store/things.ts': "import { WeftError } from '../common/errors';\nexport const fail = () => new WeftError();\n",
      'auth/cipher.ts': "import { WeftError } from '../common/errors';\nexport const seal = () => { throw new WeftError(); };\n",
      'activities/contracts.ts': 'export interface RunInput { id: string }\n',
      'workflows/run.ts': "import type { RunInput } from '../activities/contracts';\nexport async function run(input: RunInput) { return input.id; }\n",
    });
    expect(result).toMatchObject({ failed: false });
  });

  test('store/ importing auth/ fails, naming the rule and the import', async () => {
    const result = await cruise({
      'common/errors.ts': 'export class WeftError extends Error {}\n',
      'auth/cipher.ts': "import { WeftError } from '../common/errors';\nexport const seal = () => { throw new WeftError(); };\n",
      'store/reseal.ts': "import { seal } from '../auth/cipher';\nexport const reseal = () => seal();\n",
    });
    expect(result.failed).toBe(true);
    expect(result.output).toContain('store-imports-only-common: store/reseal.ts → auth/cipher.ts');
  });

  test('a workflow importing a value (not a type) from activities/ fails; a cycle fails', async () => {
    const result = await cruise({
      'activities/contracts.ts': "export const NON_RETRYABLE = ['x'];\n",
      'workflows/run.ts': "import { NON_RETRYABLE } from '../activities/contracts';\nexport async function run() { return NON_RETRYABLE; }\n",
      'runtime/a.ts': "import { b } from './b';\nexport const a = () => b();\n",
      'runtime/b.ts': "import { a } from './a';\nexport const b = (): unknown => a;\n",
    });
    expect(result.failed).toBe(true);
    expect(result.output).toContain('workflows-import-types-and-temporal-workflow-only: workflows/run.ts → activities/contracts.ts');
    expect(result.output).toMatch(/no-circular: runtime\/a\.ts/);
  });

  test('nothing below the composition root imports app/', async () => {
    const result = await cruise({
      'app/core.ts': 'export const buildCore = () => ({});\n',
      'runtime/context.ts': "import { buildCore } from '../app/core';\nexport const ctx = buildCore();\n",
    });
    expect(result.failed).toBe(true);
    expect(result.output).toContain('nothing-imports-app-or-api: runtime/context.ts → app/core.ts');
  });
});
