import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runSync, startWeftStack, type WeftStack } from '../support/weft-stack';

const REPO = resolve(__dirname, '../..');
const BIN = join(REPO, 'cli', 'bin.js');
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const EVENTS = 120;

/** `weft …` as a user runs it, from `cwd`. */
function weft(args: string[], cwd: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
}

/** `weft …` without blocking this process, whose in-process API the command calls. */
function weftAsync(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      done({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function typecheck(project: string) {
  return spawnSync(process.execPath, [TSC, '-p', project], { encoding: 'utf8', timeout: 60_000 });
}

/**
 * `weft init <dir>` in a temporary folder outside Weft's tree (no node_modules above it):
 * the project it writes type-checks against this Weft, its tests run with `weft test`, Weft
 * loads its integrations at start (or refuses a broken one, naming the file), and its example
 * sync and action work end to end against the Luma simulator on a running Weft.
 */
describe('weft init: a project of integrations outside Weft', () => {
  let work: string;
  let project: string;
  let stack: WeftStack | undefined;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'weft-init-'));
    project = join(work, 'acme-integrations');
    const run = weft(['init', project], work);
    expect(run.stderr.replace(/^weft: no build.*\n/m, '')).toBe('');
    expect(run.status).toBe(0);
  });
  afterAll(async () => {
    await stack?.shutdown();
    rmSync(work, { recursive: true, force: true });
  });

  test('it writes the project shape: an example integration, tests, tsconfig, jest config, README', () => {
    for (const file of [
      'integrations/example-calendar/index.ts',
      'integrations/example-calendar/provider.ts',
      'integrations/example-calendar/models.ts',
      'integrations/example-calendar/syncs/events.ts',
      'integrations/example-calendar/actions/get-account.ts',
      'tests/example-calendar.test.ts',
      'tsconfig.json',
      'jest.config.js',
      'package.json',
      'README.md',
      '.gitignore',
    ]) {
      expect(existsSync(join(project, file))).toBe(true);
    }
    // One import source for integration code, resolved to this install.
    const sources = ['index.ts', 'provider.ts', 'models.ts', 'syncs/events.ts', 'actions/get-account.ts'].map((f) =>
      readFileSync(join(project, 'integrations/example-calendar', f), 'utf8'),
    );
    expect(new Set(sources.flatMap((t) => [...t.matchAll(/from '([^.][^']*)'/g)].map((m) => m[1])))).toEqual(new Set(['weft/integration']));
    expect(readFileSync(join(project, 'tsconfig.json'), 'utf8')).toContain(join(REPO, 'runtime', 'sdk.ts'));
    const readme = readFileSync(join(project, 'README.md'), 'utf8');
    for (const step of ['weft dev', 'WEFT_INTEGRATIONS_DIR', '/connections', '/sync/trigger', 'weft dryrun', '--save', 'weft generate:tests', 'weft test']) {
      expect(readme).toContain(step);
    }
  });

  test('a folder that is not empty is refused, and left as it was', () => {
    const before = readdirSync(project).sort();
    const run = weft(['init', project], work);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('init_dir_not_empty');
    expect(run.stderr).not.toMatch(/\n\s+at /); // a one-line reason, no stack trace
    expect(readdirSync(project).sort()).toEqual(before);
  });

  test('the project type-checks against this Weft; a wrong field or an undeclared model does not', () => {
    // Three mistakes in one more file, one compiler run: a field of the wrong type, a model the sync does not declare, a typo on ctx.
    const broken = join(project, 'integrations/example-calendar/syncs/broken.ts');
    writeFileSync(
      broken,
      `import { defineSync, z } from 'weft/integration';
const Item = z.object({ id: z.string(), count: z.number() });
export const broken = defineSync({
  kind: 'sync', name: 'broken', description: '', endpoint: { method: 'GET', path: '/broken' }, models: { Item },
  syncType: 'full', frequency: 'every 1h', autoStart: false,
  async exec(ctx) {
    await ctx.batchSave([{ id: 'a', count: 'one' }], 'Item');
    await ctx.batchSave([{ id: 'a', count: 1 }], 'Items');
    ctx.paginat({ endpoint: '/items' });
  },
});
`,
    );
    try {
      const failed = typecheck(project);
      expect(failed.status).not.toBe(0);
      expect(failed.stdout).toMatch(/broken\.ts\(7,.*Type 'string' is not assignable to type 'number'/);
      expect(failed.stdout).toMatch(/broken\.ts\(8,.*Argument of type '"Items"' is not assignable to parameter of type '"Item"'/);
      expect(failed.stdout).toMatch(/broken\.ts\(9,.*Property 'paginat' does not exist/);
      // ...and nothing else: the scaffolded example and its test compile as written.
      const errorLines = failed.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
      expect(errorLines).toHaveLength(3);
      expect(errorLines.every((l) => l.includes('integrations/example-calendar/syncs/broken.ts('))).toBe(true);
    } finally {
      rmSync(broken);
    }
  });

  test('a broken definition stops `weft worker` at start with the file and what is wrong', () => {
    const file = join(project, 'integrations/example-calendar/syncs/events.ts');
    const original = readFileSync(file, 'utf8');
    try {
      writeFileSync(file, original.replace('async exec(ctx)', 'async run(ctx)'));
      const run = weft(['worker'], work, {
        WEFT_INTEGRATIONS_DIR: join(project, 'integrations'),
        TEMPORAL_ADDRESS: process.env.WEFT_TEST_TEMPORAL_ADDRESS!,
        MONGODB_URI: process.env.WEFT_TEST_MONGODB_URI!,
        WEFT_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain(`${file}: sync "events" has no exec function`);
      expect(run.stderr).toContain('(integration_exec_missing)');
    } finally {
      writeFileSync(file, original);
    }
  });

  test('a running Weft loads the folder; the example sync syncs and the action answers, against the Luma simulator', async () => {
    stack = await startWeftStack({ integrationsDir: join(project, 'integrations'), luma: { eventCount: EVENTS } });
    const created = await stack.api('POST', '/integrations', {
      body: { unique_key: 'example-calendar', provider: 'example-calendar', provider_overrides: { base_url: stack.luma.url } },
    });
    expect(created.status).toBe(201);
    const connected = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'example-calendar', connection_id: 'author-1', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(connected.status).toBe(201);

    // The first run started on connect (autoStart); this joins it or runs again.
    await runSync(stack, 'example-calendar', 'author-1', 'events');
    const records = await stack.api('GET', '/records?model=Event&limit=1000', {
      headers: { 'Connection-Id': 'author-1', 'Provider-Config-Key': 'example-calendar' },
    });
    expect(records.status).toBe(200);
    const byId = new Map(stack.luma.events().map((e) => [e.api_id, e.event]));
    expect(records.body.records).toHaveLength(EVENTS);
    for (const { _weft_metadata: _meta, ...record } of records.body.records) {
      const event = byId.get(record.id)!;
      expect(record).toEqual({ id: record.id, name: event.name, start_at: event.start_at, end_at: event.end_at ?? null, url: event.url ?? null });
    }

    const account = await stack.api('GET', '/v1/example/account', { headers: { 'Connection-Id': 'author-1', 'Provider-Config-Key': 'example-calendar' } });
    expect(account.status).toBe(200);
    expect(account.body).toEqual({ id: stack.luma.user.api_id, name: stack.luma.user.name, email: stack.luma.user.email });
  });

  test('the rest of the README: dryrun --save, generate:tests, weft test (its own test and the generated ones), a type-check with the generated tests', async () => {
    expect(stack).toBeDefined(); // the connection of the test above
    const env = { WEFT_HOST: stack!.apiUrl, WEFT_SECRET_KEY_DEV: stack!.keys.dev, NO_COLOR: '1', CI: '1' };
    const sync = await weftAsync(['dryrun', 'events', 'author-1', '--project', project, '--integration-id', 'example-calendar', '--save'], work, env);
    expect(sync.status).toBe(0);
    const action = await weftAsync(
      ['dryrun', 'get-account', 'author-1', '--project', project, '--integration-id', 'example-calendar', '--input', '{}', '--save'],
      work,
      env,
    );
    expect(action.status).toBe(0);
    const mocks = join(project, 'tests/mocks/example-calendar/mocks');
    expect(existsSync(join(mocks, 'events/Event/batchSave.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(mocks, 'events/Event/batchSave.json'), 'utf8'))).toHaveLength(EVENTS);
    expect(JSON.parse(readFileSync(join(mocks, 'get-account/output.json'), 'utf8'))).toEqual({
      id: stack!.luma.user.api_id,
      name: stack!.luma.user.name,
      email: stack!.luma.user.email,
    });

    const generate = weft(['generate:tests', '--project', project], work);
    expect(generate.status).toBe(0);
    for (const fn of ['events', 'get-account']) expect(existsSync(join(project, 'tests/integrations/example-calendar', `${fn}.test.ts`))).toBe(true);

    // Weft's jest runs them: the folder has no node_modules of its own.
    expect(existsSync(join(project, 'node_modules'))).toBe(false);
    const tests = weft(['test', '--project', project, '--', '--ci'], work);
    expect(tests.stderr).toContain('Tests:       3 passed, 3 total');
    expect(tests.status).toBe(0);

    const typed = typecheck(project);
    expect(typed.stdout + typed.stderr).toBe('');
    expect(typed.status).toBe(0);
  });
});
