import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { configSchema, type SettingDoc, type SettingGroup } from '../../common/config';
import { infraEnvSchema } from '../infra/infra-env';
import { VARIABLES_READ_ELSEWHERE } from './other-variables';

/**
 * docs/configuration.md, written from the settings themselves: the config schema
 * (common/config.ts), the infrastructure scripts' schema (scripts/infra/infra-env.ts) and the
 * list of variables read elsewhere (./other-variables.ts). Names, defaults and allowed values
 * come from the zod schemas, descriptions from each field's `.meta(setting(…))`, so the page
 * cannot say a default the code does not have. `npm run docs:config` writes it;
 * tests/docs/configuration-reference.test.ts fails when the committed page differs.
 */
export const CONFIGURATION_DOC = path.join(__dirname, '..', '..', 'docs', 'configuration.md');
export const REGENERATE_COMMAND = 'npm run docs:config';

/** The page's sections in order (the type makes every group have one). */
const SECTIONS: Record<SettingGroup, { title: string; intro: string }> = {
  server: {
    title: 'API server',
    intro: '`weft api`, and the API inside `npm start`.',
  },
  protection: {
    title: 'API rate limits and proxies',
    intro: 'How the API protects itself; [api-protection.md](api-protection.md) explains the limits.',
  },
  worker: {
    title: 'Worker',
    intro: '`weft worker` (and the worker inside `npm start`): task queues, activity timing, probes, and what it loads.',
  },
  temporal: {
    title: 'Temporal',
    intro:
      "Where Temporal is and how Weft names what it starts there. The `TEMPORAL_*` connection variables are Temporal's own environment configuration: the SDK (`@temporalio/envconfig`) reads them over a profile of a TOML file, as the `temporal` CLI does, so a profile that works for `temporal workflow list` works for Weft. [deploying.md](deploying.md#1-temporal) shows Temporal Cloud and self-hosted set-ups.",
  },
  codec: {
    title: 'Temporal codec endpoint',
    intro:
      "The API's remote-codec endpoint, for the Temporal UI and CLI to show encrypted payloads; [temporal-payload-encryption.md](temporal-payload-encryption.md) explains it.",
  },
  mongodb: {
    title: 'MongoDB',
    intro: 'The database (MongoDB 7+ or FerretDB).',
  },
  secrets: {
    title: 'Secrets and keys',
    intro: 'Keys Weft holds; [secrets-and-redaction.md](secrets-and-redaction.md) says how they are kept out of logs.',
  },
  egress: {
    title: 'Outbound calls',
    intro: 'Calls Weft makes to providers and to your webhook receivers; [egress.md](egress.md) explains the policy.',
  },
  telemetry: {
    title: 'OpenTelemetry',
    intro:
      'Traces and metrics over OTLP/HTTP, by the standard OpenTelemetry variables; on only when an OTLP endpoint is set and `OTEL_SDK_DISABLED` is not `true`.',
  },
  local: {
    title: 'Local servers (`npm start`, `npm test`)',
    intro:
      'Read only by the scripts that start the Temporal dev server and FerretDB for `npm start`, `weft dev` and the tests (scripts/infra/). `weft api` and `weft worker` never start servers.',
  },
  cli: {
    title: 'Command-line tools',
    intro: 'Read by `weft` commands that talk to a running Weft or replay saved mocks.',
  },
  deploy: {
    title: 'Container deployment (`deploy/`)',
    intro:
      "Read by the compose file and the local image scripts, not by Weft itself; the compose file passes Weft's own settings above into its containers. [deploy/README.md](../deploy/README.md) walks through it.",
  },
};

interface Row {
  name: string;
  group: SettingGroup;
  default: string;
  values: string;
  description: string;
}

type Shape = Record<string, z.ZodType>;

/** Every documented variable, in schema order within each group. */
export function documentedVariables(): Row[] {
  const rows = rowsFromSchema(configSchema.shape, 'common/config.ts');
  const seen = new Set(rows.map((r) => r.name));
  // The infrastructure scripts read TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and MONGODB_URI too: documented once, above.
  rows.push(...rowsFromSchema(infraEnvSchema.shape, 'scripts/infra/infra-env.ts', seen));
  for (const v of VARIABLES_READ_ELSEWHERE) {
    if (rows.some((r) => r.name === v.name)) throw new Error(`${v.name} is in a schema and in scripts/docs/other-variables.ts: keep one`);
    rows.push({ name: v.name, group: v.group, default: v.whenUnset ?? '—', values: v.values ?? '—', description: v.description });
  }
  return rows;
}

function rowsFromSchema(shape: Shape, source: string, skip: ReadonlySet<string> = new Set()): Row[] {
  const rows: Row[] = [];
  for (const [name, field] of Object.entries(shape)) {
    if (skip.has(name)) continue;
    const doc = field.meta() as Partial<SettingDoc> | undefined;
    if (!doc?.group || !doc.description || !(doc.group in SECTIONS)) {
      throw new Error(`${name} in ${source} has no group and description: add .meta(setting('<group>', '<what it does>'))`);
    }
    const json = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    rows.push({
      name,
      group: doc.group,
      default: doc.whenUnset ?? (json.default === undefined || json.default === '' ? '—' : code(String(json.default))),
      values: doc.values ?? valuesOf(name, json),
      description: doc.description,
    });
  }
  return rows;
}

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minLength?: number;
  format?: string;
  pattern?: string;
}

/** What the schema accepts, in words; the unit comes from the name's suffix. */
function valuesOf(name: string, json: JsonSchema): string {
  if (json.enum) return json.enum.map((v) => code(String(v))).join(', ');
  if (json.type === 'integer' || json.type === 'number') {
    const min = json.minimum ?? (json.exclusiveMinimum === undefined ? undefined : json.exclusiveMinimum + 1);
    const max = json.maximum !== undefined && json.maximum < Number.MAX_SAFE_INTEGER ? json.maximum : undefined;
    const range = min !== undefined && max !== undefined ? ` ${min}–${max}` : min !== undefined ? ` ≥ ${min}` : '';
    const unit = UNITS.find(([suffix]) => name.endsWith(suffix))?.[1];
    return `integer${range}${unit ? ` (${unit})` : ''}`;
  }
  if (json.format === 'uri') return 'URL';
  if (json.pattern) return `matches ${code(json.pattern)}`;
  if (json.minLength && json.minLength > 1) return `at least ${json.minLength} characters`;
  return 'string';
}

const UNITS: Array<[string, string]> = [
  ['_MS', 'milliseconds'],
  ['_S', 'seconds'],
  ['_MINUTES', 'minutes'],
  ['_DAYS', 'days'],
  ['_BYTES', 'bytes'],
  ['_INTERVAL', 'milliseconds'],
];

function code(text: string): string {
  return `\`${text}\``;
}

/** A table cell: pipes escaped, no line breaks. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

/** The page, as `npm run docs:config` writes it. */
export function renderConfigurationReference(): string {
  const rows = documentedVariables();
  const groups = (Object.keys(SECTIONS) as SettingGroup[]).filter((g) => rows.some((r) => r.group === g));
  const out: string[] = [
    '# Configuration reference',
    '',
    `<!-- Generated by \`${REGENERATE_COMMAND}\` from common/config.ts, scripts/infra/infra-env.ts and scripts/docs/other-variables.ts: edit those, then run it. -->`,
    '',
    'Weft is configured by environment variables only. Each process parses them once at start',
    '(`common/config.ts`); a value it cannot use stops the start with a message naming the',
    'variable. Every variable Weft, its scripts and its container files read is on this page',
    '(the tests and benchmarks have a few of their own, named where they are read); a test fails',
    'when the code reads one that is not here. "—" in the default column: unset, the feature is off',
    'or the value must be given.',
    '',
    ...groups.map((g) => `- [${SECTIONS[g].title}](#${anchor(SECTIONS[g].title)})`),
  ];
  for (const group of groups) {
    out.push('', `## ${SECTIONS[group].title}`, '', SECTIONS[group].intro, '', '| variable | default | values | description |', '|---|---|---|---|');
    for (const r of rows.filter((row) => row.group === group)) {
      out.push(`| ${code(r.name)} | ${cell(r.default)} | ${cell(r.values)} | ${cell(r.description)} |`);
    }
  }
  return `${out.join('\n')}\n`;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
}

if (require.main === module) {
  writeFileSync(CONFIGURATION_DOC, renderConfigurationReference());
  console.log(`wrote ${path.relative(process.cwd(), CONFIGURATION_DOC)}`);
}
