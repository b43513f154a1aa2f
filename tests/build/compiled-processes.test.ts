import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { attr, isUnder, startOtlpReceiver, type OtlpReceiver } from '../e2e/telemetry-receiver';

const REPO = path.resolve(__dirname, '../..');
const EVENTS = 120;

interface CompiledProcess {
  child: ChildProcess;
  /** The line that said it was ready. */
  readyLine: string;
  /** Everything it printed so far. */
  output(): string;
}

/** `node <build>/cli/weft.js <command>`: plain node, no tsx, no TypeScript anywhere in the process. */
function spawnCompiled(buildDir: string, command: string, env: Record<string, string>, ready: string): Promise<CompiledProcess> {
  const child = spawn(process.execPath, [path.join(buildDir, 'cli', 'weft.js'), command], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const readyLine = output.split('\n').find((line) => line.includes(ready));
      if (readyLine) resolve({ child, readyLine, output: () => output });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`weft ${command} exited early (${code}):\n${output}`)));
  });
}

describe('the production build', () => {
  // Inside the repository (gitignored .weft/), so the compiled code finds node_modules.
  const buildDir = path.join(REPO, '.weft', `test-build-${randomBytes(4).toString('hex')}`);
  let stack: WeftStack;
  let receiver: OtlpReceiver;
  let apiUrl: string;
  let firstWorker: CompiledProcess;
  const children: ChildProcess[] = [];
  // An integration author's project, outside the repository (`weft init`), for the last tests.
  const authorDir = mkdtempSync(path.join(tmpdir(), 'weft-author-'));

  beforeAll(async () => {
    const build = spawnSync('npm', ['run', '--silent', 'build', '--', '--out-dir', path.relative(REPO, buildDir)], { cwd: REPO, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`npm run build failed (${build.status}):\n${build.stdout}\n${build.stderr}`);
    // No in-process worker: the sync must run in the compiled worker.
    stack = await startWeftStack({ worker: false, luma: { seed: 5, eventCount: EVENTS, maxPageSize: 50 } });
    await createLumaIntegration(stack);
    receiver = await startOtlpReceiver();
    // tsc and two workflow bundles: about a minute on a loaded 2-core machine.
  }, 360_000);
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await stack?.shutdown();
    await receiver?.close();
    rmSync(buildDir, { recursive: true, force: true });
    rmSync(authorDir, { recursive: true, force: true });
  });

  test('compiles to JavaScript with a prebuilt workflow bundle and the files the code reads beside itself', () => {
    for (const file of [
      'cli/weft.js',
      'app/worker/main.js',
      'app/worker/main.js.map',
      'workflow-bundle.js',
      'workflow-bundle-otel.js',
      'scripts/infra/supervisor.js',
      'scripts/infra/ferretdb-patches/types_weft_id_range.go',
    ]) {
      expect(existsSync(path.join(buildDir, file))).toBe(true);
    }
    expect(existsSync(path.join(buildDir, 'tests'))).toBe(false);
    expect(existsSync(path.join(buildDir, 'bench'))).toBe(false);
    const bundle = readFileSync(path.join(buildDir, 'workflow-bundle.js'), 'utf8');
    const traced = readFileSync(path.join(buildDir, 'workflow-bundle-otel.js'), 'utf8');
    // One character above U+00FF and V8 holds the whole bundle as a two-byte string, in every isolate.
    for (const code of [bundle, traced]) expect(code).not.toMatch(/[\u0100-\uffff]/);
    // The OpenTelemetry workflow interceptors (workflow spans from a compiled worker with traces on) only in the -otel one.
    const interceptors = '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors';
    expect(traced).toContain(interceptors);
    expect(bundle).not.toContain(interceptors);
  });

  test('a compiled `weft api` and `weft worker` run a sync end to end, the worker on the prebuilt bundle', async () => {
    // Without WEFT_WORKFLOW_BUNDLE: the compiled worker must find the bundle built with it on its own.
    const { WEFT_WORKFLOW_BUNDLE: _unused, ...stackEnv } = stack.env;
    const { NODE_OPTIONS: _none, ...parentEnv } = process.env as Record<string, string>;
    const env = { ...parentEnv, ...stackEnv, PORT: '0', WEFT_API_HOST: '127.0.0.1' };

    const worker = await spawnCompiled(buildDir, 'worker', env, 'weft worker running');
    firstWorker = worker;
    children.push(worker.child);
    const api = await spawnCompiled(buildDir, 'api', env, 'weft api listening');
    children.push(api.child);
    apiUrl = JSON.parse(api.readyLine).url as string;
    const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${apiUrl}${route}`, {
        method,
        headers: { authorization: `Bearer ${stack.keys.dev}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    const created = await call('POST', '/connections', {
      provider_config_key: 'luma',
      connection_id: 'compiled-user',
      credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' },
    });
    expect(created.status).toBe(201);
    const summary: any = await stack.waitForSync('compiled-user', 'list-events');
    expect(summary.result.CalendarEvent).toEqual({ added: EVENTS, updated: 0, deleted: 0 });

    const records = await call('GET', '/records?model=CalendarEvent&limit=1000', undefined, {
      'connection-id': 'compiled-user',
      'provider-config-key': 'luma',
    });
    expect(records.status).toBe(200);
    expect(records.body.records.map((r: { id: string }) => r.id).sort()).toEqual(stack.luma.eventIds().sort());

    // Temporal's bundler logs this at info whenever a worker bundles workflows/ itself (webpack at start).
    expect(worker.output()).not.toContain('Workflow bundle created');
    // Traces off: the plain bundle, no workflow span anywhere (no error per call about their sink).
    expect(worker.output()).not.toContain('unregistered external sink');
  });

  test('a compiled worker with OTEL_* exports workflow spans from the prebuilt -otel bundle, parents of its activity spans', async () => {
    // This worker alone runs the next sync.
    firstWorker.child.kill('SIGTERM');
    await new Promise((resolve) => (firstWorker.child.exitCode === null ? firstWorker.child.once('exit', resolve) : resolve(null)));
    const { WEFT_WORKFLOW_BUNDLE: _unused, ...stackEnv } = stack.env;
    const { NODE_OPTIONS: _none, ...parentEnv } = process.env as Record<string, string>;
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_METRICS_EXPORTER: 'none' };
    const worker = await spawnCompiled(buildDir, 'worker', { ...parentEnv, ...stackEnv, ...otel }, 'weft worker running');
    children.push(worker.child);
    const exited = new Promise((resolve) => worker.child.once('exit', resolve));

    const trigger = await fetch(`${apiUrl}/sync/trigger`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider_config_key: 'luma', connection_id: 'compiled-user', syncs: ['list-events'] }),
    });
    expect(trigger.status).toBe(200);
    await stack.waitForSync('compiled-user', 'list-events');
    worker.child.kill('SIGTERM'); // a clean stop flushes the spans
    await exited;

    const { spans } = receiver;
    const workflow = spans.find((s) => s.service === 'weft-worker' && s.name === 'RunWorkflow:syncRun');
    expect(workflow).toBeDefined();
    const activities = spans.filter((s) => s.name.startsWith('RunActivity:') && s.traceId === workflow!.traceId);
    expect(activities.map((s) => s.name)).toEqual(expect.arrayContaining(['RunActivity:performSyncRun']));
    for (const a of activities) expect(isUnder(spans, a, workflow!)).toBe(true);
    // Its provider calls are in the same trace.
    expect(spans.filter((s) => s.traceId === workflow!.traceId && attr(s, 'weft.provider') === 'luma').length).toBeGreaterThan(0);
  });

  test("a compiled `weft worker` and `weft api` load an author's TypeScript integrations folder (weft init), sync and act through it", async () => {
    // The compiled CLI scaffolds the project: TypeScript sources importing weft/integration, no index.js.
    const project = path.join(authorDir, 'project');
    const init = spawnSync(process.execPath, [path.join(buildDir, 'cli', 'weft.js'), 'init', project], { cwd: authorDir, encoding: 'utf8' });
    expect(init.status).toBe(0);
    const integrationsDir = path.join(project, 'integrations');
    expect(existsSync(path.join(integrationsDir, 'example-calendar', 'index.ts'))).toBe(true);
    expect(existsSync(path.join(integrationsDir, 'example-calendar', 'index.js'))).toBe(false);

    const { WEFT_WORKFLOW_BUNDLE: _unused, ...stackEnv } = stack.env;
    const { NODE_OPTIONS: _none, ...parentEnv } = process.env as Record<string, string>;
    const env = { ...parentEnv, ...stackEnv, PORT: '0', WEFT_API_HOST: '127.0.0.1', WEFT_INTEGRATIONS_DIR: integrationsDir };
    // The earlier workers are stopped: this one alone runs the example's sync and action.
    const worker = await spawnCompiled(buildDir, 'worker', env, 'weft worker running');
    children.push(worker.child);
    const api = await spawnCompiled(buildDir, 'api', env, 'weft api listening');
    children.push(api.child);
    const url = JSON.parse(api.readyLine).url as string;
    const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${url}${route}`, {
        method,
        headers: { authorization: `Bearer ${stack.keys.dev}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    const integration = await call('POST', '/integrations', {
      unique_key: 'example-calendar',
      provider: 'example-calendar',
      provider_overrides: { base_url: stack.luma.url },
    });
    expect(integration.status).toBe(201);
    // The example's sync starts on its own at connection (autoStart), in the compiled worker.
    const connected = await call('POST', '/connections', {
      provider_config_key: 'example-calendar',
      connection_id: 'author-user',
      credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' },
    });
    expect(connected.status).toBe(201);
    const summary: any = await stack.waitForSync('author-user', 'events', { providerConfigKey: 'example-calendar' });
    expect(summary.result.Event).toEqual({ added: EVENTS, updated: 0, deleted: 0 });
    const owner = { 'connection-id': 'author-user', 'provider-config-key': 'example-calendar' };
    const records = await call('GET', '/records?model=Event&limit=1000', undefined, owner);
    expect(records.status).toBe(200);
    expect(records.body.records.map((r: { id: string }) => r.id).sort()).toEqual(stack.luma.eventIds().sort());
    // The records were checked against the author's zod model, from Weft's own zod (no second copy in the process).
    expect(Object.keys(records.body.records[0]).sort()).toEqual(['_weft_metadata', 'end_at', 'id', 'name', 'start_at', 'url']);

    // Its action, through the action worker of the same process, output checked by the author's schema.
    const action = await call('POST', '/action/trigger', { action_name: 'get-account', input: {} }, owner);
    expect(action.status).toBe(200);
    expect(action.body).toEqual({ id: expect.any(String), name: expect.anything(), email: expect.anything() });
    expect(worker.output()).not.toMatch(/"level":(50|60)/);
  });

  test("a compiled worker and API refuse an author's broken definition at start, naming the file and what is wrong", async () => {
    const broken = path.join(authorDir, 'broken');
    cpSync(path.join(authorDir, 'project', 'integrations'), broken, { recursive: true });
    const syncFile = path.join(broken, 'example-calendar', 'syncs', 'events.ts');
    // A typo the TypeScript compiler would catch, but the operator runs what is on disk.
    writeFileSync(syncFile, readFileSync(syncFile, 'utf8').replace('async exec(ctx) {', 'async run(ctx) {'));
    const { WEFT_WORKFLOW_BUNDLE: _unused, ...stackEnv } = stack.env;
    const { NODE_OPTIONS: _none, ...parentEnv } = process.env as Record<string, string>;
    const env = { ...parentEnv, ...stackEnv, PORT: '0', WEFT_API_HOST: '127.0.0.1', WEFT_INTEGRATIONS_DIR: broken };
    for (const command of ['worker', 'api']) {
      const started = spawnSync(process.execPath, [path.join(buildDir, 'cli', 'weft.js'), command], { cwd: REPO, env, encoding: 'utf8', timeout: 30_000 });
      expect(started.status).not.toBe(0);
      const output = started.stdout + started.stderr;
      expect(output).toContain(`${syncFile}: sync "events" has no exec function`);
      expect(output).toContain('integration_exec_missing');
    }
  });

  test("a folder its author compiled (index.js beside index.ts, the README's esbuild command) loads as that JavaScript", async () => {
    const compiled = path.join(authorDir, 'compiled');
    cpSync(path.join(authorDir, 'project', 'integrations'), compiled, { recursive: true });
    const esbuild = spawnSync(
      path.join(REPO, 'node_modules', '.bin', 'esbuild'),
      ['example-calendar/**/*.ts', '--outdir=.', '--outbase=.', '--format=cjs', '--platform=node', '--log-level=warning'],
      { cwd: compiled, encoding: 'utf8' },
    );
    expect(esbuild.status).toBe(0);
    expect(existsSync(path.join(compiled, 'example-calendar', 'index.js'))).toBe(true);
    // Broken TypeScript beside working JavaScript: the worker must run the JavaScript.
    const syncFile = path.join(compiled, 'example-calendar', 'syncs', 'events.ts');
    writeFileSync(syncFile, readFileSync(syncFile, 'utf8').replace('async exec(ctx) {', 'async run(ctx) {'));
    const { WEFT_WORKFLOW_BUNDLE: _unused, ...stackEnv } = stack.env;
    const { NODE_OPTIONS: _none, ...parentEnv } = process.env as Record<string, string>;
    const worker = await spawnCompiled(buildDir, 'worker', { ...parentEnv, ...stackEnv, WEFT_INTEGRATIONS_DIR: compiled }, 'weft worker running');
    children.push(worker.child);
    expect(worker.output()).not.toContain('integration_exec_missing');
    worker.child.kill('SIGTERM');
    await new Promise((resolve) => (worker.child.exitCode === null ? worker.child.once('exit', resolve) : resolve(null)));
  });
});
