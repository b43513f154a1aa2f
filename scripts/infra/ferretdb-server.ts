import { mkdir } from 'node:fs/promises';
import { MongoClient } from 'mongodb';
import { LOOPBACK } from './free-port';
import { childProcessEnv } from './infra-env';
import { startSupervisedProcess, waitUntilReady, type ExitInfo, type SupervisedProcess } from './supervised-process';

export interface FerretDBOptions {
  binary: string;
  port: number;
  /** Metrics/pprof HTTP port. Every instance needs its own: the default 8088 is shared. */
  debugPort: number;
  /** SQLite databases live here (one file per database). */
  dataDir: string;
  /** FerretDB keeps its state.json (instance UUID) here; it defaults to the working directory. */
  stateDir: string;
  /** debug | info | warn | error */
  logLevel: string;
  readyTimeoutMs?: number;
  onOutput?: (chunk: string) => void;
  /**
   * A TLS listener beside the plain one (tests of MONGODB_URI with TLS): PEM files of the
   * server's certificate and key, and of the CA that client certificates must chain to
   * (with it, FerretDB requires a client certificate).
   */
  tls?: { port: number; certFile: string; keyFile: string; caFile?: string };
}

export interface FerretDBServer {
  uri: string;
  pid: number;
  readyInMs: number;
  recentOutput(): string;
  stop(): Promise<void>;
  /** Settles when the server has exited, for whatever reason. */
  exited: Promise<ExitInfo>;
}

function ferretDBArgs(opts: FerretDBOptions): string[] {
  return [
    '--handler=sqlite',
    // A directory URI: the trailing slash is required by FerretDB's SQLite backend.
    // synchronous(normal): FerretDB runs every update statement as its own SQLite
    // transaction, and with the default (full) each commit waits for an fsync — about 90 ms
    // apiece here, which made a sync that changes a few hundred records take minutes. In
    // WAL mode (FerretDB's default) normal is still safe against a crashed process; only a
    // power loss can drop the last commits. Production runs on MongoDB (MONGODB_URI).
    `--sqlite-url=file:${opts.dataDir.replace(/\/?$/, '/')}?_pragma=synchronous(normal)`,
    `--state-dir=${opts.stateDir}`,
    `--listen-addr=${LOOPBACK}:${opts.port}`,
    `--debug-addr=${LOOPBACK}:${opts.debugPort}`,
    // The default ("undecided") later phones home to beacon.ferretdb.com.
    '--telemetry=disable',
    `--log-level=${opts.logLevel}`,
    ...(opts.tls
      ? [
          `--listen-tls=${LOOPBACK}:${opts.tls.port}`,
          `--listen-tls-cert-file=${opts.tls.certFile}`,
          `--listen-tls-key-file=${opts.tls.keyFile}`,
          ...(opts.tls.caFile ? [`--listen-tls-ca-file=${opts.tls.caFile}`] : []),
        ]
      : []),
  ];
}

export async function startFerretDB(opts: FerretDBOptions): Promise<FerretDBServer> {
  await mkdir(opts.dataDir, { recursive: true });
  await mkdir(opts.stateDir, { recursive: true });
  const uri = `mongodb://${LOOPBACK}:${opts.port}/`;
  const started = Date.now();
  const proc = await startSupervisedProcess({
    name: 'ferretdb',
    command: opts.binary,
    args: ferretDBArgs(opts),
    cwd: opts.stateDir,
    // FerretDB reads FERRETDB_* variables as flags; a stray one in the shell must not reconfigure it.
    env: childProcessEnv({}, ['FERRETDB_']),
    onOutput: opts.onOutput,
  });
  try {
    await waitUntilMongoReady(proc, uri, opts.readyTimeoutMs ?? 30_000);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { uri, pid: proc.pid, readyInMs: Date.now() - started, recentOutput: proc.recentOutput, stop: proc.stop, exited: proc.exited };
}

async function waitUntilMongoReady(proc: SupervisedProcess, uri: string, timeoutMs: number): Promise<void> {
  await waitUntilReady(proc, { what: `FerretDB at ${uri}`, server: 'FerretDB', timeoutMs, attempt: () => pingMongo(uri), pauseMs: 100 });
}

async function pingMongo(uri: string): Promise<void> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 1_000, connectTimeoutMS: 1_000, directConnection: true });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
  } finally {
    await client.close().catch(() => {});
  }
}
