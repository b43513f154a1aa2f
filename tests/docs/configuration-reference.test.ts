import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { configSchema } from '../../common/config';
import { infraEnvSchema } from '../../scripts/infra/infra-env';
import { CONFIGURATION_DOC, REGENERATE_COMMAND, documentedVariables, renderConfigurationReference } from '../../scripts/docs/configuration-reference';
import { VARIABLES_READ_ELSEWHERE } from '../../scripts/docs/other-variables';

/**
 * docs/configuration.md is generated from the settings' schemas; these tests keep the committed
 * page equal to what the schemas say, and fail when the code reads an environment variable
 * the page does not list.
 */
const repo = path.join(__dirname, '..', '..');

/** Not Weft's own code: dependencies, build output, state, and the tests' and benchmarks' own knobs (top-level folders). */
const SKIPPED_TOP_DIRS = new Set(['.git', '.weft', 'dist', 'coverage', 'tests', 'bench', 'docs']);

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      const skipped = entry.name === 'node_modules' || (dir === repo && SKIPPED_TOP_DIRS.has(entry.name));
      if (!skipped) yield* sourceFiles(path.join(dir, entry.name));
    } else {
      yield path.join(dir, entry.name);
    }
  }
}

/** Where each file kind reads the environment: TypeScript/JavaScript by `env.X`, `env['X']` or a quoted variable name; compose files by `${X}`; shell scripts and Containerfiles by `${WEFT_…}` (their other names are local). */
function variablesRead(file: string, text: string): string[] {
  const patterns: RegExp[] = [];
  if (/\.(ts|js|cjs|mjs)$/.test(file)) {
    patterns.push(/\benv\.([A-Z][A-Z0-9_]*)\b/g, /\benv\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\]/g, /['"`](WEFT_[A-Z0-9_]+)['"`]/g);
  } else if (/\.ya?ml$/.test(file)) {
    patterns.push(/\$\{([A-Z][A-Z0-9_]*)/g);
  } else if (/\.sh$|Containerfile$/.test(file)) {
    patterns.push(/\$\{?(WEFT_[A-Z0-9_]+)/g);
  }
  return patterns.flatMap((p) => [...text.matchAll(p)].map((m) => m[1]));
}

function readsByVariable(): Map<string, string[]> {
  const reads = new Map<string, string[]>();
  for (const file of sourceFiles(repo)) {
    for (const name of variablesRead(file, readFileSync(file, 'utf8'))) {
      const files = reads.get(name) ?? [];
      reads.set(name, [...new Set([...files, path.relative(repo, file)])]);
    }
  }
  return reads;
}

describe('the configuration reference (docs/configuration.md)', () => {
  test('is what the schemas say today', () => {
    const committed = existsSync(CONFIGURATION_DOC) ? readFileSync(CONFIGURATION_DOC, 'utf8') : '';
    const generated = renderConfigurationReference();
    if (committed !== generated) {
      throw new Error(`docs/configuration.md differs from the settings' schemas: run \`${REGENERATE_COMMAND}\` and commit the result.`);
    }
  });

  test('lists every setting of both schemas once, with its default', () => {
    const rows = documentedVariables();
    const names = rows.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of [...Object.keys(configSchema.shape), ...Object.keys(infraEnvSchema.shape)]) expect(names).toContain(name);
    const row = (name: string) => rows.find((r) => r.name === name);
    // Defaults come from the schema itself, not from prose.
    expect(row('PORT')).toMatchObject({ default: '`3003`', values: 'integer 0–65535' });
    expect(row('WEFT_SYNC_HEARTBEAT_TIMEOUT_MS')).toMatchObject({ default: '`30000`', values: 'integer ≥ 1 (milliseconds)' });
    expect(row('OTEL_EXPORTER_OTLP_PROTOCOL')).toMatchObject({ default: '`http/protobuf`', values: '`http/protobuf`, `http/json`' });
  });

  test('names every environment variable the code reads', () => {
    const reads = readsByVariable();
    // The scan finds each way of reading: process.env, a name in a variable, compose and shell interpolation.
    expect([...reads.keys()]).toEqual(
      expect.arrayContaining(['WEFT_KEY', 'WEFT_SECRET_KEY_DEV', 'MONGODB_PASSWORD', 'WEFT_COMPOSE_PROJECT', 'WEFT_MOCK_LOG_LEVEL']),
    );
    const documented = new Set(documentedVariables().map((r) => r.name));
    const missing = [...reads].filter(([name]) => !documented.has(name)).map(([name, files]) => `${name} (read in ${files.join(', ')})`);
    if (missing.length) {
      throw new Error(
        `Read but not in docs/configuration.md: ${missing.join('; ')}. Add it to the config schema (common/config.ts, with .meta(setting(…))) or to scripts/docs/other-variables.ts, then run \`${REGENERATE_COMMAND}\`.`,
      );
    }
  });

  test('lists no variable read elsewhere that its reader no longer reads', () => {
    const stale = VARIABLES_READ_ELSEWHERE.filter((v) => !v.readBy.startsWith('@')).filter((v) => {
      const file = path.join(repo, v.readBy);
      return !existsSync(file) || !readFileSync(file, 'utf8').includes(v.name);
    });
    expect(stale.map((v) => `${v.name} (${v.readBy})`)).toEqual([]);
  });
});
