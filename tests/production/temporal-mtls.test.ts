import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { resolveBinary } from '../../scripts/infra/binaries';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startTemporalServer, type TemporalServer } from '../../scripts/infra/temporal-server';
import { createTestPki, type TestPki } from '../support/test-pki';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { logLine, spawnWeft, type WeftProcess } from '../support/worker-process';

/**
 * Weft on a Temporal server that requires TLS with client certificates (the plain server of
 * scripts/infra/temporal-server.ts, not the dev server), configured only the way Temporal's own
 * CLI and SDKs are: the TEMPORAL_* variables, or a profile of a TOML file. `weft api` and
 * `weft worker` run as processes of their own and run a Luma sync end to end; a certificate the
 * server refuses stops them at start with temporal_unreachable instead of a hang.
 *
 * The in-process stack (on the run's dev server) only prepares the database: the environments
 * with their keys and the Luma integration. Everything after that goes through the processes.
 */
const EVENTS = 30;
const { binaries } = infraOptionsFromEnv();

describe('weft api and weft worker on a Temporal server with mTLS', () => {
  let dir: string;
  let pki: TestPki;
  let temporal: TemporalServer;
  let stack: WeftStack;
  const processes: WeftProcess[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-temporal-mtls-'));
    pki = await createTestPki(dir);
    const binary = await resolveBinary('temporal-server', { explicitPath: binaries['temporal-server'], cacheDir: binaries.cacheDir });
    [temporal, stack] = await Promise.all([
      startTemporalServer({
        binary,
        tls: { certPath: pki.server.certPath, keyPath: pki.server.keyPath, clientCaPaths: [pki.ca.certPath] },
        client: { certPath: pki.client.certPath, keyPath: pki.client.keyPath, serverCaPath: pki.ca.certPath },
      }),
      startWeftStack({ worker: false, luma: { seed: 23, eventCount: EVENTS } }),
    ]);
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await stack?.shutdown();
    await temporal?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * The stack's configuration (database, encryption key, task queues, workflow bundle, egress
   * to the simulator) without any Temporal setting of its own or of the developer's shell; the
   * given TEMPORAL_* variables are then the only way to Temporal.
   */
  function processEnv(temporalEnv: Record<string, string>): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries({ ...process.env, ...stack.env })) if (!name.startsWith('TEMPORAL_')) env[name] = value;
    return { ...env, PORT: '0', ...temporalEnv };
  }

  function spawn(command: 'api' | 'worker', env: NodeJS.ProcessEnv): WeftProcess {
    const p = spawnWeft(command, env);
    processes.push(p);
    return p;
  }

  /** Connects a Luma account through the API process (which starts the first run) and waits for that run's status to leave RUNNING. */
  async function syncThroughProcesses(apiUrl: string, connectionId: string): Promise<void> {
    const auth = { authorization: `Bearer ${stack.keys.dev}`, 'content-type': 'application/json' };
    const connect = await fetch(`${apiUrl}/connections`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ provider_config_key: 'luma', connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } }),
    });
    expect(connect.status).toBe(201);

    const statusUrl = `${apiUrl}/sync/status?provider_config_key=luma&syncs=list-events&connection_id=${connectionId}`;
    let sync: { status?: string; latestResult?: unknown; latestError?: unknown } = {};
    for (let i = 0; i < 1200 && sync.status !== 'SUCCESS' && sync.status !== 'ERROR'; i++) {
      const res = await fetch(statusUrl, { headers: auth });
      if (res.status === 200) sync = ((await res.json()) as { syncs: Array<typeof sync> }).syncs[0] ?? {};
      if (sync.status !== 'SUCCESS' && sync.status !== 'ERROR') await new Promise((r) => setTimeout(r, 100));
    }
    expect(sync).toMatchObject({ status: 'SUCCESS', latestResult: { CalendarEvent: { added: EVENTS } } });

    const records = await fetch(`${apiUrl}/records?model=CalendarEvent&limit=1000`, {
      headers: { ...auth, 'connection-id': connectionId, 'provider-config-key': 'luma' },
    });
    expect(records.status).toBe(200);
    const ids = ((await records.json()) as { records: Array<{ id: string }> }).records.map((r) => r.id);
    expect(ids.sort()).toEqual(stack.luma.eventIds().sort());
  }

  /** Starts both processes on `temporalEnv`, runs a sync through them, then stops them with SIGTERM. */
  async function runSyncWith(temporalEnv: Record<string, string>, connectionId: string): Promise<void> {
    const env = processEnv(temporalEnv);
    const worker = spawn('worker', env);
    const api = spawn('api', env);
    await logLine(worker, 'weft worker running', 90_000);
    const url = String((await logLine(api, 'weft api listening', 90_000)).url);
    try {
      await syncThroughProcesses(url, connectionId);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- worker output ---\n${worker.output()}\n--- api output ---\n${api.output()}`);
    }
    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect(await api.exited).toBe(0);
    expect(await worker.exited).toBe(0);
  }

  test("configured by Temporal's environment variables (certificate files), the processes run a Luma sync", async () => {
    await runSyncWith(
      {
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        TEMPORAL_TLS_CLIENT_CERT_PATH: pki.client.certPath,
        TEMPORAL_TLS_CLIENT_KEY_PATH: pki.client.keyPath,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca.certPath,
        TEMPORAL_TLS_SERVER_NAME: 'localhost',
      },
      'mtls-env',
    );
  }, 240_000);

  test('configured by a profile of a TOML file (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE; certificate as inline data), the processes run a Luma sync', async () => {
    const file = path.join(dir, 'temporal.toml');
    // Another profile first, pointing nowhere: only TEMPORAL_PROFILE selects the right one.
    const toml = [
      '[profile.default]',
      'address = "127.0.0.1:1"',
      '',
      '[profile.weft-mtls]',
      `address = "${temporal.address}"`,
      `namespace = "${temporal.namespace}"`,
      '',
      '[profile.weft-mtls.tls]',
      `client_cert_data = """\n${await readFile(pki.client.certPath, 'utf8')}"""`,
      `client_key_data = """\n${await readFile(pki.client.keyPath, 'utf8')}"""`,
      `server_ca_cert_path = "${pki.ca.certPath}"`,
      'server_name = "localhost"',
      '',
    ].join('\n');
    await writeFile(file, toml, { mode: 0o600 });
    await runSyncWith({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'weft-mtls' }, 'mtls-profile');
  }, 240_000);

  /**
   * A certificate the server refuses: each process must stop by itself at start, exit code 1,
   * with temporal_unreachable, the address, and the TLS reason the handshake gave (the server's
   * alert: "unknown CA" for a certificate of another CA, "certificate required" for none; Node's
   * and the worker's Rust client spell them differently).
   */
  test('a client certificate of another CA, or none: weft api and weft worker stop at start with temporal_unreachable and the TLS reason', async () => {
    const base = { TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace, TEMPORAL_TLS_SERVER_NAME: 'localhost' };
    const cases = [
      {
        what: 'a client certificate of another CA',
        env: processEnv({
          ...base,
          TEMPORAL_TLS_CLIENT_CERT_PATH: pki.foreignClient.certPath,
          TEMPORAL_TLS_CLIENT_KEY_PATH: pki.foreignClient.keyPath,
          TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca.certPath,
        }),
        reason: /unknown[ _]?ca/i,
      },
      {
        what: 'no client certificate',
        env: processEnv({ ...base, TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca.certPath }),
        reason: /certificate[ _]?required/i,
      },
    ];
    // All four at once. No deadline of ours: a process that hung fails the test at its timeout.
    const started = cases.flatMap((c) => (['worker', 'api'] as const).map((command) => ({ ...c, command, p: spawn(command, c.env) })));
    const codes = await Promise.all(started.map((s) => s.p.exited));
    for (const [i, s] of started.entries()) {
      const output = s.p.output();
      const seen = { process: `weft ${s.command}`, with: s.what, code: codes[i], output };
      expect(seen).toMatchObject({ code: 1, output: expect.stringContaining('temporal_unreachable') });
      expect(seen).toMatchObject({ output: expect.stringContaining(temporal.address) });
      expect(seen).toMatchObject({ output: expect.stringMatching(s.reason) });
      // An operator's mistake, not a crash: the message, no stack trace.
      expect(output).not.toMatch(/\n\s+at /);
    }
  }, 180_000);
});
