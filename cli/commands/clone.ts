import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import { WeftError } from '../../common/errors';
import { packageRoot } from '../../app/package-root';
import { integrations as prebuilt } from '../../integrations';
import { withIntegrationsDir } from '../../runtime/integration-loader';

/** What `weft clone` wrote. */
export interface CloneResult {
  folder: string;
  key: string;
  files: string[];
}

export interface CloneOptions {
  /** A new integration key: the copy gets its own copy of the provider, under this name. */
  as?: string;
}

/**
 * `weft clone <integration>[/<function>] <dir>`: copies a pre-built integration, or one of its
 * functions, into the project's `integrations/` to customize, with Weft imports rewritten to
 * `weft/integration`. By default the copy keeps the provider (`extendIntegration({ extends })`:
 * same key, auth and connections; its functions replace the pre-built ones of the same name);
 * `--as <key>` makes it an integration of its own, with a copy of the provider named `<key>`.
 */
export function registerClone(program: Command): void {
  program
    .command('clone')
    .description("Copy a pre-built integration (or one function of it) into a project's integrations/ to customize it.")
    .argument('<source>', 'the integration, or <integration>/<function> (e.g. luma, one-drive/user-files)')
    .argument('[dir]', 'the project folder (holds integrations/)', '.')
    .option('--as <key>', 'a new integration key with its own copy of the provider, instead of keeping the pre-built one')
    .action((source: string, dir: string, o: CloneOptions) => {
      const result = cloneIntegration(source, dir, o);
      console.log(`cloned ${source} into ${result.folder} (integration key ${result.key}):`);
      for (const file of result.files) console.log(`  ${file}`);
    });
}

const KEY = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function cloneIntegration(source: string, projectDir: string, opts: CloneOptions = {}, weftRoot: string = packageRoot()): CloneResult {
  const slash = source.indexOf('/');
  const name = slash < 0 ? source : source.slice(0, slash);
  const only = slash < 0 ? undefined : source.slice(slash + 1);
  const definition = prebuilt.find((d) => d.provider.name === name);
  if (!definition) {
    throw new WeftError(
      'clone_unknown_integration',
      `No pre-built integration is named "${name}"; there are: ${prebuilt.map((d) => d.provider.name).join(', ')}.`,
    );
  }
  const functions = [...definition.syncs, ...definition.actions].filter((fn) => only === undefined || fn.name === only);
  if (functions.length === 0) {
    throw new WeftError(
      'clone_unknown_function',
      `${name} has no sync or action "${only}"; it has: ${[...definition.syncs, ...definition.actions].map((fn) => fn.name).join(', ')}.`,
    );
  }
  if (opts.as !== undefined && !KEY.test(opts.as))
    throw new WeftError('clone_invalid_key', `--as ${opts.as}: an integration key is lower-case letters, digits and dashes.`);
  if (opts.as !== undefined && prebuilt.some((d) => d.provider.name === opts.as)) {
    throw new WeftError('clone_invalid_key', `--as ${opts.as}: a pre-built integration has that key; leave --as out to keep its provider.`);
  }

  const from = join(weftRoot, 'integrations', name);
  const key = opts.as ?? name;
  const integrationsDir = join(resolve(projectDir), 'integrations');
  const folder = join(integrationsDir, key);
  if (existsSync(folder))
    throw new WeftError('clone_target_exists', `${folder} exists already; weft clone never overwrites (remove it, or clone --as <another key>).`);

  const sources = sourceFiles(from);
  const entries = functions.map((fn) => ({ kind: fn.kind, ...findExport(sources, fn.name, from) }));
  const provider = providerExport(from);
  // A copy under a key of its own takes the provider along; one that keeps the provider imports Weft's.
  const copied = dependencyClosure([...entries.map((e) => e.file), ...(opts.as !== undefined ? [provider.file] : [])], from);

  mkdirSync(integrationsDir, { recursive: true });
  try {
    const files = copied.map((file) => {
      const target = join(folder, relative(from, file));
      mkdirSync(dirname(target), { recursive: true });
      let text = rewriteImports(readFileSync(file, 'utf8'), file, from);
      if (opts.as !== undefined && file === provider.file) text = renameProvider(text, name, key, file);
      writeFileSync(target, text);
      return relative(folder, target);
    });
    writeFileSync(join(folder, 'index.ts'), indexSource(name, from, entries, provider, opts.as));
    // The copy must load as Weft will load it; a copy that does not is removed again.
    withIntegrationsDir(prebuilt, integrationsDir);
    return { folder, key, files: ['index.ts', ...files] };
  } catch (err) {
    rmSync(folder, { recursive: true, force: true });
    throw err;
  }
}

interface ExportedFunction {
  kind: 'sync' | 'action';
  file: string;
  exportName: string;
}

/** The file that declares the function (`name: '<name>'`) and the `export const` that holds it. */
function findExport(files: string[], fnName: string, from: string): Omit<ExportedFunction, 'kind'> {
  const declaration = new RegExp(`name:\\s*'${fnName.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}'`);
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const at = text.search(declaration);
    if (at < 0) continue;
    const exports = [...text.slice(0, at).matchAll(/export const (\w+)/g)];
    if (exports.length > 0) return { file, exportName: exports[exports.length - 1][1] };
  }
  throw new WeftError(
    'clone_source_unreadable',
    `Could not find the file of ${from} that declares "${fnName}" (an \`export const\` holding name: '${fnName}').`,
  );
}

function providerExport(from: string): { file: string; exportName: string } {
  const file = join(from, 'provider.ts');
  const match = existsSync(file) ? /export const (\w+)\s*:\s*ProviderDefinition/.exec(readFileSync(file, 'utf8')) : null;
  if (!match) throw new WeftError('clone_source_unreadable', `${from} has no provider.ts exporting its ProviderDefinition.`);
  return { file, exportName: match[1] };
}

/** The files and every file of the folder `from` they import, transitively. */
function dependencyClosure(roots: string[], from: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = resolveSource(resolve(dirname(file), spec));
      if (target?.startsWith(from + sep)) visit(target);
    }
  };
  roots.forEach(visit);
  return [...seen].sort();
}

/** What the copy imports Weft's contract and zod from instead: one entry, `weft/integration`. */
function rewriteImports(text: string, file: string, from: string): string {
  return text.replace(/(from\s+|require\(\s*|import\(\s*)'([^']+)'/g, (whole, lead: string, spec: string) => {
    if (spec === 'zod') return `${lead}'weft/integration'`;
    if (!spec.startsWith('.')) return whole;
    const target = resolve(dirname(file), spec);
    if (target === from || target.startsWith(from + sep)) return whole;
    if (/[\\/]runtime[\\/](types|errors|unified-models)$/.test(target)) return `${lead}'weft/integration'`;
    throw new WeftError('clone_import_unsupported', `${file} imports ${spec}, which weft/integration does not provide; it cannot be cloned as it is.`);
  });
}

function renameProvider(text: string, name: string, key: string, file: string): string {
  const declared = `name: '${name}'`;
  if (text.split(declared).length !== 2) throw new WeftError('clone_source_unreadable', `${file} does not declare ${declared} exactly once.`);
  return text.replace(declared, `name: '${key}'`);
}

function indexSource(name: string, from: string, entries: ExportedFunction[], provider: { file: string; exportName: string }, as: string | undefined): string {
  const imports = entries.map((e) => `import { ${e.exportName} } from './${importPath(from, e.file)}';`);
  const list = (kind: 'sync' | 'action') =>
    entries
      .filter((e) => e.kind === kind)
      .map((e) => e.exportName)
      .join(', ');
  if (as) {
    return [
      `import { defineIntegration } from 'weft/integration';`,
      `import { ${provider.exportName} } from './provider';`,
      ...imports,
      '',
      `/** Cloned from the pre-built ${name} as an integration of its own, "${as}" (weft clone --as): its provider is the copy in provider.ts. */`,
      `export default defineIntegration({ provider: ${provider.exportName}, syncs: [${list('sync')}], actions: [${list('action')}] });`,
      '',
    ].join('\n');
  }
  return [
    `import { extendIntegration } from 'weft/integration';`,
    `import { ${provider.exportName} } from 'weft/integrations/${name}/provider';`,
    ...imports,
    '',
    `/**`,
    ` * Cloned from the pre-built ${name} (weft clone), keeping its provider (Weft's own, imported above):`,
    ` * these functions replace the pre-built ones of the same name; the integration key, auth and`,
    ` * connections stay ${name}'s.`,
    ` */`,
    `export default extendIntegration({ extends: '${name}', provider: ${provider.exportName}, syncs: [${list('sync')}], actions: [${list('action')}] });`,
    '',
  ].join('\n');
}

function importPath(from: string, file: string): string {
  return relative(from, file).replace(/\.ts$/, '').split(sep).join('/');
}

function importSpecifiers(text: string): string[] {
  return [...text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)'([^']+)'/g)].map((m) => m[1]);
}

function resolveSource(base: string): string | undefined {
  return [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) =>
      entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') && entry.name !== 'index.ts' ? [join(dir, entry.name)] : [],
    );
}
