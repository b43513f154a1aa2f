import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { LOOPBACK } from './free-port';
import { childProcessEnv } from './infra-env';
import { startSupervisedProcess, waitUntilReady, type SupervisedProcess } from './supervised-process';

export interface TemporalDevServerOptions {
  binary: string;
  port: number;
  /** undefined: the CLI default (port + 1000); null: no web UI (--headless). */
  uiPort?: number | null;
  /** SQLite file that persists state; absent keeps everything in memory (tests). */
  dbFile?: string;
  namespace: string;
  searchAttributes: Record<string, string>;
  dynamicConfig?: Record<string, string | number | boolean>;
  logLevel: string;
  /** How long to wait for the frontend to answer; 60 s suits a busy 2-core CI box. */
  readyTimeoutMs?: number;
  onOutput?: (chunk: string) => void;
}

export interface TemporalDevServer {
  /** host:port of the gRPC frontend. */
  address: string;
  namespace: string;
  uiUrl?: string;
  pid: number;
  /** Time from spawn to "namespace describable", for start-up reports. */
  readyInMs: number;
  recentOutput(): string;
  stop(): Promise<void>;
}

/** The `temporal server start-dev` arguments for the options (kept separate so it is inspectable). */
function temporalDevServerArgs(opts: TemporalDevServerOptions): string[] {
  const args = ['server', 'start-dev', '--ip', LOOPBACK, '--port', String(opts.port), '--namespace', opts.namespace, '--log-level', opts.logLevel];
  if (opts.uiPort === null) args.push('--headless');
  else if (opts.uiPort !== undefined) args.push('--ui-ip', LOOPBACK, '--ui-port', String(opts.uiPort));
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  for (const [name, type] of Object.entries(opts.searchAttributes)) args.push('--search-attribute', `${name}=${type}`);
  // The CLI parses each value as JSON, so strings need their quotes.
  for (const [key, value] of Object.entries(opts.dynamicConfig ?? {})) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  return args;
}

export async function startTemporalDevServer(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const address = `${LOOPBACK}:${opts.port}`;
  if (opts.dbFile) await mkdir(path.dirname(opts.dbFile), { recursive: true });
  const started = Date.now();
  const proc = await startSupervisedProcess({
    name: 'temporal',
    command: opts.binary,
    args: temporalDevServerArgs(opts),
    // TEMPORAL_ADDRESS and friends in the developer's shell configure the CLI as a client; keep them out.
    env: childProcessEnv({}, ['TEMPORAL_']),
    onOutput: opts.onOutput,
  });
  try {
    await waitUntilTemporalReady(proc, address, opts.namespace, opts.readyTimeoutMs ?? 60_000);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  const uiPort = opts.uiPort === undefined ? opts.port + 1000 : opts.uiPort;
  return {
    address,
    namespace: opts.namespace,
    uiUrl: uiPort === null ? undefined : `http://${LOOPBACK}:${uiPort}`,
    pid: proc.pid,
    readyInMs: Date.now() - started,
    recentOutput: proc.recentOutput,
    stop: proc.stop,
  };
}

/**
 * Ready means: the frontend accepts a gRPC connection, its health service says SERVING, and
 * the namespace can be described (the server registers namespaces after the port opens, and
 * a worker started before that fails with NamespaceNotFound).
 */
async function waitUntilTemporalReady(proc: SupervisedProcess, address: string, namespace: string, timeoutMs: number): Promise<void> {
  await waitUntilReady(proc, {
    what: `Temporal dev server at ${address}`,
    server: 'Temporal dev server',
    timeoutMs,
    attempt: (attemptMs) => probeTemporal(address, namespace, attemptMs),
    maxAttemptMs: 3_000,
  });
}

async function probeTemporal(address: string, namespace: string, timeoutMs: number): Promise<void> {
  const connection = await Connection.connect({ address, connectTimeout: timeoutMs });
  try {
    // A deadline per call: the client's retry interceptor would otherwise keep retrying UNAVAILABLE.
    await connection.withDeadline(Date.now() + timeoutMs, async () => {
      const health = await connection.healthService.check({});
      // 1 = SERVING in grpc.health.v1.HealthCheckResponse.ServingStatus
      if (health.status !== 1) throw new Error(`health status ${String(health.status)}`);
      await connection.workflowService.describeNamespace({ namespace });
    });
  } finally {
    await connection.close();
  }
}
