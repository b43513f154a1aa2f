import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { InfraError } from './errors';

/** Where the settings live, relative to the repository root. */
const DEV_CONFIG_FILE = 'temporal-dev.yaml';

// The dev server accepts exactly these search attribute types (`start-dev --help`).
const searchAttributeTypeSchema = z.enum(['Text', 'Keyword', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList']);

const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an identifier (letters, digits, _)');
const port = z.number().int().min(1).max(65535);

// Strict objects: a misspelt key in the yaml should fail loudly, not be silently ignored.
export const devConfigSchema = z.strictObject({
  version: z.string().regex(/^v\d+\.\d+\.\d+$/, 'must be a tag like v1.5.1'),
  namespace: z.string().min(1),
  // Weft's embedded servers are for this machine only; a routable address would expose an
  // unauthenticated Temporal frontend to the network.
  ip: z.string().regex(/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/, 'must be a loopback address such as 127.0.0.1'),
  port,
  ui: z.strictObject({ enabled: z.boolean(), port }),
  dbFile: z.string().min(1),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'never']),
  searchAttributes: z.record(identifier, searchAttributeTypeSchema).default({}),
  // Dynamic config values are JSON values on the command line; keep to scalars.
  dynamicConfig: z
    .record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()]))
    .nullish()
    .transform((v) => v ?? {}),
});

export type DevConfig = z.infer<typeof devConfigSchema>;
export type SearchAttributeType = z.infer<typeof searchAttributeTypeSchema>;

/** Reads and validates `temporal-dev.yaml` from the repository root (or an explicit file). */
export async function loadDevConfig(repoRoot: string, file = DEV_CONFIG_FILE): Promise<DevConfig> {
  const fullPath = path.resolve(repoRoot, file);
  let text: string;
  try {
    text = await readFile(fullPath, 'utf8');
  } catch (err) {
    throw new InfraError('infra_config_invalid', `Cannot read ${fullPath}: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new InfraError('infra_config_invalid', `${fullPath} is not valid YAML: ${(err as Error).message}`);
  }
  const parsed = devConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new InfraError('infra_config_invalid', `Invalid ${fullPath}: ${problems.join('; ')}`, parsed.error.issues);
  }
  return parsed.data;
}
