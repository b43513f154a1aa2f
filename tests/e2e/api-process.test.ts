import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { sealV1 } from '../auth/legacy-seal';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { logLine, spawnWeft, type WeftProcess } from '../support/worker-process';
import { waitFor } from '../support/wait';

const EVENTS = 40;

/** Configuration without the servers: what an operator gets who forgot them. */
function envWithoutServers(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['TEMPORAL_ADDRESS', 'MONGODB_URI', 'WEFT_ENCRYPTION_KEY']) delete env[name];
  return env;
}

describe('weft api: the API as a process of its own', () => {
  let stack: WeftStack;
  const processes: WeftProcess[] = [];

  beforeAll(async () => {
    // No in-process worker: the sync below can only run in the `weft worker` process.
    stack = await startWeftStack({ worker: false, luma: { seed: 5, eventCount: EVENTS } });
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await stack?.shutdown();
  });

  test('serves the API on its own, re-seals stored secrets at start, and with `weft worker` runs a sync; SIGTERM stops it cleanly', async () => {
    // A value an older Weft stored (v1): every long-running process moves it to the current format at start.
    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'older', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
    });
    expect(created.response.status).toBe(201);
    const connections = stack.core.stores.db.collection<{ _id: string; connection_id: string; credentials_encrypted: string }>('connections');
    await connections.updateOne(
      { connection_id: 'older' },
      { $set: { credentials_encrypted: sealV1(stack.env.WEFT_ENCRYPTION_KEY, { type: 'API_KEY', apiKey: 'from-an-older-weft' }) } },
    );
    expect((await connections.findOne({ connection_id: 'older' }))!.credentials_encrypted).not.toMatch(/^v3\./);

    const api = spawnWeft('api', { ...process.env, ...stack.env, PORT: '0' });
    processes.push(api);
    const url = String((await logLine(api, 'weft api listening')).url);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    // Listening means ready: the process reached MongoDB and Temporal before it opened its port.
    const ready = await fetch(`${url}/ready`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 200, body: { status: 'ok', database: 'ok', orchestrator: 'ok' } });
    await waitFor(
      async () => /^v3\./.test((await connections.findOne({ connection_id: 'older' }))!.credentials_encrypted),
      20_000,
      'the API process to re-seal the v1 value',
    );

    const worker = spawnWeft('worker', { ...process.env, ...stack.env });
    processes.push(worker);
    await logLine(worker, 'weft worker running');

    // Through the standalone API only: connect (which starts the sync), then read what the standalone worker saved.
    const auth = { authorization: `Bearer ${stack.keys.dev}`, 'content-type': 'application/json' };
    const connect = await fetch(`${url}/connections`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ provider_config_key: 'luma', connection_id: 'standalone-user', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } }),
    });
    expect(connect.status).toBe(201);
    await stack.waitForSync('standalone-user', 'list-events');
    const records = await fetch(`${url}/records?model=CalendarEvent&limit=1000`, {
      headers: { ...auth, 'connection-id': 'standalone-user', 'provider-config-key': 'luma' },
    });
    expect(records.status).toBe(200);
    const ids = ((await records.json()) as { records: Array<{ id: string }> }).records.map((r) => r.id);
    expect(ids.sort()).toEqual(stack.luma.eventIds().sort());

    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  test('weft api on a port already in use stops with api_port_busy', async () => {
    const p = spawnWeft('api', { ...process.env, ...stack.env, PORT: new URL(stack.apiUrl).port });
    processes.push(p);
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain(`Port ${new URL(stack.apiUrl).port} on 127.0.0.1, needed for the API, is already in use`);
    expect(p.output()).toContain('(api_port_busy)');
  });

  test.each([
    ['api', 'api_not_configured'],
    ['worker', 'worker_not_configured'],
  ])('weft %s without TEMPORAL_ADDRESS, MONGODB_URI and WEFT_ENCRYPTION_KEY stops at once with %s', async (command, code) => {
    const p = spawnWeft(command, envWithoutServers());
    processes.push(p);
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain(`(${code})`);
    expect(p.output()).toContain('missing: TEMPORAL_ADDRESS, MONGODB_URI, WEFT_ENCRYPTION_KEY');
    // An operator's mistake, not a crash: the message alone, no stack trace.
    expect(p.output()).not.toMatch(/\n\s+at /);
  });
});
