import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import {
  connectOneDrive,
  createLumaIntegration,
  createOneDriveIntegration,
  readAllRecords,
  startWeftStack,
  waitForLogs,
  type WeftStack,
} from '../support/weft-stack';

const REPO = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO, 'cli', 'bin.js');
const API_KEY = 'sandbox-luma-api-key';
const EVENTS = 120;
const PAGE = 50;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The command's own last line on stderr (the launcher may print one before it). */
  lastLine: string;
}

/**
 * A project outside Weft (as `weft init` makes one): one integration of its own whose sync
 * shows what the dry run hands it (lastSyncDate, variant, metadata) and writes metadata and
 * a checkpoint, which a dry run must keep to itself. Its provider is Luma's API under
 * another name, so the stack's Luma simulator answers it. JavaScript, so neither jest nor
 * the CLI has anything to compile; zod by absolute path, the folder being outside the repo.
 */
function writeProbeProject(dir: string): void {
  const folder = path.join(dir, 'integrations', 'dryrun-probe');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, 'index.js'),
    `'use strict';
const { z } = require(${JSON.stringify(require.resolve('zod'))});
const Probe = z.object({ id: z.string(), lastSyncDate: z.string().nullable(), variant: z.string(), metadata: z.record(z.string(), z.unknown()), events: z.number() });
exports.default = {
  provider: {
    name: 'dryrun-probe', displayName: 'Dry-run probe', authMode: 'API_KEY', baseUrl: 'https://api.lu.ma',
    apiKey: { header: 'x-luma-api-key' }, verify: { method: 'GET', endpoint: '/public/v1/user/get-self' },
    pagination: { type: 'cursor', cursorPathInResponse: 'next_cursor', cursorNameInRequest: 'pagination_cursor', hasMorePathInResponse: 'has_more', responsePath: 'entries' },
    retries: 0,
  },
  syncs: [{
    kind: 'sync', name: 'probe', description: 'Shows what the dry run hands it.', endpoint: { method: 'GET', path: '/probe' },
    models: { Probe }, syncType: 'incremental', frequency: 'every 1h', autoStart: false,
    async exec(ctx) {
      const metadata = await ctx.getMetadata();
      let events = 0;
      for await (const page of ctx.paginate({ endpoint: '/public/v1/calendar/list-events', params: { pagination_limit: 40 } })) events += page.length;
      ctx.log('probe counted events', { events });
      await ctx.updateMetadata({ probed: true });
      await ctx.saveCheckpoint({ events });
      await ctx.batchSave([{ id: 'probe', lastSyncDate: ctx.lastSyncDate ? ctx.lastSyncDate.toISOString() : null, variant: ctx.variant, metadata, events }], 'Probe');
    },
  }],
  actions: [],
};
`,
  );
}

describe('weft dryrun', () => {
  let stack: WeftStack;
  let project: string;
  let env: Record<string, string>;

  /** `weft dryrun <args>` as a user in CI runs it (no terminal: nothing is prompted). */
  function dryrun(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<Run> {
    return new Promise((resolve) => {
      const childEnv: Record<string, string | undefined> = { ...process.env, ...env, ...extraEnv };
      for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
      execFile(
        process.execPath,
        [BIN, 'dryrun', ...args],
        { cwd: REPO, env: childEnv as NodeJS.ProcessEnv, maxBuffer: 32 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const lines = stderr.trimEnd().split('\n');
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, lastLine: lines[lines.length - 1] });
        },
      );
    });
  }

  /** Any other `weft` command, spawned the same way. */
  function weft(args: string[]): Promise<Run> {
    return new Promise((resolve) => {
      execFile(process.execPath, [BIN, ...args], { cwd: REPO, env: { ...process.env, ...env }, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
        const lines = stderr.trimEnd().split('\n');
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, lastLine: lines[lines.length - 1] });
      });
    });
  }

  beforeAll(async () => {
    project = mkdtempSync(path.join(tmpdir(), 'weft-dryrun-'));
    writeProbeProject(project);
    stack = await startWeftStack({
      luma: { seed: 5, eventCount: EVENTS, maxPageSize: PAGE },
      graph: { seed: 17, drives: [{ fileCount: 40 }], defaultPageSize: 4, maxPageSize: 4 },
      integrationsDir: path.join(project, 'integrations'),
      temporalCallTimeoutMs: 10_000,
    });
    env = { WEFT_HOST: stack.apiUrl, WEFT_SECRET_KEY_DEV: stack.keys.dev, NO_COLOR: '1', CI: '1' };
    await createLumaIntegration(stack);
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'dr-user', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(created.status).toBe(201);
    await stack.waitForSync('dr-user', 'list-events');
    await createOneDriveIntegration(stack);
    expect((await connectOneDrive(stack, 'dr-drive')).status).toBe(201);
    const probe = await stack.api('POST', '/integrations', {
      body: { unique_key: 'probe', provider: 'dryrun-probe', provider_overrides: { base_url: stack.luma.url } },
    });
    expect(probe.status).toBe(201);
    const probeConn = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'probe', connection_id: 'dr-probe', credentials: { type: 'API_KEY', apiKey: API_KEY }, metadata: { real: 1 } },
    });
    expect(probeConn.status).toBe(201);
    await stack.waitForSync('dr-drive', 'user-files', { providerConfigKey: 'one-drive' });
  });
  afterAll(async () => {
    await stack?.shutdown();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  test('a sync dry run: every page through the proxy (request log), the records as JSON, nothing written', async () => {
    const edited = stack.luma.editEvents(3);
    const before = await readAllRecords(stack, 'dr-user', 'CalendarEvent');
    const statusBefore = await stack.api('GET', '/sync/status?provider_config_key=luma&syncs=list-events&connection_id=dr-user');
    stack.luma.resetStats();

    const run = await dryrun(['list-events', 'dr-user', '--json']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({
      function: 'list-events',
      kind: 'sync',
      connection_id: 'dr-user',
      requests: Math.ceil(EVENTS / PAGE),
      trackDeletes: ['CalendarEvent'],
    });
    expect(out.batchSave.CalendarEvent.map((r: any) => r.id)).toEqual(stack.luma.eventIds());
    // The edited events as the provider has them now, which the database does not have.
    for (const id of edited) {
      const shown = out.batchSave.CalendarEvent.find((r: any) => r.id === id);
      expect(shown.name).toBe(stack.luma.getEvent(id)!.event.name);
      expect(before.find((r) => r.id === id).name).not.toBe(shown.name);
    }
    // The key reached the provider only through Weft (the CLI never had it), on every page.
    const calls = stack.luma.requestLog().filter((e: any) => e.path === '/public/v1/calendar/list-events');
    expect(calls).toHaveLength(Math.ceil(EVENTS / PAGE));
    const logs = await waitForLogs(stack, 'operation=proxy&connection_id=dr-user', Math.ceil(EVENTS / PAGE));
    expect(logs.filter((l: any) => l.url.includes('/public/v1/calendar/list-events'))).toHaveLength(Math.ceil(EVENTS / PAGE));

    // Nothing written: the records and the sync's state are what they were.
    expect(await readAllRecords(stack, 'dr-user', 'CalendarEvent')).toEqual(before);
    expect((await stack.api('GET', '/sync/status?provider_config_key=luma&syncs=list-events&connection_id=dr-user')).body).toEqual(statusBefore.body);
    expect(run.stdout + run.stderr).not.toContain(API_KEY);
    expect(run.stdout + run.stderr).not.toContain(stack.keys.dev);
  });

  test('the readable output: progress lines (no terminal), then a table per model', async () => {
    const run = await dryrun(['list-events', 'dr-user']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`page 1: ${PAGE} item(s) from /public/v1/calendar/list-events`);
    expect(run.stderr).toContain(`done: ${Math.ceil(EVENTS / PAGE)} request(s), ${Math.ceil(EVENTS / PAGE)} page(s), CalendarEvent ${EVENTS}`);
    expect(run.stdout).toContain(`CalendarEvent: ${EVENTS} record(s) to save`);
    expect(run.stdout).toMatch(/│ id\s+│ name/);
    expect(run.stdout).toContain(stack.luma.eventIds()[0]);
    expect(run.stdout).toContain(`… and ${EVENTS - 20} more (--json shows every record)`);
  });

  test('an action with --input @file and --save: the provider is called, the output printed and saved, the records cache untouched', async () => {
    const inputFile = path.join(project, 'event.json');
    writeFileSync(inputFile, JSON.stringify({ name: 'Dry-run launch', start_at: '2031-05-01T10:00:00Z', timezone: 'Europe/Berlin' }));
    const countBefore = (await readAllRecords(stack, 'dr-user', 'CalendarEvent')).length;
    const run = await dryrun(['create-event', 'dr-user', '--input', `@${inputFile}`, '--save', '--json', '--project', project]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    // --save: the action's input and output, and one file per distinct provider request.
    const root = path.join(project, 'tests', 'mocks', 'luma', 'mocks', 'create-event');
    expect(JSON.parse(readFileSync(path.join(root, 'input.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(inputFile, 'utf8')));
    expect(JSON.parse(readFileSync(path.join(root, 'output.json'), 'utf8'))).toEqual(out.output);
    expect(
      readdirSync(path.join(root, 'mocks'))
        .map((f) => f.replace(/[0-9a-f]{12}\.json$/, '<hash>'))
        .sort(),
    ).toEqual(['GET-public-v1-event-get-<hash>', 'POST-public-v1-event-create-<hash>']);
    expect(out.output).toMatchObject({ name: 'Dry-run launch', start_at: '2031-05-01T10:00:00.000Z' });
    expect(stack.luma.getEvent(out.output.id)?.event.name).toBe('Dry-run launch');
    // The action's batchSave went to the dry run's memory, not to GET /records.
    expect(out.batchSave.CalendarEvent.map((r: any) => r.id)).toEqual([out.output.id]);
    expect(await readAllRecords(stack, 'dr-user', 'CalendarEvent')).toHaveLength(countBefore);
  });

  test('--validate on an action: invalid input halts before any call with invalid_action_input', async () => {
    stack.luma.resetStats();
    const run = await dryrun(['create-event', 'dr-user', '--input', '{"name":"x","start_at":"soon","timezone":"Europe/Berlin"}', '--validate']);
    expect(run.code).toBe(1);
    const failure = JSON.parse(run.stderr.slice(run.stderr.indexOf('{')));
    expect(failure).toEqual({
      error: 'invalid_action_input',
      detail: { model: 'create-event input', validation: [{ path: 'start_at', message: 'Invalid ISO datetime', code: 'invalid_format' }] },
    });
    expect(stack.luma.requestLog()).toHaveLength(0);
  });

  test('link pagination (absolute next links) through the proxy, and a --metadata stub instead of the real metadata', async () => {
    const drive = stack.graph.drives()[0].id as string;
    const items = stack.graph.items(drive) as any[];
    const folder = items.find((i) => i.folder && !i.root && i.folder.childCount > 4);
    const under = (id: string): string[] => items.filter((i) => i.parentReference?.id === id).flatMap((i) => [i.id, ...(i.folder ? under(i.id) : [])]);
    const metadata = JSON.stringify({ pickedFiles: [{ driveId: drive, fileIds: [folder.id] }] });

    const run = await dryrun(['user-files/selected', 'dr-drive', '--metadata', metadata, '--json', '--validate']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.batchSave.SelectedFile.map((r: any) => r.id).sort()).toEqual([folder.id, ...under(folder.id)].sort());
    expect(out.requests).toBeGreaterThan(2);
    // Without the stub the connection's own metadata (no picks) is what the sync sees.
    const real = await dryrun(['user-files/selected', 'dr-drive', '--json']);
    expect(real.code).toBe(0);
    expect(JSON.parse(real.stdout).batchSave).toEqual({});
    expect(run.stdout).not.toContain('sandbox-graph-token');
  });

  test("an upload above 320 KiB: the upload session's pre-authenticated URL goes through the proxy without the credentials, every fragment logged", async () => {
    const drive = stack.graph.drives()[0].id as string;
    const bytes = Buffer.alloc(400_000, 7);
    const inputFile = path.join(project, 'upload.json');
    writeFileSync(inputFile, JSON.stringify({ driveId: drive, fileName: 'dry-run-large.bin', content: bytes.toString('base64'), conflictBehavior: 'replace' }));
    const run = await dryrun(['upload-file', 'dr-drive', '--input', `@${inputFile}`, '--json', '--validate']);
    expect({ code: run.code, stderr: run.code ? run.stderr : '' }).toEqual({ code: 0, stderr: '' });
    const out = JSON.parse(run.stdout);
    expect(out.output).toMatchObject({ name: 'dry-run-large.bin', size: bytes.length });
    expect(out.requests).toBe(3); // createUploadSession, then two fragments (320 KiB, the rest)
    expect(stack.graph.items(drive).find((i) => i.id === out.output.id)).toMatchObject({ name: 'dry-run-large.bin', size: bytes.length });
    // The simulator refuses an upload URL sent an Authorization header: both fragments got none.
    const fragments = (await waitForLogs(stack, 'operation=proxy&connection_id=dr-drive&limit=1000', 3)).filter((l: any) => l.url.includes('/_upload/'));
    expect(fragments.map((l: any) => [l.method, l.status]).sort()).toEqual([
      ['PUT', 201],
      ['PUT', 202],
    ]);
  });

  test('a project of its own: --lastSyncDate, --variant and --metadata reach ctx; metadata and checkpoint writes stay in memory', async () => {
    const run = await dryrun(
      ['probe', 'dr-probe', '--project', project, '--lastSyncDate', '2024-05-01', '--variant', 'eu', '--metadata', '{"stub":true}', '--json'],
      {},
    );
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.batchSave.Probe).toEqual([
      { id: 'probe', lastSyncDate: '2024-05-01T00:00:00.000Z', variant: 'eu', metadata: { stub: true }, events: EVENTS + 1 },
    ]);
    expect(out.metadata).toEqual({ stub: true, probed: true });
    expect(out.checkpoint).toEqual({ events: EVENTS + 1 });
    expect(run.stderr).toContain(`log: probe counted events {"events":${EVENTS + 1}}`);
    const conn = await stack.api('GET', '/connections/dr-probe?provider_config_key=probe');
    expect(conn.body.metadata).toEqual({ real: 1 });
    expect(await readAllRecords(stack, 'dr-probe', 'Probe', {}, 'probe')).toEqual([]);
  });

  test('--save writes the mock files after a validated run: every page recorded, no secret in any file', async () => {
    const dir = path.join(project, 'saved');
    mkdirSync(dir);
    const run = await dryrun(['list-events', 'dr-user', '--save', '--project', dir]);
    expect(run.code).toBe(0);
    const root = path.join(dir, 'tests', 'mocks', 'luma', 'mocks');
    const files = filesUnder(root);
    expect(files).toEqual(expect.arrayContaining(['list-events/CalendarEvent/batchSave.json', 'weft/getConnection.json', 'weft/getMetadata.json']));
    const pages = files.filter((f) => /^list-events\/mocks\/GET-public-v1-calendar-list-events-[0-9a-f]{12}\.json$/.test(f));
    expect(pages).toHaveLength(Math.ceil(stack.luma.eventIds().length / PAGE));
    const saved = JSON.parse(readFileSync(path.join(root, 'list-events/CalendarEvent/batchSave.json'), 'utf8'));
    expect(saved.map((r: any) => r.id)).toEqual(stack.luma.eventIds());
    expect(run.lastLine).toBe(`saved ${files.length} mock file(s) under ${path.relative(REPO, path.join(dir, 'tests', 'mocks'))}`);
    for (const file of files) {
      const text = readFileSync(path.join(root, file), 'utf8');
      expect({ file, key: text.includes(API_KEY), secretKey: text.includes(stack.keys.dev) }).toEqual({ file, key: false, secretKey: false });
    }
  });

  test("the loop closes through the simulator: a recorded sync's generated test passes, and fails naming the field once the provider changes it", async () => {
    // An author's project (weft init), list-events recorded through the running Weft, its test generated.
    const dir = path.join(project, 'loop');
    expect((await weft(['init', dir])).code).toBe(0);
    expect((await dryrun(['list-events', 'dr-user', '--integration-id', 'luma', '--save', '--project', dir])).code).toBe(0);
    const generated = await weft(['generate:tests', '--project', dir, '--integration', 'luma', '--function', 'list-events']);
    expect(generated.stdout).toMatch(/^written .*tests\/integrations\/luma\/list-events\.test\.ts$/m);
    const passing = await weft(['test', '--project', dir, '--', 'tests/integrations/luma']);
    expect({ code: passing.code, summary: passing.stderr.match(/Tests: .*/)?.[0] }).toEqual({ code: 0, summary: 'Tests:       1 passed, 1 total' });

    // The provider changes one field of one event; only its answers are recorded again (into
    // another folder, copied over the first one's mocks/), the committed expectations stay.
    const saved = path.join(dir, 'tests', 'mocks', 'luma', 'mocks', 'list-events');
    const expectations = readFileSync(path.join(saved, 'CalendarEvent', 'batchSave.json'), 'utf8');
    const id = stack.luma.eventIds()[7];
    const timezone = stack.luma.getEvent(id)!.event.timezone;
    stack.luma.corruptEvent(id, { timezone: 'Pacific/Chatham' });
    try {
      const again = path.join(project, 'loop-again');
      mkdirSync(again);
      expect((await dryrun(['list-events', 'dr-user', '--integration-id', 'luma', '--save', '--project', again])).code).toBe(0);
      const answers = path.join(again, 'tests', 'mocks', 'luma', 'mocks', 'list-events', 'mocks');
      // The same requests (same identities, same files); one answer differs.
      expect(readdirSync(answers).sort()).toEqual(readdirSync(path.join(saved, 'mocks')).sort());
      rmSync(path.join(saved, 'mocks'), { recursive: true });
      cpSync(answers, path.join(saved, 'mocks'), { recursive: true });
    } finally {
      stack.luma.corruptEvent(id, { timezone });
    }
    expect(readFileSync(path.join(saved, 'CalendarEvent', 'batchSave.json'), 'utf8')).toBe(expectations);

    const failing = await weft(['test', '--project', dir, '--', 'tests/integrations/luma']);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(/FAIL .*tests\/integrations\/luma\/list-events\.test\.ts/);
    // Jest's diff names the field: the recorded value expected, the provider's new one received.
    expect(failing.stderr).toMatch(new RegExp(`-\\s+"timezone": "${timezone}",\\n\\s*\\+\\s+"timezone": "Pacific/Chatham",`));
    expect(failing.stderr).toMatch(/Tests: +1 failed, 1 total/);
  });

  test('in a terminal: a missing argument is asked for, progress is a spinner', async () => {
    // `script` gives the command a pseudo-terminal, as a person's shell would.
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, CI: undefined, TERM: 'xterm' };
    delete childEnv.CI;
    // A pseudo-terminal starts 0 columns wide; a person's is not (the command falls back to plain lines at 0).
    const command = `stty cols 120 rows 40; ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} dryrun list-events --integration-id luma`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: REPO, env: childEnv });
    let screen = '';
    let answered = false;
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString();
      if (!answered && screen.includes('connection-id:')) {
        answered = true;
        child.stdin.write('dr-user\r');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const text = stripVTControlCharacters(screen);
    expect({ code, answered }).toEqual({ code: 0, answered: true });
    expect(text).toContain('✔ connection-id: dr-user');
    expect(text).toMatch(/✔ \d+ request\(s\), \d+ page\(s\), CalendarEvent \d+/);
    expect(text).toContain('record(s) to save');
    expect(text).not.toContain('page 1:');
  });

  test('every mistake gets its own one-line message and exit code 1, never a stack trace', async () => {
    const closed = await closedPort();
    const cases: Array<[string[], Record<string, string | undefined>, string | RegExp]> = [
      [['no-such-sync', 'dr-user'], {}, /^weft dryrun: Unknown function "no-such-sync"; known: one-drive: user-files, .*; luma: list-events, create-event\.$/],
      [['list-events', 'nobody'], {}, 'weft dryrun: Unknown connection "nobody" in dev: no integration has a connection of that id.'],
      [['create-event', 'dr-user', '--input', '{"name":'], {}, /^weft dryrun: --input is not valid JSON: .+\.$/],
      [['list-events', 'dr-user', '--metadata', '{bad'], {}, /^weft dryrun: --metadata is not valid JSON: .+\.$/],
      [
        ['list-events', 'dr-user'],
        { WEFT_HOST: `http://127.0.0.1:${closed}` },
        `weft dryrun: Weft is not reachable at http://127.0.0.1:${closed} (ECONNREFUSED): start it (npm start) or set WEFT_HOST to its address.`,
      ],
      [
        ['list-events', 'dr-user'],
        { WEFT_SECRET_KEY_DEV: 'weft_sk_dev_not-a-real-key-at-all' },
        `weft dryrun: Weft refused the secret key in WEFT_SECRET_KEY_DEV (401 unauthorized): it is not a key of ${stack.apiUrl}.`,
      ],
      [['list-events', 'dr-user', '-e', 'prod'], {}, /^weft dryrun: WEFT_SECRET_KEY_PROD is not set/],
      [['list-events'], {}, 'weft dryrun: Missing <connection-id>: give it on the command line (it is asked for only in a terminal).'],
      [
        ['list-drives', 'dr-user'],
        {},
        /^weft dryrun: "list-drives" is not a function of luma \(connection "dr-user" of luma\); its functions: list-events, create-event\.$/,
      ],
    ];
    const runs = await Promise.all(cases.map(([args, extra]) => dryrun(args, extra)));
    runs.forEach((run, i) => {
      const expected = cases[i][2];
      expect({ args: cases[i][0], code: run.code }).toEqual({ args: cases[i][0], code: 1 });
      if (typeof expected === 'string') expect(run.lastLine).toBe(expected);
      else expect(run.lastLine).toMatch(expected);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stdout).toBe('');
    });
  });

  test('a connection id in several integrations needs --integration-id; the provider refusing a call is one line', async () => {
    await createLumaIntegration(stack, { unique_key: 'luma-2' });
    const second = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma-2', connection_id: 'dr-user', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(second.status).toBe(201);
    const ambiguous = await dryrun(['list-events', 'dr-user']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.lastLine).toBe('weft dryrun: Connection "dr-user" exists in several integrations (luma, luma-2): pick one with --integration-id.');

    stack.luma.failNext(1, 403);
    const refused = await dryrun(['list-events', 'dr-user', '--integration-id', 'luma']);
    expect(refused.code).toBe(1);
    expect(refused.lastLine).toMatch(/^weft dryrun: the provider answered HTTP 403: GET \/public\/v1\/calendar\/list-events failed with HTTP 403 \(.+\)$/);
  });

  test('invalid records: one line each pointing to --validate; with --validate the validation failure record halts the run', async () => {
    const [bad] = stack.luma.eventIds().slice(60, 61);
    // Its name carries the connection's API key, which must not be printed back.
    stack.luma.corruptEvent(bad, { start_at: 'next tuesday', url: 'not a url', name: `Leaked ${API_KEY}` });

    const lenient = await dryrun(['list-events', 'dr-user', '--integration-id', 'luma', '--json']);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toContain(`invalid: CalendarEvent record ${bad} does not match its schema; run with --validate to see why`);
    expect(lenient.stderr.match(/^invalid: /gm)).toHaveLength(1);
    expect(JSON.parse(lenient.stdout).batchSave.CalendarEvent).toHaveLength(stack.luma.eventIds().length);

    const strict = await dryrun(['list-events', 'dr-user', '--integration-id', 'luma', '--validate']);
    expect(strict.code).toBe(1);
    const failure = JSON.parse(strict.stderr.slice(strict.stderr.indexOf('{')));
    expect(failure).toEqual({
      error: 'invalid_sync_record',
      detail: {
        model: 'CalendarEvent',
        validation: [
          { path: 'start_at', message: 'Invalid ISO datetime', code: 'invalid_format' },
          { path: 'url', message: 'Invalid URL', code: 'invalid_format' },
        ],
      },
      record: expect.objectContaining({ id: bad, start_at: 'next tuesday', url: 'not a url', name: 'Leaked REDACTED' }),
    });
    expect(strict.stdout).toBe('');
    expect(lenient.stdout + lenient.stderr + strict.stderr).not.toContain(API_KEY);

    // --save validates too, and writes nothing when validation fails.
    const dir = path.join(project, 'not-saved');
    mkdirSync(dir);
    const save = await dryrun(['list-events', 'dr-user', '--integration-id', 'luma', '--save', '--project', dir]);
    expect(save.code).toBe(1);
    expect(save.stderr).toContain('"error": "invalid_sync_record"');
    expect(existsSync(path.join(dir, 'tests'))).toBe(false);
  });

  test('a reader that closes the pipe early (`| head`, a jq that exited) ends the run quietly: no EPIPE stack trace', async () => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    const child = spawn(process.execPath, [BIN, 'dryrun', 'list-events', 'dr-user', '--json'], { cwd: REPO, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    // Closed before the result is written: the write meets a pipe with no reader.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
    // The same run's own outcome, as with a reader that reads it all (the data left by the tests before may make it 1).
    expect(code).toBe((await dryrun(['list-events', 'dr-user', '--json'])).code);
  });
});

function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
