import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cloneIntegration } from '../../cli/commands/clone';
import { toCalendarEvent } from '../../integrations/luma/mappers';
import { integrations as prebuilt } from '../../integrations';
import { readAllRecords, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';

const REPO = resolve(__dirname, '../..');
const EVENTS = 60;

function weft(args: string[], cwd: string) {
  return spawnSync(process.execPath, [join(REPO, 'cli', 'bin.js'), ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? allFiles(join(dir, e.name)) : [join(dir, e.name)]));
}

/**
 * `weft clone` copies a pre-built integration's code into a project outside Weft, importing
 * only `weft/integration` and its own files. Kept provider: the copy's function replaces the
 * pre-built one under the same key and connections; `--as`: a new integration key with its
 * own provider copy. Both copies load in a running Weft and sync against the Luma simulator.
 */
describe('weft clone', () => {
  let project: string;
  let stack: WeftStack | undefined;

  beforeAll(() => {
    project = join(mkdtempSync(join(tmpdir(), 'weft-clone-')), 'project');
    expect(weft(['init', project], tmpdir()).status).toBe(0);
  });
  afterAll(async () => {
    await stack?.shutdown();
    rmSync(join(project, '..'), { recursive: true, force: true });
  });

  test('one function, keeping the provider: the function, the files it imports, an extension index', () => {
    const run = weft(['clone', 'luma/list-events', project], project);
    expect(run.status).toBe(0);
    const folder = join(project, 'integrations', 'luma');
    expect(
      allFiles(folder)
        .map((f) => f.slice(folder.length + 1))
        .sort(),
    ).toEqual(['index.ts', 'mappers.ts', 'models.ts', 'syncs/list-events.ts']);
    const index = readFileSync(join(folder, 'index.ts'), 'utf8');
    expect(index).toContain("import { lumaProvider } from 'weft/integrations/luma/provider';");
    expect(index).toContain("extendIntegration({ extends: 'luma', provider: lumaProvider, syncs: [listEvents], actions: [] })");
    // Imports: weft/integration or the copy's own files, nothing of Weft's tree.
    for (const file of allFiles(folder)) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g))
        expect(spec === 'weft/integration' || spec === 'weft/integrations/luma/provider' || /^\.\.?\/[a-z-/]+$/.test(spec)).toBe(true);
    }
  });

  test("the copy's generated test (weft generate:tests) passes on Weft's own recording of list-events", () => {
    const mocks = join(project, 'tests', 'mocks', 'luma', 'mocks');
    for (const part of ['list-events', 'weft']) cpSync(join(REPO, 'tests', 'mocks', 'luma', 'mocks', part), join(mocks, part), { recursive: true });
    const generate = weft(['generate:tests', '--project', project, '--integration', 'luma'], project);
    expect(generate.stdout + generate.stderr).toContain('written tests/integrations/luma/list-events.test.ts');
    const run = weft(['test', '--project', project, '--', '--ci', 'luma'], project);
    expect(run.stderr).toContain('PASS tests/integrations/luma/list-events.test.ts');
    expect(run.status).toBe(0);
  });

  test('the whole integration --as a new key: its own provider copy under that name', () => {
    const run = weft(['clone', 'luma', project, '--as', 'my-luma'], project);
    expect(run.status).toBe(0);
    const folder = join(project, 'integrations', 'my-luma');
    expect(readFileSync(join(folder, 'provider.ts'), 'utf8')).toContain("name: 'my-luma'");
    expect(existsSync(join(folder, 'actions', 'create-event.ts'))).toBe(true);
  });

  test('the copies type-check in the project, against this Weft', () => {
    const tsc = spawnSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { encoding: 'utf8', timeout: 60_000 });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });

  test('mistakes are refused with their own code, and write nothing', () => {
    const before = allFiles(project).sort();
    expect(() => cloneIntegration('lumaa', project)).toThrow(
      expect.objectContaining({ code: 'clone_unknown_integration', message: expect.stringContaining('one-drive, github, luma') }),
    );
    expect(() => cloneIntegration('luma/list-event', project)).toThrow(
      expect.objectContaining({ code: 'clone_unknown_function', message: expect.stringContaining('list-events, create-event') }),
    );
    expect(() => cloneIntegration('luma/list-events', project)).toThrow(expect.objectContaining({ code: 'clone_target_exists' }));
    expect(() => cloneIntegration('luma', project, { as: 'github' })).toThrow(expect.objectContaining({ code: 'clone_invalid_key' }));
    expect(() => cloneIntegration('luma', project, { as: 'My Luma' })).toThrow(expect.objectContaining({ code: 'clone_invalid_key' }));
    expect(allFiles(project).sort()).toEqual(before);
  });

  test('both copies load in a running Weft and sync; the customized function is the one that runs', async () => {
    // The author's change: event names get a prefix in the copy of list-events.
    const sync = join(project, 'integrations', 'luma', 'syncs', 'list-events.ts');
    const text = readFileSync(sync, 'utf8');
    expect(text).toContain('page.map((entry) => toCalendarEvent(entry))');
    writeFileSync(
      sync,
      text.replace(
        'page.map((entry) => toCalendarEvent(entry))',
        'page.map((entry) => ({ ...toCalendarEvent(entry), name: `cloned: ${toCalendarEvent(entry).name}` }))',
      ),
    );

    stack = await startWeftStack({ integrationsDir: join(project, 'integrations'), luma: { eventCount: EVENTS } });
    expect(stack.core.registry.get('my-luma')?.provider.apiKey?.header).toBe('x-luma-api-key');
    // The folder's own tests (SyncMock) get Weft's provider itself from it.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect((require(join(project, 'integrations', 'luma')) as { default: { provider: unknown } }).default.provider).toBe(
      prebuilt.find((d) => d.provider.name === 'luma')!.provider,
    );
    for (const key of ['luma', 'my-luma']) {
      const created = await stack.api('POST', '/integrations', { body: { unique_key: key, provider: key, provider_overrides: { base_url: stack.luma.url } } });
      expect(created.status).toBe(201);
      const connected = await stack.api('POST', '/connections', {
        body: { provider_config_key: key, connection_id: 'u1', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      });
      expect(connected.status).toBe(201);
      await runSync(stack, key, 'u1', 'list-events');
    }
    const expected = new Map(stack.luma.events().map((e) => [e.api_id, toCalendarEvent(e as never)]));
    const strip = ({ _weft_metadata: _m, ...r }: Record<string, unknown>) => r;

    const customized = (await readAllRecords(stack, 'u1', 'CalendarEvent', {}, 'luma')).map(strip);
    expect(customized).toHaveLength(EVENTS);
    for (const r of customized) expect(r).toEqual({ ...expected.get(r.id as string), name: `cloned: ${expected.get(r.id as string)!.name}` });

    const copy = (await readAllRecords(stack, 'u1', 'CalendarEvent', {}, 'my-luma')).map(strip);
    expect(copy).toHaveLength(EVENTS);
    for (const r of copy) expect(r).toEqual(expected.get(r.id as string));
  });
});
