import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeMockRecording } from '../../runtime/mocks/fixture-files';
import type { IntegrationDefinition } from '../../runtime/types';
import { createLumaSimulator, LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { liveContext } from '../mocks-runtime/live-recording';

// `weft generate:tests` driven as a user would, on a project made by `weft init`: its example
// sync and action recorded against the Luma simulator (the exchanges `weft dryrun --save`
// hands to writeMockRecording), tests generated, run by `weft test`, and failing once a
// recorded provider answer changes.

const run = promisify(execFile);
const weft = (...args: string[]) => run('npx', ['tsx', 'cli/weft.ts', ...args], { cwd: join(__dirname, '../..'), env: { ...process.env, NO_COLOR: '1' } });
type Failure = { code: number; stdout: string; stderr: string };

let root: string;
let project: string;
const generated = () => join(project, 'tests/integrations/example-calendar');

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'weft-generate-'));
  project = join(root, 'calendar-project');
  await weft('init', project);

  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const integration = (require(join(project, 'integrations/example-calendar')) as { default: IntegrationDefinition }).default;
  const sim = createLumaSimulator({ seed: 3, eventCount: 120 });
  const simulatorUrl = await sim.start();
  try {
    const connection = {
      connection_id: 'cal-1',
      provider_config_key: 'example-calendar',
      provider: 'example-calendar',
      auth_mode: 'API_KEY' as const,
      connection_config: {},
      metadata: {},
    };
    const common = {
      projectDir: project,
      integration: 'example-calendar',
      providerBaseUrl: integration.provider.baseUrl,
      secretHeaders: ['x-luma-api-key'],
      connection,
      metadata: {},
      secrets: [LUMA_DEFAULT_API_KEY],
    };
    const live = () => liveContext({ integration, simulatorUrl, headers: { 'x-luma-api-key': LUMA_DEFAULT_API_KEY }, connection });
    const sync = live();
    await integration.syncs[0].exec(sync.ctx);
    await writeMockRecording({ ...common, functionName: 'events', kind: 'sync', ...sync.run });
    const action = live();
    const output = await integration.actions[0].exec(action.ctx, {});
    await writeMockRecording({ ...common, functionName: 'get-account', kind: 'action', ...action.run, batchSave: {}, batchDelete: {}, input: {}, output });
  } finally {
    await sim.stop();
  }
}, 180_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('weft generate:tests', () => {
  it('writes a test per recorded function, never over a hand-written one; the tests pass on the recording and fail once an answer changes', async () => {
    const handWritten = "// my own test of get-account\ntest('mine', () => expect(1).toBe(1));\n";
    const handFile = join(generated(), 'get-account.test.ts');
    await run('mkdir', ['-p', generated()]);
    writeFileSync(handFile, handWritten);

    const first = await weft('generate:tests', '--project', project);
    expect(first.stdout).toMatch(/^written .*example-calendar\/events\.test\.ts$/m);
    expect(first.stdout).toMatch(/^kept +.*example-calendar\/get-account\.test\.ts: hand-written/m);
    expect(readFileSync(handFile, 'utf8')).toBe(handWritten);
    const events = readFileSync(join(generated(), 'events.test.ts'), 'utf8');
    expect(events.split('\n')[0]).toMatch(/^\/\/ @weft-generated /);
    expect(events).toContain("import integration from '../../../integrations/example-calendar';");
    expect(events).toContain("const mock = new SyncMock({ integration, sync: 'events', mocksDir });");
    expect(events).toContain("expect(mock.getBatchSaveData('Event')).toStrictEqual(mock.expectedBatchSave('Event'));");

    // Its own generated file is rewritten (an edit is lost); the hand-written one still is not.
    writeFileSync(join(generated(), 'events.test.ts'), `${events}\n// edited\n`);
    rmSync(handFile);
    const second = await weft('generate:tests', '--project', project, '--integration', 'example-calendar');
    expect(readFileSync(join(generated(), 'events.test.ts'), 'utf8')).toBe(events);
    expect(second.stdout).toMatch(/^written .*get-account\.test\.ts$/m);
    expect(readFileSync(handFile, 'utf8')).toContain("const mock = new ActionMock({ integration, action: 'get-account', mocksDir });");

    const unknown = (await weft('generate:tests', '--project', project, '--function', 'nope').catch((e: Failure) => e)) as Failure;
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n').pop()).toMatch(/^No function "nope" in any integration; known: .*events, get-account.* \(unknown_function\)$/);

    const passing = await weft('test', '--project', project, '--', 'tests/integrations');
    expect(passing.stderr).toMatch(/Tests: +2 passed, 2 total/);

    // The loop closes: the provider now names one event differently, the sync test fails.
    const mocks = join(project, 'tests/mocks/example-calendar/mocks/events/mocks');
    const page = join(mocks, readdirSync(mocks).sort()[0]);
    const saved = JSON.parse(readFileSync(page, 'utf8'));
    saved.response.body.entries[0].event.name = 'Renamed by the provider';
    writeFileSync(page, JSON.stringify(saved));
    const failing = (await weft('test', '--project', project, '--', 'tests/integrations').catch((e: Failure) => e)) as Failure;
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(/FAIL .*events\.test\.ts/);
    expect(failing.stderr).toContain('Renamed by the provider');
    expect(failing.stderr).toMatch(/Tests: +1 failed, 1 passed, 2 total/);
  }, 300_000);
});
