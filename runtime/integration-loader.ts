import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { WeftError } from '../common/errors';
import type { IntegrationDefinition } from './types';

/**
 * An author's own integrations, outside Weft (`WEFT_INTEGRATIONS_DIR`): one subfolder per
 * integration, in the shape of Weft's `integrations/<name>/`, whose `index` (`index.ts` under
 * tsx, `index.js` compiled) exports its IntegrationDefinition, as the default export or as
 * its only one. A folder that does not is refused at start with a stable code, so a typo
 * never becomes an integration that silently is not there.
 */
export function loadIntegrationsDir(dir: string): IntegrationDefinition[] {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new WeftError('integrations_dir_unreadable', `WEFT_INTEGRATIONS_DIR is ${root}, which is not a directory.`);
  }
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules')
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((entry) => loadIntegrationFolder(join(root, entry.name)));
}

/** One integration folder's definition (see loadIntegrationsDir). */
function loadIntegrationFolder(folder: string): IntegrationDefinition {
  let exported: Record<string, unknown>;
  try {
    // A CommonJS require of a folder chosen at run time, synchronous like the registry it
    // feeds: tsx (development) and jest load index.ts, compiled Weft loads index.js.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    exported = require(require.resolve(folder)) as Record<string, unknown>;
  } catch (err) {
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
      `Integration folder ${folder} must export one IntegrationDefinition ({ provider, syncs, actions }) as its default or only export; it exports ${Object.keys(exported).join(', ') || 'nothing'}.`,
    );
  }
  const parsed = integrationShape.safeParse(candidates[0]);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new WeftError('integration_invalid', `Integration folder ${folder} exports something that is not an IntegrationDefinition: ${problems}.`);
  }
  return candidates[0] as IntegrationDefinition;
}

/** The registry's own uniqueness rule, checked when built-in and custom integrations meet. */
export function assertDistinctProviders(definitions: IntegrationDefinition[]): void {
  const seen = new Set<string>();
  for (const def of definitions) {
    if (seen.has(def.provider.name)) {
      throw new WeftError(
        'duplicate_integration',
        `Two integrations are named "${def.provider.name}"; a provider name must be unique (a custom integration cannot replace a pre-built one).`,
      );
    }
    seen.add(def.provider.name);
  }
}

function looksLikeIntegration(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'provider' in value && 'syncs' in value;
}

const fn = z.custom<(...args: unknown[]) => unknown>((v) => typeof v === 'function', 'must be a function');
const operationName = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes');

/** What the registry and the runtime rely on; the rest is typed by the author's compiler. */
const integrationShape = z.object({
  provider: z.looseObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and dashes'),
    displayName: z.string().min(1),
    authMode: z.enum(['API_KEY', 'OAUTH2', 'APP']),
    baseUrl: z.url(),
    apiKey: z.object({ header: z.string().regex(/^[A-Za-z0-9-]+$/) }).optional(),
    secretHeaders: z.array(z.string().regex(/^[A-Za-z0-9-]+$/)).optional(),
    requestIdHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]+$/)
      .optional(),
  }),
  syncs: z.array(z.looseObject({ kind: z.literal('sync'), name: operationName, models: z.record(z.string(), z.unknown()), exec: fn })),
  actions: z.array(z.looseObject({ kind: z.literal('action'), name: operationName, exec: fn })),
});
