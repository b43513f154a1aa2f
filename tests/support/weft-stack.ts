import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import type { Client } from '@temporalio/client';
import { installTestRuntime } from './temporal-runtime';
import { CredentialCipher } from '../../auth/credential-cipher';
import { buildCore, type Core } from '../../app/core';
import { startApi } from '../../app/api/build-api';
import type { HttpTimeouts, RunningApi } from '../../api/server';
import { buildWorkers, type WeftWorkers } from '../../app/worker/run-workers';
import { createLumaSimulator, type LumaSimulator, type LumaSimulatorOptions } from '../../sandbox/luma';
import { createGraphSimulator, GRAPH_DEFAULT_ACCESS_TOKEN, type GraphSimulator, type GraphSimulatorOptions } from '../../sandbox/graph';
import { createGitHubSimulator, type GitHubSimulator, type GitHubSimulatorOptions } from '../../sandbox/github';
import { syncWorkflowId } from '../../control';
import type { Egresses, EgressPurpose, EgressSettings } from '../../egress/egress';
import { allowEntryFor } from '../../egress/settings';
import { loadConfig } from '../../common/config';
import { temporalRuntimeTelemetry, type Telemetry } from '../../app/telemetry';
import { describeStall } from './stall-report';
import { OpenApiResponseChecker, type ObservedResponse } from './openapi-responses';
import { observedWeftClient } from './weft-client';
import type { WeftApiClient } from '../../cli/api-client/client';
import { buildOpenApiDocument } from '../../api/openapi/document';

/**
 * A whole Weft for one test file, on the real Temporal dev server and FerretDB that
 * globalSetup started: its own database, its own task queue, its own API port and its
 * own Luma simulator, so test files never see each other's data.
 */
export interface WeftStack {
  apiUrl: string;
  keys: { dev: string; prod: string };
  core: Core;
  temporal: Client;
  luma: LumaSimulator;
  /** Present when the stack was started with `graph` options. */
  graph: GraphSimulator;
  /** Present when the stack was started with `github` options. */
  github: GitHubSimulator;
  /** The API's and the in-process worker's ways out: providers' allows exactly the simulators and `egressAllow.providers`, webhooks' `egressAllow.webhooks`. */
  egress: Egresses;
  taskQueue: string;
  /** WEFT_TEMPORAL_ID_PREFIX of this stack: its workflow and schedule IDs start with it. */
  temporalIdPrefix: string;
  env: Record<string, string>;
  /** The captured JSON log lines of the in-process API and worker. */
  logs: string[];
  api(method: string, path: string, opts?: { body?: unknown; key?: string | null; headers?: Record<string, string> }): Promise<{ status: number; body: any }>;
  /** The typed client (cli/api-client/) with the dev key; its answers are checked against the document as `api`'s are. Keep `api` for malformed input. */
  client: WeftApiClient;
  /** The typed client with another secret key (`stack.keys.prod`). */
  clientWithKey(key: string): WeftApiClient;
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  waitForSync(connectionId: string, syncName: string, opts?: { providerConfigKey?: string; environment?: string }): Promise<unknown>;
  shutdown(): Promise<void>;
}

export interface StackOptions {
  luma?: LumaSimulatorOptions;
  /** Also start a Microsoft Graph simulator with these options. */
  graph?: GraphSimulatorOptions;
  /** Also start a GitHub simulator with these options. */
  github?: GitHubSimulatorOptions;
  heartbeatTimeoutMs?: number;
  maxInlineWaitMs?: number;
  /**
   * Listen on a port chosen before start and set WEFT_PUBLIC_URL to it, so the worker knows
   * where providers reach the webhook intake (webhook subscriptions need it).
   */
  publicUrl?: boolean;
  /** Start the in-process sync worker right away (default true). */
  worker?: boolean;
  /**
   * More allow-list entries per purpose (host:port or base URLs of servers the test started):
   * `webhooks` for webhook and chat-alert receivers (WEFT_EGRESS_ALLOW_WEBHOOKS), `providers`
   * for other simulators, identity servers, a custom integration's API
   * (WEFT_EGRESS_ALLOW_PROVIDERS), `assets` for a server of images (WEFT_EGRESS_ALLOW_ASSETS). The stack's own simulators are always allowed as
   * providers, each by its exact host:port, so other loopback ports stay refused.
   */
  egressAllow?: Partial<Record<EgressPurpose, string[]>>;
  /** Fixed ports for the simulators (default: any free port); `npm run mocks:record` pins them so recorded URLs do not change between runs. */
  simulatorPorts?: { luma?: number; graph?: number; github?: number };
  /** Egress timeouts other than the defaults of common/config.ts. */
  egressTimeouts?: Partial<Omit<EgressSettings<EgressPurpose>, 'allow' | 'purpose'>>;
  /** Servers of the test's own instead of the shared ones (the outage tests stop and restart theirs). */
  servers?: { temporalAddress: string; mongodbUri: string };
  /** The API's sync-mode action deadline (WEFT_ACTION_TIMEOUT_MS). */
  actionTimeoutMs?: number;
  /**
   * WEFT_TEMPORAL_CALL_TIMEOUT_MS. 10 s here (the product's default is 1.5 s): a dev server
   * on two cores busy with the suite can take longer than 1.5 s to answer, and a status read
   * that answers 503 then fails a test about something else. Outage tests set 1.5 s.
   */
  temporalCallTimeoutMs?: number;
  /** The API's rate limit per environment (WEFT_API_RATE_LIMIT, WEFT_API_RATE_LIMIT_WINDOW_S; limit 0: off). */
  apiRateLimit?: { limit: number; windowMs: number };
  /** The API server's request/header/keep-alive timeouts, when not the defaults (WEFT_HTTP_*_TIMEOUT_MS). */
  httpTimeouts?: Partial<HttpTimeouts>;
  /** The core's MongoClient emits commandStarted events (stack.core.mongo.on('commandStarted', ...)). */
  monitorCommands?: boolean;
  /** A folder of the test's own integrations, loaded as WEFT_INTEGRATIONS_DIR is (the product's path). */
  integrationsDir?: string;
  /** Sees every answer `stack.api` receives (tests/e2e/openapi-responses.test.ts checks them against the document). */
  onResponse?: (response: ObservedResponse) => void;
  /** More configuration variables (OTEL_*, WEFT_WORKFLOW_BUNDLE), over the stack's own. */
  env?: Record<string, string>;
  /** The test's started OpenTelemetry (app/telemetry.ts): given to the core as a process gives its own. */
  telemetry?: Telemetry | null;
}

/**
 * Every answer `stack.api` receives is checked against the OpenAPI document (api/openapi/),
 * and `shutdown()` fails listing those that do not fit it, so the document cannot drift from
 * what the API answers. WEFT_OPENAPI_CHECK=0 turns this off.
 */
function openApiCheck(core: Core): { record(r: ObservedResponse): void; assertAllFit(): void } | null {
  if (process.env.WEFT_OPENAPI_CHECK === '0') return null;
  const checker = new OpenApiResponseChecker(buildOpenApiDocument(core.registry));
  const mismatches: string[] = [];
  return {
    record(r) {
      const m = checker.check(r);
      if (m) mismatches.push(`${m.response}: ${m.problem}`);
    },
    assertAllFit() {
      if (mismatches.length) throw new Error(`answers that do not fit the OpenAPI document:\n${mismatches.join('\n')}`);
    },
  };
}

export function testInfra() {
  const temporalAddress = process.env.WEFT_TEST_TEMPORAL_ADDRESS;
  const mongodbUri = process.env.WEFT_TEST_MONGODB_URI;
  const bundle = process.env.WEFT_TEST_WORKFLOW_BUNDLE;
  if (!temporalAddress || !mongodbUri || !bundle) throw new Error('globalSetup did not publish the test infrastructure');
  return { temporalAddress, namespace: process.env.WEFT_TEST_TEMPORAL_NAMESPACE ?? 'default', mongodbUri, bundle };
}

/**
 * The stack is wired by app/ like every process: its configuration is `env` (the same
 * variables a spawned `weft worker` or `weft api` of the test gets), and what only a test
 * needs (free ports, its simulators, egress timeouts, a captured log) is passed as options
 * of app's builders.
 */
export async function startWeftStack(opts: StackOptions = {}): Promise<WeftStack> {
  installTestRuntime({ telemetryOptions: temporalRuntimeTelemetry(loadConfig(opts.env ?? {})) });
  const infra = { ...testInfra(), ...opts.servers };
  const dbName = `weft_test_${randomBytes(6).toString('hex')}`;
  const taskQueue = `weft-syncs-${randomUUID()}`;
  const actionTaskQueue = `weft-actions-${randomUUID()}`;
  // Every test file shares one Temporal namespace: without a prefix of its own, two files
  // syncing connection "user-1" would share a workflow ID, and one would join the other's run
  // (a CI run once waited on a run whose worker had already stopped).
  const temporalIdPrefix = `weft-${randomBytes(4).toString('hex')}`;
  const encryptionKey = CredentialCipher.generateKey();
  const keys = { dev: `weft_sk_dev_${randomBytes(18).toString('base64url')}`, prod: `weft_sk_prod_${randomBytes(18).toString('base64url')}` };

  const luma = createLumaSimulator(opts.luma ?? {});
  await luma.start(opts.simulatorPorts?.luma);
  const graph = opts.graph ? createGraphSimulator(opts.graph) : null;
  await graph?.start(opts.simulatorPorts?.graph);
  const github = opts.github ? createGitHubSimulator(opts.github) : null;
  await github?.start(opts.simulatorPorts?.github);
  // Exactly the simulators' host:port and the test's own servers; other loopback ports stay refused.
  const allowEntries = (urls: Array<string | null | undefined>) =>
    urls.filter((u): u is string => typeof u === 'string').map((u) => (/^https?:\/\//.test(u) ? allowEntryFor(u) : u));
  const providerAllow = allowEntries([luma.url, graph?.url, github?.url, ...(opts.egressAllow?.providers ?? [])]);
  const webhookAllow = allowEntries(opts.egressAllow?.webhooks ?? []);
  const assetAllow = allowEntries(opts.egressAllow?.assets ?? []);

  const apiPort = opts.publicUrl ? await freePort() : 0;
  const env: Record<string, string> = {
    ...(opts.publicUrl ? { WEFT_PUBLIC_URL: `http://127.0.0.1:${apiPort}` } : {}),
    TEMPORAL_ADDRESS: infra.temporalAddress,
    TEMPORAL_NAMESPACE: infra.namespace,
    MONGODB_URI: infra.mongodbUri,
    MONGODB_DB: dbName,
    WEFT_ENCRYPTION_KEY: encryptionKey,
    WEFT_SYNC_TASK_QUEUE: taskQueue,
    WEFT_ACTION_TASK_QUEUE: actionTaskQueue,
    WEFT_TEMPORAL_ID_PREFIX: temporalIdPrefix,
    WEFT_WORKFLOW_BUNDLE: infra.bundle,
    WEFT_MAX_INLINE_WAIT_MS: String(opts.maxInlineWaitMs ?? 10_000),
    WEFT_SYNC_HEARTBEAT_TIMEOUT_MS: String(opts.heartbeatTimeoutMs ?? 10_000),
    WEFT_REQUEST_LOG_TTL_DAYS: '1',
    WEFT_EGRESS_ALLOW_PROVIDERS: providerAllow.join(','),
    WEFT_EGRESS_ALLOW_WEBHOOKS: webhookAllow.join(','),
    WEFT_EGRESS_ALLOW_ASSETS: assetAllow.join(','),
    LOG_LEVEL: 'info',
    ...(opts.integrationsDir ? { WEFT_INTEGRATIONS_DIR: opts.integrationsDir } : {}),
    ...(opts.actionTimeoutMs ? { WEFT_ACTION_TIMEOUT_MS: String(opts.actionTimeoutMs) } : {}),
    WEFT_TEMPORAL_CALL_TIMEOUT_MS: String(opts.temporalCallTimeoutMs ?? 10_000),
    ...(opts.apiRateLimit
      ? { WEFT_API_RATE_LIMIT: String(opts.apiRateLimit.limit), WEFT_API_RATE_LIMIT_WINDOW_S: windowSeconds(opts.apiRateLimit.windowMs) }
      : {}),
    ...(opts.httpTimeouts?.headersTimeoutMs ? { WEFT_HTTP_HEADERS_TIMEOUT_MS: String(opts.httpTimeouts.headersTimeoutMs) } : {}),
    ...(opts.httpTimeouts?.requestTimeoutMs ? { WEFT_HTTP_REQUEST_TIMEOUT_MS: String(opts.httpTimeouts.requestTimeoutMs) } : {}),
    ...(opts.httpTimeouts?.keepAliveTimeoutMs ? { WEFT_HTTP_KEEP_ALIVE_TIMEOUT_MS: String(opts.httpTimeouts.keepAliveTimeoutMs) } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  // The product's logger (it redacts every secret header a registered provider declares), its lines captured.
  const logs: string[] = [];
  const core = await buildCore(config, {
    log: { level: 'debug', destination: { write: (line: string) => void logs.push(line) } },
    watchDatabase: true,
    egressTimeouts: opts.egressTimeouts,
    monitorCommands: opts.monitorCommands,
    telemetry: opts.telemetry,
  });
  await core.stores.environments.ensure('dev', keys.dev);
  await core.stores.environments.ensure('prod', keys.prod);
  const { temporal, egress } = core;

  const api: RunningApi = await startApi(core, { port: apiPort, host: '127.0.0.1' });
  const checkAgainstDocument = openApiCheck(core);
  const observe =
    opts.onResponse || checkAgainstDocument
      ? (observed: ObservedResponse) => {
          opts.onResponse?.(observed);
          checkAgainstDocument?.record(observed);
        }
      : null;

  let running: { workers: WeftWorkers; done: Promise<void> } | null = null;
  const stack: WeftStack = {
    apiUrl: api.url,
    keys,
    core,
    temporal,
    luma,
    graph: graph as GraphSimulator,
    github: github as GitHubSimulator,
    egress,
    taskQueue,
    temporalIdPrefix,
    logs,
    env,

    async api(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      const key = o.key === undefined ? keys.dev : o.key;
      if (key) headers.authorization = `Bearer ${key}`;
      if (o.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers,
        body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
      });
      const text = await res.text();
      const answer = { status: res.status, body: text ? JSON.parse(text) : null };
      observe?.({
        method,
        path,
        status: res.status,
        contentType: res.headers.get('content-type'),
        body: answer.body,
        headers: Object.fromEntries(res.headers),
      });
      return answer;
    },

    client: observedWeftClient(api.url, keys.dev, observe),
    clientWithKey: (key) => observedWeftClient(api.url, key, observe),

    async startWorker() {
      if (running) return;
      const workers = await buildWorkers(core);
      running = { workers, done: workers.run() };
    },

    async stopWorker() {
      if (!running) return;
      const r = running;
      running = null;
      r.workers.shutdown();
      await r.done;
      await r.workers.connection.close();
    },

    async waitForSync(connectionId, syncName, o = {}) {
      const id = syncWorkflowId(temporalIdPrefix, o.environment ?? 'dev', o.providerConfigKey ?? 'luma', connectionId, syncName, 'base');
      // The handle follows the latest run of this workflow ID. A run that does not end well
      // within a test's time says where it stands (a CI run once saw a sync never finish).
      const handle = temporal.workflow.getHandle(id);
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          void describeStall(temporal, id).then((report) => reject(new Error(`waitForSync(${id}): not finished after 90 s; ${report}`)));
        }, 90_000);
        timer.unref();
      });
      return Promise.race([handle.result(), stalled]).finally(() => clearTimeout(timer));
    },

    async shutdown() {
      await stack.stopWorker();
      await api.close();
      await luma.stop();
      await graph?.stop();
      await github?.stop();
      await core.mongo
        .db(dbName)
        .dropDatabase()
        .catch(() => undefined);
      await core.close();
      checkAgainstDocument?.assertAllFit();
    },
  };
  if (opts.worker !== false) await stack.startWorker();
  return stack;
}

function windowSeconds(windowMs: number): string {
  if (windowMs % 1000 !== 0) throw new Error(`apiRateLimit.windowMs must be whole seconds (WEFT_API_RATE_LIMIT_WINDOW_S), got ${windowMs}`);
  return String(windowMs / 1000);
}

/** Creates the `luma` integration in dev pointing at this stack's simulator. */
export async function createLumaIntegration(
  stack: WeftStack,
  overrides: { rate_limit?: { requests: number; window_ms: number; lockout_ms?: number }; key?: string; unique_key?: string } = {},
) {
  const res = await stack.api('POST', '/integrations', {
    key: overrides.key,
    body: {
      unique_key: overrides.unique_key ?? 'luma',
      provider: 'luma',
      provider_overrides: { base_url: stack.luma.url, ...(overrides.rate_limit ? { rate_limit: overrides.rate_limit } : {}) },
    },
  });
  if (res.status !== 201) throw new Error(`creating the luma integration failed: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Reads every record of a model through the API, following next_cursor. */
export async function readAllRecords(
  stack: WeftStack,
  connectionId: string,
  model: string,
  query: Record<string, string> = {},
  providerConfigKey = 'luma',
): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const qs = new URLSearchParams({ model, limit: '1000', ...query, ...(cursor ? { cursor } : {}) });
    const res = await stack.api('GET', `/records?${qs}`, { headers: { 'connection-id': connectionId, 'provider-config-key': providerConfigKey } });
    if (res.status !== 200) throw new Error(`GET /records failed: ${res.status} ${JSON.stringify(res.body)}`);
    out.push(...res.body.records);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

/** Creates the `one-drive` integration in dev pointing at this stack's Graph simulator. */
export async function createOneDriveIntegration(stack: WeftStack, uniqueKey = 'one-drive') {
  const res = await stack.api('POST', '/integrations', {
    body: { unique_key: uniqueKey, provider: 'one-drive', provider_overrides: { base_url: stack.graph.url } },
  });
  if (res.status !== 201) throw new Error(`creating the one-drive integration failed: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Connects a OneDrive account with a token the Graph simulator accepts. */
export async function connectOneDrive(stack: WeftStack, connectionId: string, accessToken = GRAPH_DEFAULT_ACCESS_TOKEN) {
  return stack.api('POST', '/connections', {
    body: { provider_config_key: 'one-drive', connection_id: connectionId, credentials: { type: 'OAUTH2', access_token: accessToken } },
  });
}

/** Creates the `github` integration in dev with the simulator's App ID and private key (and the App's webhook secret, if given). */
export async function createGitHubIntegration(stack: WeftStack, uniqueKey = 'github', opts: { webhookSecret?: string } = {}) {
  const res = await stack.api('POST', '/integrations', {
    body: {
      unique_key: uniqueKey,
      provider: 'github',
      credentials: {
        type: 'APP',
        app_id: String(stack.github.app.id),
        app_link: `https://github.com/apps/${stack.github.app.slug}`,
        private_key: stack.github.appPrivateKeyPem,
        ...(opts.webhookSecret ? { webhook_secret: opts.webhookSecret } : {}),
      },
      provider_overrides: { base_url: stack.github.url },
    },
  });
  if (res.status !== 201) throw new Error(`creating the github integration failed: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Connects the App installation `installationId` of the GitHub simulator. */
export async function connectGitHub(stack: WeftStack, connectionId: string, installationId = 1001) {
  return stack.api('POST', '/connections', {
    body: {
      provider_config_key: 'github',
      connection_id: connectionId,
      credentials: { type: 'APP', app_id: String(stack.github.app.id), installation_id: String(installationId) },
    },
  });
}

/**
 * GET /logs?<query> until it lists at least `n` entries, or 5 s; its entries. Request-log
 * entries are written in batches a few ms after their calls: the stack's own are written first.
 */
export async function waitForLogs(stack: WeftStack, query: string, n: number): Promise<any[]> {
  await stack.core.stores.requestLogs.flush();
  const deadline = Date.now() + 5_000;
  for (;;) {
    const res = await stack.api('GET', `/logs?${query}`);
    if (res.status !== 200) throw new Error(`GET /logs?${query}: ${res.status} ${JSON.stringify(res.body)}`);
    if (res.body.logs.length >= n || Date.now() > deadline) return res.body.logs;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits for a background operation (a trigger, start or pause of every connection of an
 * integration: 202 with `operation`) to finish, as GET /sync/status reports it; returns it.
 */
export async function waitForOperation(stack: WeftStack, providerConfigKey: string, operationId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await stack.api('GET', `/sync/status?provider_config_key=${encodeURIComponent(providerConfigKey)}&syncs=*`);
    if (res.status === 200) {
      last = res.body.operations?.find((o: any) => o.id === operationId);
      if (last && (last as any).status !== 'RUNNING') return last;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`operation ${operationId} did not finish within ${timeoutMs} ms; last seen: ${JSON.stringify(last)}`);
}

/** Triggers one sync and waits for its run to end; resolves with the run summary or rejects with its failure. */
export async function runSync(
  stack: WeftStack,
  providerConfigKey: string,
  connectionId: string,
  syncName: string,
  opts: { reset?: boolean } = {},
): Promise<any> {
  const res = await stack.api('POST', '/sync/trigger', {
    body: { provider_config_key: providerConfigKey, connection_id: connectionId, syncs: [syncName], ...(opts.reset ? { opts: { reset: true } } : {}) },
  });
  if (res.status !== 200) throw new Error(`sync trigger failed: ${res.status} ${JSON.stringify(res.body)}`);
  return stack.waitForSync(connectionId, syncName, { providerConfigKey });
}

/** A port free on 127.0.0.1 now (the OS's pick, released at once): for a server whose URL must be known before it starts. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
