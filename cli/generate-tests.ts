import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WeftError } from '../common/errors';
import type { IntegrationRegistry } from '../runtime/registry';
import type { IntegrationDefinition } from '../runtime/types';

/**
 * `weft generate:tests`: one snapshot test per integration function that has recorded mocks,
 * written to `tests/integrations/<integration>/<name>.test.ts`.
 * A generated file starts with GENERATED_MARKER; a file without it is the author's, never
 * overwritten.
 */
const GENERATED_MARKER = '// @weft-generated';

export interface GenerateTestsOptions {
  projectDir: string;
  registry: IntegrationRegistry;
  /** Where the definitions' modules may live: the project's `integrations/` and Weft's own. */
  integrationDirs: string[];
  integration?: string;
  functionName?: string;
}

export type GeneratedOutcome =
  | { status: 'written'; file: string; integration: string; functionName: string }
  | { status: 'kept'; file: string; integration: string; functionName: string; reason: string }
  | { status: 'skipped'; integration: string; functionName: string; reason: string };

export class GenerateTestsError extends WeftError {
  constructor(code: string, message: string) {
    super(code, message, 400);
  }
}

interface IntegrationModule {
  /** The folder that `import`s it (its index). */
  folder: string;
  /** `default` or the named export holding the definition. */
  exportName: string;
}

export async function generateTests(opts: GenerateTestsOptions): Promise<GeneratedOutcome[]> {
  const definitions = opts.registry.providers().map((p) => opts.registry.get(p.name)!);
  const chosen = opts.integration ? definitions.filter((d) => d.provider.name === opts.integration) : definitions;
  if (opts.integration && chosen.length === 0) {
    throw new GenerateTestsError('unknown_integration', `No integration "${opts.integration}"; known: ${definitions.map((d) => d.provider.name).join(', ')}.`);
  }
  if (opts.functionName && !chosen.some((d) => functionsOf(d).some((f) => f.name === opts.functionName))) {
    throw new GenerateTestsError(
      'unknown_function',
      `No function "${opts.functionName}" in ${opts.integration ?? 'any integration'}; known: ${chosen.flatMap((d) => functionsOf(d).map((f) => f.name)).join(', ')}.`,
    );
  }

  const modules = findModules(opts.integrationDirs, definitions);
  const outcomes: GeneratedOutcome[] = [];
  for (const def of chosen) {
    const integration = def.provider.name;
    for (const fn of functionsOf(def)) {
      if (opts.functionName && fn.name !== opts.functionName) continue;
      const functionName = fn.name;
      const mocks = path.join(opts.projectDir, 'tests', 'mocks', integration, 'mocks', ...functionName.split('/'));
      if (!hasRecording(mocks)) {
        outcomes.push({
          status: 'skipped',
          integration,
          functionName,
          reason: `no mocks in ${path.relative(opts.projectDir, mocks)} (record: weft dryrun ${functionName} <connection-id> --save)`,
        });
        continue;
      }
      const module = modules.get(def);
      if (!module) {
        outcomes.push({ status: 'skipped', integration, functionName, reason: 'its definition is not the export of an integration folder (index)' });
        continue;
      }
      const file = path.join(opts.projectDir, 'tests', 'integrations', integration, ...functionName.split('/')) + '.test.ts';
      if (existsSync(file) && !readFileSync(file, 'utf8').startsWith(GENERATED_MARKER)) {
        outcomes.push({ status: 'kept', file, integration, functionName, reason: `hand-written (no "${GENERATED_MARKER}" first line)` });
        continue;
      }
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, testSource({ file, projectDir: opts.projectDir, def, fn, module }));
      outcomes.push({ status: 'written', file, integration, functionName });
    }
  }
  return outcomes;
}

function functionsOf(def: IntegrationDefinition): Array<{ kind: 'sync'; name: string; models: string[] } | { kind: 'action'; name: string }> {
  return [
    ...def.syncs.map((s) => ({ kind: 'sync' as const, name: s.name, models: Object.keys(s.models) })),
    ...def.actions.map((a) => ({ kind: 'action' as const, name: a.name })),
  ];
}

function hasRecording(dir: string): boolean {
  return existsSync(dir) && ['mocks', 'input.json'].some((f) => existsSync(path.join(dir, f)));
}

/** Which folder's index exports each registered definition, and under which name. */
function findModules(dirs: string[], definitions: IntegrationDefinition[]): Map<IntegrationDefinition, IntegrationModule> {
  const wanted = new Set(definitions);
  const found = new Map<IntegrationDefinition, IntegrationModule>();
  for (const dir of [...new Set(dirs.map((d) => path.resolve(d)))]) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const folder = path.join(dir, name);
      if (!statSync(folder).isDirectory() || !['index.ts', 'index.js'].some((f) => existsSync(path.join(folder, f)))) continue;
      let exported: Record<string, unknown>;
      try {
        // The registry loaded these modules already (this is its cached copy): the same objects.
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        exported = require(folder) as Record<string, unknown>;
      } catch {
        continue;
      }
      for (const [exportName, value] of Object.entries(exported)) {
        const def = value as IntegrationDefinition;
        if (wanted.has(def) && !found.has(def)) found.set(def, { folder, exportName });
      }
    }
  }
  return found;
}

function testSource(a: {
  file: string;
  projectDir: string;
  def: IntegrationDefinition;
  fn: ReturnType<typeof functionsOf>[number];
  module: IntegrationModule;
}): string {
  const from = path.dirname(a.file);
  const integration = a.def.provider.name;
  const importPath = relativeImport(from, a.module.folder);
  const mocksDir = relativeImport(from, path.join(a.projectDir, 'tests', 'mocks', integration, 'mocks'));
  const importLine =
    a.module.exportName === 'default'
      ? `import integration from '${importPath}';`
      : a.module.exportName === 'integration'
        ? `import { integration } from '${importPath}';`
        : `import { ${a.module.exportName} as integration } from '${importPath}';`;
  const header = [
    `${GENERATED_MARKER} by \`weft generate:tests\` from tests/mocks/${integration}/mocks/${a.fn.name}/.`,
    '// Regenerating overwrites this file; remove the first line to keep your own edits.',
    "import { join } from 'node:path';",
    importLine,
    '',
    `const mocksDir = join(__dirname, '${mocksDir}');`,
    '',
  ];
  const name = JSON.stringify(a.fn.name).slice(1, -1).replace(/'/g, "\\'");
  if (a.fn.kind === 'sync') {
    const checks = a.fn.models.flatMap((model) => {
      const m = model.replace(/'/g, "\\'");
      return [
        `    expect(mock.getBatchSaveData('${m}')).toStrictEqual(mock.expectedBatchSave('${m}'));`,
        `    expect(mock.getBatchDeleteData('${m}')).toStrictEqual(mock.expectedBatchDelete('${m}'));`,
      ];
    });
    return [
      ...header,
      `describe('${integration} sync ${name}', () => {`,
      "  it('saves and deletes the recorded records, per model and in order', async () => {",
      `    const mock = new SyncMock({ integration, sync: '${name}', mocksDir });`,
      '    await mock.sync.exec(mock);',
      '',
      ...checks,
      '  });',
      '});',
      '',
    ].join('\n');
  }
  return [
    ...header,
    `describe('${integration} action ${name}', () => {`,
    "  it('returns the recorded output for the recorded input', async () => {",
    `    const mock = new ActionMock({ integration, action: '${name}', mocksDir });`,
    '    const output = await mock.action.exec(mock, mock.getInput());',
    '',
    '    expect(mock.asRecorded(output)).toEqual(mock.getExpectedOutput());',
    '  });',
    '});',
    '',
  ].join('\n');
}

function relativeImport(from: string, to: string): string {
  const rel = path.relative(from, to).split(path.sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}
