import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readAllRecords, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitFor } from '../support/wait';

const REPO = resolve(__dirname, '../..');
const EVENTS = 30;

/** An integration of the author's (outside Weft) whose records carry a label from a file of its own. */
function writeIntegration(dir: string): void {
  mkdirSync(join(dir, 'labelled'), { recursive: true });
  writeFileSync(
    join(dir, 'labelled', 'index.ts'),
    `import { defineIntegration, defineSync, z } from 'weft/integration';
import { LABEL } from './label';

const Labelled = z.object({ id: z.string(), label: z.string() });
const items = defineSync({
  kind: 'sync', name: 'items', description: 'Events, labelled.', endpoint: { method: 'GET', path: '/labelled/items' },
  models: { Labelled }, syncType: 'full', frequency: 'every 1h', autoStart: false,
  async exec(ctx) {
    for await (const page of ctx.paginate<{ api_id: string }>({ endpoint: '/public/v1/calendar/list-events' })) {
      await ctx.batchSave(page.map((e) => ({ id: e.api_id, label: LABEL })), 'Labelled');
    }
  },
});
export default defineIntegration({
  provider: {
    name: 'labelled', displayName: 'Labelled', authMode: 'API_KEY', baseUrl: 'https://public-api.luma.com', apiKey: { header: 'x-luma-api-key' },
    pagination: { type: 'cursor', cursorPathInResponse: 'next_cursor', cursorNameInRequest: 'pagination_cursor', hasMorePathInResponse: 'has_more', responsePath: 'entries' },
  },
  syncs: [items],
  actions: [],
});
`,
  );
  writeLabel(dir, 'first');
}

function writeLabel(dir: string, label: string): void {
  writeFileSync(join(dir, 'labelled', 'label.ts'), `export const LABEL = '${label}';\n`);
}

/**
 * `weft dev --workers-only` against a running Weft: the worker it runs loads the project's
 * integrations; a change to a file there restarts it, and the next sync runs the changed code.
 */
describe('weft dev: a change in the project restarts the worker with the new code', () => {
  let project: string;
  let stack: WeftStack;
  let dev: ChildProcess;
  let output = '';

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), 'weft-dev-'));
    writeIntegration(join(project, 'integrations'));
    stack = await startWeftStack({ integrationsDir: join(project, 'integrations'), worker: false, luma: { eventCount: EVENTS } });
    dev = spawn(process.execPath, [join(REPO, 'cli', 'bin.js'), 'dev', '--project', project, '--workers-only'], {
      env: { ...process.env, ...stack.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    dev.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    dev.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  });
  afterAll(async () => {
    if (dev.exitCode === null) {
      dev.kill('SIGTERM');
      await once(dev, 'exit');
    }
    await stack?.shutdown();
    rmSync(project, { recursive: true, force: true });
  });

  const workersRunning = () => output.split('weft worker running').length - 1;
  const labels = async () => new Set((await readAllRecords(stack, 'u1', 'Labelled', {}, 'labelled')).map((r) => r.label));

  test('sync, change a file, sync again: the new worker ran the new code; stopping dev stops its worker', async () => {
    await waitFor(async () => workersRunning() === 1, 30_000, `the first worker (output so far:\n${output})`);
    expect(
      (await stack.api('POST', '/integrations', { body: { unique_key: 'labelled', provider: 'labelled', provider_overrides: { base_url: stack.luma.url } } }))
        .status,
    ).toBe(201);
    const connected = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'labelled', connection_id: 'u1', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(connected.status).toBe(201);
    const first = await runSync(stack, 'labelled', 'u1', 'items');
    expect(first.result.Labelled).toEqual({ added: EVENTS, updated: 0, deleted: 0 });
    expect(await labels()).toEqual(new Set(['first']));

    writeLabel(join(project, 'integrations'), 'second');
    await waitFor(async () => workersRunning() === 2, 30_000, `the restarted worker (output so far:\n${output})`);
    expect(output).toMatch(/changed: labelled[\\/]label\.ts: restarting weft worker/);

    const second = await runSync(stack, 'labelled', 'u1', 'items');
    expect(second.result.Labelled).toEqual({ added: 0, updated: EVENTS, deleted: 0 });
    expect(await labels()).toEqual(new Set(['second']));

    const pids = [...output.matchAll(/weft worker started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
    expect(pids).toHaveLength(2);
    dev.kill('SIGTERM');
    expect(await once(dev, 'exit')).toEqual([0, null]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });
});
