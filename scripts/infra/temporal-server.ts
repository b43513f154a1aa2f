import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection, type TLSConfig } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { stringify } from 'yaml';
import { getFreePorts, LOOPBACK } from './free-port';
import { childProcessEnv } from './infra-env';
import { startSupervisedProcess, waitUntilReady, type SupervisedProcess } from './supervised-process';

/**
 * The plain Temporal server (`temporal-server` in binaries.ts, go.temporal.io/server 1.29.1),
 * configured as a production cluster is rather than as the dev server: TLS on the frontend
 * with client certificates required, optionally authorization with JWTs checked against a
 * JWKS URL. For the tests that Weft connects to such a server. In memory (SQLite), on free
 * ports of 127.0.0.1, under the same supervisor as the dev server (it stops when this process
 * dies). The facts relied on are in docs/temporal-server-tls.md.
 */
export interface TemporalServerOptions {
  binary: string;
  /** The frontend's own certificate and key (PEM files), and the CA(s) whose client certificates it accepts. */
  tls: { certPath: string; keyPath: string; clientCaPaths: string[] };
  /**
   * How this module reaches the server itself (readiness, registering the namespace): a client
   * certificate the server accepts, the CA that signed the server's certificate, and the name to
   * check it for (default `localhost`: TLS sends no IP address as the server name).
   */
  client: { certPath: string; keyPath: string; serverCaPath: string; serverName?: string };
  /** Registered once the server is up (the plain server creates none); default `default`. */
  namespace?: string;
  /**
   * Authorization on the frontend: Temporal's default authorizer and JWT claim mapper, keys from
   * this JWKS URL (RS256 or ES256 with a `kid`; read at start and every `refreshInterval`), the
   * roles in the `permissions` claim ("default:write", "temporal-system:admin"). A call without
   * a token is refused (health checks aside). The URL must answer before the server starts.
   */
  authorization?: { jwksUrl: string; permissionsClaimName?: string; refreshInterval?: string };
  /** More dynamic config over the defaults below (key → value for every namespace). */
  dynamicConfig?: Record<string, unknown>;
  /** The server's log level (default warn). */
  logLevel?: string;
  /** How long to wait for the frontend to answer; 60 s suits a busy 2-core CI box. */
  readyTimeoutMs?: number;
  onOutput?: (chunk: string) => void;
}

export interface TemporalServer {
  /** host:port of the TLS frontend. */
  address: string;
  namespace: string;
  /** The internal frontend (plain gRPC, no authorization: the server's own system worker uses it). Not for clients under test. */
  internalAddress: string;
  /** The config directory the server was started with (development.yaml, dynamic-config.yaml). */
  configDir: string;
  pid: number;
  readyInMs: number;
  recentOutput(): string;
  /** Stops the server and removes its temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** What the dev server's config (temporal-dev.yaml and the CLI's own defaults) sets that matters to Weft. */
const DEFAULT_DYNAMIC_CONFIG: Record<string, unknown> = {
  // One partition per task queue: one process, and with the default 4 a task can wait on one
  // partition while the pollers sit on another.
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
  // Eager activity dispatch, which Weft's workers ask for (Temporal Cloud has it on).
  'system.enableActivityEagerExecution': true,
  // The CLI dev server's own defaults.
  'history.hostLevelCacheMaxSize': 8096,
  'frontend.namespaceRPS.visibility': 100,
};

const SERVICES = ['frontend', 'internal-frontend', 'history', 'matching', 'worker'] as const;

export async function startTemporalServer(opts: TemporalServerOptions): Promise<TemporalServer> {
  const namespace = opts.namespace ?? 'default';
  const root = await mkdtemp(path.join(os.tmpdir(), 'weft-temporal-server-'));
  try {
    const ports = await getFreePorts(SERVICES.length * 2);
    const servicePorts = Object.fromEntries(SERVICES.map((s, i) => [s, { grpc: ports[2 * i], membership: ports[2 * i + 1] }])) as Record<
      (typeof SERVICES)[number],
      { grpc: number; membership: number }
    >;
    const configDir = path.join(root, 'config');
    await mkdir(configDir);
    const dynamicConfigFile = path.join(configDir, 'dynamic-config.yaml');
    await writeFile(dynamicConfigFile, dynamicConfigYaml({ ...DEFAULT_DYNAMIC_CONFIG, ...opts.dynamicConfig }));
    await writeFile(path.join(configDir, 'development.yaml'), stringify(serverConfig(opts, servicePorts, dynamicConfigFile)));

    const address = `${LOOPBACK}:${servicePorts.frontend.grpc}`;
    const internalAddress = `${LOOPBACK}:${servicePorts['internal-frontend'].grpc}`;
    const started = Date.now();
    const proc = await startSupervisedProcess({
      name: 'temporal-server',
      command: opts.binary,
      args: ['--root', root, '--config', 'config', '--env', 'development', 'start', ...SERVICES.flatMap((s) => ['--service', s])],
      // TEMPORAL_ADDRESS, TEMPORAL_TLS_* and the like in the caller's environment are client
      // settings; the server reads some TEMPORAL_* of its own (TEMPORAL_ROOT...). Keep them all out.
      env: childProcessEnv({}, ['TEMPORAL_']),
      stopTimeoutMs: 5_000,
      onOutput: opts.onOutput,
    });
    const stop = async () => {
      await proc.stop();
      await rm(root, { recursive: true, force: true });
    };
    try {
      const tls = await clientTls(opts.client);
      await waitUntilServing(proc, address, tls, opts.readyTimeoutMs ?? 60_000);
      // With authorization on, registering a namespace needs a system admin's token; the
      // internal frontend (no authorization, plain) is the operator's way in here.
      await registerNamespace(proc, opts.authorization ? { address: internalAddress } : { address, tls }, namespace, opts.readyTimeoutMs ?? 60_000);
    } catch (err) {
      await stop();
      throw err;
    }
    return { address, namespace, internalAddress, configDir, pid: proc.pid, readyInMs: Date.now() - started, recentOutput: proc.recentOutput, stop };
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}

type ServicePorts = Record<(typeof SERVICES)[number], { grpc: number; membership: number }>;

/** The server's static config (common/config/config.go of the server). */
function serverConfig(opts: TemporalServerOptions, ports: ServicePorts, dynamicConfigFile: string): Record<string, unknown> {
  // A database of its own per server: the sqlite plugin shares one in-memory database per name
  // within the process, and creates its schema when the mode is memory.
  const sqlite = {
    pluginName: 'sqlite',
    databaseName: `weft-${randomBytes(6).toString('hex')}`,
    connectAddr: 'localhost',
    connectProtocol: 'tcp',
    connectAttributes: { mode: 'memory', cache: 'shared' },
    maxConns: 1,
    maxIdleConns: 1,
  };
  const frontendAddress = `${LOOPBACK}:${ports.frontend.grpc}`;
  return {
    log: { stdout: true, level: opts.logLevel ?? 'warn' },
    persistence: {
      defaultStore: 'sqlite-default',
      visibilityStore: 'sqlite-default',
      numHistoryShards: 1,
      datastores: { 'sqlite-default': { sql: sqlite } },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: LOOPBACK },
      tls: {
        // Only the frontend that clients use has TLS; internode traffic (and the internal
        // frontend below) stays plain on 127.0.0.1.
        frontend: {
          server: {
            certFile: opts.tls.certPath,
            keyFile: opts.tls.keyPath,
            requireClientAuth: true,
            clientCaFiles: opts.tls.clientCaPaths,
          },
        },
      },
      ...(opts.authorization
        ? {
            authorization: {
              jwtKeyProvider: { keySourceURIs: [opts.authorization.jwksUrl], refreshInterval: opts.authorization.refreshInterval ?? '1m' },
              permissionsClaimName: opts.authorization.permissionsClaimName ?? 'permissions',
              authorizer: 'default',
              claimMapper: 'default',
            },
          }
        : {}),
    },
    services: Object.fromEntries(SERVICES.map((s) => [s, { rpc: { grpcPort: ports[s].grpc, membershipPort: ports[s].membership, bindOnIP: LOOPBACK } }])),
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontendAddress } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
}

/** The file-based dynamic config: each key a list of values with constraints; unconstrained applies everywhere. */
function dynamicConfigYaml(values: Record<string, unknown>): string {
  return stringify(Object.fromEntries(Object.entries(values).map(([key, value]) => [key, [{ value, constraints: {} }]])));
}

async function clientTls(client: TemporalServerOptions['client']): Promise<TLSConfig> {
  return {
    serverNameOverride: client.serverName ?? 'localhost',
    serverRootCACertificate: await readFile(client.serverCaPath),
    clientCertPair: { crt: await readFile(client.certPath), key: await readFile(client.keyPath) },
  };
}

/** Until the frontend answers its health check SERVING over mTLS (a health check needs no authorization). */
async function waitUntilServing(proc: SupervisedProcess, address: string, tls: TLSConfig, timeoutMs: number): Promise<void> {
  await waitUntilReady(proc, {
    what: `Temporal server at ${address}`,
    server: 'Temporal server',
    timeoutMs,
    attempt: async (attemptMs) => {
      await withConnection({ address, tls }, attemptMs, async (connection) => {
        const health = await connection.healthService.check({});
        // 1 = SERVING in grpc.health.v1.HealthCheckResponse.ServingStatus
        if (health.status !== 1) throw new Error(`health status ${String(health.status)}`);
      });
    },
  });
}

/**
 * Registers the namespace (retention one day), then waits until it can be described: right
 * after start the frontend can answer before history is up, and registering then fails
 * UNAVAILABLE; an "already exists" from a retried call counts as done.
 */
async function registerNamespace(proc: SupervisedProcess, target: { address: string; tls?: TLSConfig }, namespace: string, timeoutMs: number): Promise<void> {
  await waitUntilReady(proc, {
    what: `namespace ${namespace} on ${target.address}`,
    server: 'Temporal server',
    timeoutMs,
    attempt: async (attemptMs) => {
      await withConnection(target, attemptMs, async (connection) => {
        try {
          await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
        } catch (err) {
          // 6 = ALREADY_EXISTS
          if ((err as { code?: number }).code !== 6) throw err;
        }
        await connection.workflowService.describeNamespace({ namespace });
      });
    },
  });
}

async function withConnection(target: { address: string; tls?: TLSConfig }, timeoutMs: number, use: (c: Connection) => Promise<void>): Promise<void> {
  const connection = await Connection.connect({ address: target.address, tls: target.tls, connectTimeout: timeoutMs });
  try {
    // A deadline per attempt: the client's retry interceptor would otherwise keep retrying UNAVAILABLE.
    await connection.withDeadline(Date.now() + timeoutMs, () => use(connection));
  } finally {
    await connection.close();
  }
}
