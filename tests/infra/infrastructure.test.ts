import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';
import { BINARY_SPECS, resolveBinary } from '../../scripts/infra/binaries';
import { startFerretDB } from '../../scripts/infra/ferretdb-server';
import { getFreePorts, isPortFree } from '../../scripts/infra/free-port';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { STATE_DIR_LOCK_FILE, startInfrastructure } from '../../scripts/infra/infrastructure';
import { startTemporalDevServer } from '../../scripts/infra/temporal-dev-server';
import { waitUntil } from '../support/wait';

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(__dirname, '..', '..');
const { binaries } = infraOptionsFromEnv();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Local addresses of every TCP socket `pid` listens on (Linux /proc), e.g. "127.0.0.1:7233". */
async function listeningAddresses(pid: number): Promise<string[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match) inodes.add(match[1]);
  }
  const addresses: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9])) continue; // 0A = LISTEN
      const [hexAddr, hexPort] = cols[1].split(':');
      addresses.push(`${decodeProcAddress(hexAddr)}:${parseInt(hexPort, 16)}`);
    }
  }
  return addresses;
}

function decodeProcAddress(hex: string): string {
  if (hex.length === 8) return [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16)).join('.');
  return hex === '0'.repeat(32) ? '::' : hex.endsWith('0100007F') && hex.startsWith('0000000000000000FFFF0000') ? '127.0.0.1' : `[${hex}]`;
}

const procAvailable = process.platform === 'linux';

describe('resolveBinary', () => {
  it.each(['temporal', 'ferretdb'] as const)('finds %s at the pinned version', async (name) => {
    const file = await resolveBinary(name, { explicitPath: binaries[name], cacheDir: binaries.cacheDir });
    const { stdout } = await execFileAsync(file, ['--version']);
    expect(stdout).toContain(name === 'temporal' ? 'Server 1.29.1' : BINARY_SPECS.ferretdb.version);
  });

  it('rejects an explicit path that does not exist with infra_binary_unavailable', async () => {
    const missing = path.join(os.tmpdir(), 'weft-no-such-dir', 'temporal');
    await expect(resolveBinary('temporal', { explicitPath: missing })).rejects.toMatchObject({
      code: 'infra_binary_unavailable',
      message: expect.stringContaining(missing),
    });
  });
});

describe('startFerretDB', () => {
  it('serves real inserts and finds, and is gone with its port free after stop()', async () => {
    const [port, debugPort] = await getFreePorts(2);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'weft-ferretdb-test-'));
    const binary = await resolveBinary('ferretdb', { explicitPath: binaries.ferretdb, cacheDir: binaries.cacheDir });
    const server = await startFerretDB({ binary, port, debugPort, dataDir: path.join(dir, 'data'), stateDir: path.join(dir, 'state'), logLevel: 'error' });
    try {
      expect(server.uri).toBe(`mongodb://127.0.0.1:${port}/`);
      const client = new MongoClient(server.uri);
      try {
        const items = client.db('infra_test').collection<{ name: string; n: number }>('items');
        await items.insertOne({ name: 'a', n: 1 });
        expect(await items.findOne({ name: 'a' }, { projection: { _id: 0 } })).toEqual({ name: 'a', n: 1 });
      } finally {
        await client.close();
      }
      if (procAvailable) {
        const listening = await listeningAddresses(server.pid);
        expect(listening.length).toBeGreaterThan(0);
        for (const address of listening) expect(address).toMatch(/^127\.0\.0\.1:/);
      }
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
    expect(() => process.kill(server.pid, 0)).toThrow();
    expect(await isPortFree(port)).toBe(true);
    await server.stop(); // idempotent
  });
});

describe('supervised process', () => {
  it('kills the server when its parent dies, even by SIGKILL', async () => {
    // A parent that starts a long-running "server" under the supervisor, reports the pids, and waits.
    const parentCode = `
      const { startSupervisedProcess } = require('./scripts/infra/supervised-process');
      startSupervisedProcess({ name: 'sleeper', command: 'sleep', args: ['600'], keepParentAlive: true })
        .then((p) => process.stdout.write(JSON.stringify({ pid: p.pid, supervisorPid: p.supervisorPid }) + '\\n'));
    `;
    const parent = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', parentCode], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    const firstLine = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      parent.stdout!.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        if (buffer.includes('\n')) resolve(buffer.split('\n')[0]);
      });
      parent.on('exit', (code) => reject(new Error(`parent exited early with ${code}`)));
    });
    const { pid } = JSON.parse(firstLine) as { pid: number; supervisorPid: number };
    expect(isAlive(pid)).toBe(true);

    parent.kill('SIGKILL');
    await waitUntil(() => !isAlive(pid), { timeoutMs: 5_000, what: `pid ${pid} to exit` });
  });
});

describe('startInfrastructure', () => {
  it('starts nothing when Temporal and MongoDB are external', async () => {
    const infra = await startInfrastructure({
      mode: 'test',
      repoRoot,
      external: { temporalAddress: '127.0.0.1:1', temporalNamespace: 'elsewhere', mongodbUri: 'mongodb://127.0.0.1:2/' },
      // Paths that cannot work: resolving (let alone starting) a binary would throw.
      binaries: { temporal: '/nonexistent/temporal', ferretdb: '/nonexistent/ferretdb' },
      log: () => {},
    });
    expect(infra.temporal).toEqual({ address: '127.0.0.1:1', namespace: 'elsewhere', startedHere: false });
    expect(infra.mongodbUri).toBe('mongodb://127.0.0.1:2/');
    expect(infra.mongodbStartedHere).toBe(false);
    await infra.stop();
    await infra.stop();
  });

  it('fails fast in dev mode, naming the port and the variable, when a port is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const busyPort = (blocker.address() as net.AddressInfo).port;
    const stateDir = await mkdtemp(path.join(os.tmpdir(), 'weft-state-'));
    try {
      await expect(
        startInfrastructure({
          mode: 'dev',
          repoRoot,
          stateDir,
          external: { mongodbUri: 'mongodb://127.0.0.1:2/' },
          binaries: {},
          ports: { temporal: busyPort },
          log: () => {},
        }),
      ).rejects.toMatchObject({ code: 'infra_port_busy', message: expect.stringMatching(new RegExp(`${busyPort}[\\s\\S]*WEFT_TEMPORAL_PORT`)) });
      // The failed start let go of the state directory.
      expect(await readdir(stateDir)).toEqual([]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it('publishes the servers globalSetup started', async () => {
    const uri = process.env.WEFT_TEST_MONGODB_URI;
    const address = process.env.WEFT_TEST_TEMPORAL_ADDRESS;
    expect(uri).toBeTruthy();
    expect(address).toBeTruthy();
    const client = new MongoClient(uri!, { serverSelectionTimeoutMS: 5_000 });
    try {
      expect(await client.db('admin').command({ ping: 1 })).toMatchObject({ ok: 1 });
    } finally {
      await client.close();
    }
    const connection = await Connection.connect({ address: address! });
    try {
      await connection.workflowService.describeNamespace({ namespace: process.env.WEFT_TEST_TEMPORAL_NAMESPACE });
    } finally {
      await connection.close();
    }
  });
});

describe('the state directory (WEFT_STATE_DIR) in dev mode', () => {
  const dirs: string[] = [];
  const tempStateDir = async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'weft-state-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  /** A dev start on free ports, so it runs beside `npm start` and the test run's servers. */
  async function devStart(stateDir: string, external: { temporalAddress?: string; mongodbUri?: string } = {}) {
    const [temporal, temporalUi, ferretdb] = await getFreePorts(3);
    return startInfrastructure({ mode: 'dev', repoRoot, stateDir, external, binaries, ports: { temporal, temporalUi, ferretdb }, log: () => {} });
  }

  async function insertAndCount(uri: string, name: string): Promise<number> {
    const client = new MongoClient(uri);
    try {
      const items = client.db('state_dir_test').collection<{ name: string }>('items');
      if (name) await items.insertOne({ name });
      return await items.countDocuments();
    } finally {
      await client.close();
    }
  }

  it("holds all of both servers' data, so two dev starts with their own directories run side by side; a third on a used one is refused naming the setting", async () => {
    const [a, b] = [await tempStateDir(), await tempStateDir()];
    const [first, second] = await Promise.all([devStart(a), devStart(b)]);
    try {
      expect(first.temporal.startedHere && first.mongodbStartedHere && second.temporal.startedHere && second.mongodbStartedHere).toBe(true);
      expect(first.mongodbUri).not.toBe(second.mongodbUri);
      // Each keeps its own data: a document written through one is not in the other.
      expect(await insertAndCount(first.mongodbUri, 'in a')).toBe(1);
      expect(await insertAndCount(second.mongodbUri, '')).toBe(0);

      // Everything lands in the state directory: Temporal's database, FerretDB's databases and state, the lock.
      expect(await readdir(a)).toEqual(expect.arrayContaining(['temporal.sqlite', 'ferretdb', STATE_DIR_LOCK_FILE]));
      expect(await readdir(path.join(a, 'ferretdb', 'data'))).toContain('state_dir_test.sqlite');
      expect(await readdir(path.join(a, 'ferretdb', 'state'))).toContain('state.json');
      expect(JSON.parse(await readFile(path.join(a, STATE_DIR_LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
      expect(await readdir(b)).toEqual(expect.arrayContaining(['temporal.sqlite', 'ferretdb', STATE_DIR_LOCK_FILE]));

      // A third start on a directory in use stops before starting anything, and says what to set.
      await expect(devStart(a)).rejects.toMatchObject({
        code: 'infra_state_dir_busy',
        message: expect.stringMatching(new RegExp(`${a}[\\s\\S]*WEFT_STATE_DIR=`)),
      });
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
    // Stopping lets go of the directory; the data stays for the next start.
    expect(await readdir(a)).not.toContain(STATE_DIR_LOCK_FILE);
    const again = await devStart(a, { temporalAddress: process.env.WEFT_TEST_TEMPORAL_ADDRESS });
    try {
      expect(await insertAndCount(again.mongodbUri, '')).toBe(1);
    } finally {
      await again.stop();
    }
  }, 120_000);

  it('takes over the lock of a start that died without releasing it', async () => {
    const dir = await tempStateDir();
    // The pid of a process that has ended: what a start killed by SIGKILL leaves in its lock.
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => gone.once('exit', resolve));
    await writeFile(path.join(dir, STATE_DIR_LOCK_FILE), JSON.stringify({ pid: gone.pid }));
    const log: string[] = [];
    const [temporalUi, ferretdb] = await getFreePorts(2);
    const infra = await startInfrastructure({
      mode: 'dev',
      repoRoot,
      stateDir: dir,
      external: { temporalAddress: process.env.WEFT_TEST_TEMPORAL_ADDRESS },
      binaries,
      ports: { temporalUi, ferretdb },
      log: (msg) => log.push(msg),
    });
    try {
      expect(JSON.parse(await readFile(path.join(dir, STATE_DIR_LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
      expect(log).toContainEqual(expect.stringContaining(`pid ${gone.pid} is gone`));
    } finally {
      await infra.stop();
    }
  });
});

describe('startTemporalDevServer', () => {
  it('starts a second dev server on free ports with the search attributes, answers, binds loopback only, and stops', async () => {
    const [port] = await getFreePorts(1);
    const binary = await resolveBinary('temporal', { explicitPath: binaries.temporal, cacheDir: binaries.cacheDir });
    const server = await startTemporalDevServer({
      binary,
      port,
      uiPort: null,
      namespace: 'weft-infra-test',
      searchAttributes: { WeftConnectionId: 'Keyword', WeftRunCount: 'Int' },
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 40 },
      logLevel: 'warn',
      readyTimeoutMs: 25_000,
    });
    try {
      expect(server.address).toBe(`127.0.0.1:${port}`);
      expect(server.uiUrl).toBeUndefined();
      const connection = await Connection.connect({ address: server.address });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'weft-infra-test' });
        expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining(['WeftConnectionId', 'WeftRunCount']));
      } finally {
        await connection.close();
      }
      if (procAvailable) {
        const listening = await listeningAddresses(server.pid);
        expect(listening).toContain(`127.0.0.1:${port}`);
        for (const address of listening) expect(address).toMatch(/^127\.0\.0\.1:/);
      }
    } finally {
      await server.stop();
    }
    expect(() => process.kill(server.pid, 0)).toThrow();
    expect(await isPortFree(port)).toBe(true);
  }, 45_000);
});
