import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { WeftError } from '../common/errors';
import { registerSdkResolution } from './sdk-resolution';
import { requireIntegrationIndex } from './typescript-integrations';
import type { ActionDefinition, IntegrationDefinition, ProviderDefinition, SyncDefinition } from './types';

/**
 * A folder that keeps a loaded integration's provider (`extends: 'one-drive'`: its auth,
 * base URL, rate limits, and so every connection of it) and replaces that integration's
 * functions of the same name, or adds new ones. The integration key stays the extended one's;
 * a customized copy under a key of its own is a whole IntegrationDefinition instead
 * (`weft clone --as`).
 */
export interface IntegrationExtension {
  extends: string;
  /**
   * The extended integration's own provider (`import { lumaProvider } from 'weft/integrations/luma/provider'`),
   * so the folder's tests (SyncMock, ActionMock) see it too; at run time the registry uses the
   * extended integration's provider whatever this holds, and only its name is checked.
   */
  provider?: ProviderDefinition;
  syncs: SyncDefinition[];
  actions: ActionDefinition[];
}

/** One folder of WEFT_INTEGRATIONS_DIR, loaded and checked. */
export interface LoadedIntegration {
  folder: string;
  definition: IntegrationDefinition | IntegrationExtension;
}

/**
 * The registry's definitions: the pre-built ones, with the extensions of `dir` applied, and
 * the integrations of `dir`. Every definition is checked here, at start, so a mistake stops
 * the process with a stable code and the file it is in, never a sync that fails later.
 */
export function withIntegrationsDir(builtIn: IntegrationDefinition[], dir: string | undefined): IntegrationDefinition[] {
  const loaded = dir ? loadIntegrationsDir(dir) : [];
  const own = loaded.filter((l): l is LoadedIntegration & { definition: IntegrationDefinition } => !isExtension(l.definition));
  const all = [...builtIn, ...own.map((l) => l.definition)];
  assertDistinctProviders(all);
  for (const { folder, definition } of loaded) {
    if (!isExtension(definition)) continue;
    const index = all.findIndex((d) => d.provider.name === definition.extends);
    if (index < 0) {
      throw new WeftError(
        'integration_provider_unknown',
        `${indexFile(folder)}: extends "${definition.extends}", which names no integration; known: ${all.map((d) => d.provider.name).join(', ')}.`,
      );
    }
    all[index] = applyExtension(all[index], definition);
  }
  return all;
}

/**
 * An author's own integrations, outside Weft (`WEFT_INTEGRATIONS_DIR`): one subfolder per
 * integration, in the shape of Weft's `integrations/<name>/`, whose `index` (`index.ts`, or
 * `index.js` when the author compiled it) exports its IntegrationDefinition (or IntegrationExtension), as
 * the default export or as its only one. A folder that does not is refused at start with a
 * stable code, so a typo never becomes an integration that silently is not there.
 */
export function loadIntegrationsDir(dir: string): LoadedIntegration[] {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new WeftError('integrations_dir_unreadable', `WEFT_INTEGRATIONS_DIR is ${root}, which is not a directory.`);
  }
  // `weft/integration` and `zod` resolve to Weft's own modules from any folder on disk.
  registerSdkResolution();
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules')
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((entry) => loadIntegrationFolder(join(root, entry.name)));
}

/** One integration folder's definition (see loadIntegrationsDir). */
function loadIntegrationFolder(folder: string): LoadedIntegration {
  let exported: Record<string, unknown>;
  try {
    // A CommonJS require of a folder chosen at run time, synchronous like the registry it
    // feeds: tsx (development) and jest load index.ts; compiled Weft loads index.js, or
    // index.ts through a tsx namespace of its own.
    exported = requireIntegrationIndex(folder);
  } catch (err) {
    if (err instanceof WeftError && err.code === 'integration_typescript_unsupported') throw err;
    const missing = (err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes(folder);
    throw new WeftError(
      missing ? 'integration_index_missing' : 'integration_unloadable',
      missing
        ? `Integration folder ${folder} has no index (index.ts or index.js) exporting its IntegrationDefinition.`
        : `Integration folder ${folder} could not be loaded: ${(err as Error).message}`,
    );
  }
  const candidates = 'default' in exported ? [exported.default] : Object.values(exported).filter(looksLikeIntegration);
  if (candidates.length !== 1) {
    throw new WeftError(
      'integration_export_missing',
      `Integration folder ${folder} must export one IntegrationDefinition ({ provider, syncs, actions }) or extension ({ extends, syncs, actions }) as its default or only export; it exports ${Object.keys(exported).join(', ') || 'nothing'}.`,
    );
  }
  const candidate = candidates[0];
  const extension = isExtension(candidate);
  const parsed = (extension ? extensionShape : integrationShape).safeParse(candidate);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new WeftError('integration_invalid', `${indexFile(folder)} exports something that is not an IntegrationDefinition: ${problems}.`);
  }
  const definition = candidate as IntegrationDefinition | IntegrationExtension;
  if (isExtension(definition) && definition.provider && definition.provider.name !== definition.extends) {
    throw new WeftError(
      'integration_invalid',
      `${indexFile(folder)} extends "${definition.extends}" but names the provider of "${definition.provider.name}"; an extension keeps the provider of the integration it extends.`,
    );
  }
  checkFunctions(folder, definition);
  return { folder, definition };
}

/**
 * What zod's shape check cannot say in the author's terms: each function has its `exec`,
 * its models and schemas are zod schemas, and no name is used twice in the integration
 * (the API addresses functions by name). Each failure names the file that defines the function.
 */
function checkFunctions(folder: string, def: IntegrationDefinition | IntegrationExtension): void {
  const seen = new Map<string, string>();
  const functions: Array<SyncDefinition | ActionDefinition> = [...def.syncs, ...def.actions];
  for (const [i, fn] of functions.entries()) {
    const where = `${definingFile(folder, fn.name)}: ${fn.kind} "${fn.name}"`;
    if (typeof fn.exec !== 'function') {
      throw new WeftError('integration_exec_missing', `${where} has no exec function (async exec(ctx${fn.kind === 'action' ? ', input' : ''}) { ... }).`);
    }
    const before = seen.get(fn.name);
    if (before) {
      throw new WeftError(
        'integration_name_duplicate',
        `${where}: the name "${fn.name}" is used twice in this integration (${before} and ${fn.kind} #${i + 1}); each sync and action needs its own.`,
      );
    }
    seen.set(fn.name, fn.kind);
    const schemas: Array<[string, unknown]> =
      fn.kind === 'sync'
        ? Object.entries(fn.models).map(([model, schema]) => [`model "${model}"`, schema])
        : [
            ['input', fn.input],
            ['output', fn.output],
          ];
    for (const [label, schema] of schemas) {
      if (!isZodSchema(schema)) {
        throw new WeftError('integration_model_invalid', `${where}: its ${label} is not a zod schema (z.object({ ... }) from weft/integration).`);
      }
    }
  }
}

/**
 * The base integration with the extension's functions in place of its own of the same name, and
 * its new ones after them. The folder's own export object is completed in place and becomes the
 * definition the registry holds, so a tool that finds a definition by the module exporting it
 * (`weft generate:tests`) finds the folder; the pre-built definition is not touched.
 */
function applyExtension(base: IntegrationDefinition, ext: IntegrationExtension): IntegrationDefinition {
  const replace = <T extends { name: string }>(own: T[], theirs: T[]) => [
    ...own.map((fn) => theirs.find((t) => t.name === fn.name) ?? fn),
    ...theirs.filter((t) => !own.some((fn) => fn.name === t.name)),
  ];
  return Object.assign(ext, {
    provider: base.provider,
    syncs: replace(base.syncs, ext.syncs),
    actions: replace(base.actions, ext.actions),
    connectUi: base.connectUi,
  });
}

/** The registry's own uniqueness rule, checked when built-in and custom integrations meet. */
function assertDistinctProviders(definitions: IntegrationDefinition[]): void {
  const seen = new Set<string>();
  for (const def of definitions) {
    if (seen.has(def.provider.name)) {
      throw new WeftError(
        'duplicate_integration',
        `Two integrations are named "${def.provider.name}"; a provider name must be unique (a custom integration cannot replace a pre-built one; to keep its provider and replace functions, export { extends: '${def.provider.name}', syncs, actions }).`,
      );
    }
    seen.add(def.provider.name);
  }
}

function indexFile(folder: string): string {
  const file = ['index.ts', 'index.js'].map((f) => join(folder, f)).find((f) => existsSync(f));
  return file ?? folder;
}

/**
 * The source file of the folder that declares `name: '<name>'` (a function usually lives in
 * a file of its own), else the folder's index: the message should point where to fix it.
 */
function definingFile(folder: string, name: string): string {
  const declaration = new RegExp(`name:\\s*['"\`]${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}['"\`]`);
  const files = sourceFiles(folder);
  const file = files.find((f) => declaration.test(readFileSync(f, 'utf8')));
  return file ? join(folder, relative(folder, file)) : indexFile(folder);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name.startsWith('.') ? [] : sourceFiles(path);
    return /\.(ts|js|mts|cts|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function isExtension(value: unknown): value is IntegrationExtension {
  return typeof value === 'object' && value !== null && 'extends' in value;
}

function looksLikeIntegration(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ('provider' in value || 'extends' in value) && ('syncs' in value || 'actions' in value);
}

/** A zod 4 schema, from Weft's copy of zod or any other: what validation calls on it. */
function isZodSchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && '_zod' in value && typeof (value as { safeParse?: unknown }).safeParse === 'function';
}

// A function's name is checked here, its exec and schemas by checkFunctions (with the file to fix).
const operationName = z.string().regex(/^[a-z0-9][a-z0-9/-]*$/, 'lower-case letters, digits, dashes and slashes');
const syncShape = z.looseObject({ kind: z.literal('sync'), name: operationName, models: z.record(z.string(), z.unknown()) });
const actionShape = z.looseObject({ kind: z.literal('action'), name: operationName });

/** What the registry and the runtime rely on; the rest is typed by the author's compiler. */
const integrationShape = z.object({
  provider: z.looseObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and dashes'),
    displayName: z.string().min(1),
    docs: z.url({ protocol: /^https?$/ }).optional(),
    categories: z
      .array(z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and dashes'))
      .max(20)
      .optional(),
    authMode: z.enum(['API_KEY', 'OAUTH2', 'APP']),
    baseUrl: z.url(),
    apiKey: z.object({ header: z.string().regex(/^[A-Za-z0-9-]+$/) }).optional(),
    secretHeaders: z.array(z.string().regex(/^[A-Za-z0-9-]+$/)).optional(),
    requestIdHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]+$/)
      .optional(),
  }),
  syncs: z.array(syncShape),
  actions: z.array(actionShape),
  connectUi: z
    .object({
      logoSvg: z
        .string()
        .max(16_384)
        .regex(/^\s*<svg[\s>]/, 'an <svg> document')
        .optional(),
      scopes: z.record(z.string(), z.string().max(300)).optional(),
      apiKeyAccess: z.array(z.string().max(300)).optional(),
      appAccess: z.array(z.string().max(300)).optional(),
    })
    .optional(),
});

const extensionShape = z.object({
  extends: z.string().min(1),
  provider: z.looseObject({ name: z.string() }).optional(),
  syncs: z.array(syncShape),
  actions: z.array(actionShape),
});
