import { syncScheduleId } from '../../control';
import { randomUUID } from 'node:crypto';
import { sealedAt } from '../../auth/credential-cipher';
import { recordFilters } from '../support/command-filters';
import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';

const API_KEY = 'sandbox-luma-api-key';
/** prod's connection is another Luma account: a provider's budget is its account's, whatever the environment. */
const PROD_API_KEY = 'sandbox-luma-api-key-prod';
const LATENCY_MS = 25;

/**
 * `GET /integrations/:key/status` and the errors of `GET /connections` on real Temporal and
 * FerretDB: the third-party figures are checked against the Luma simulator's own count of the
 * requests it received, the sync and auth figures against what the test did.
 */
describe('integration status (real Temporal dev server)', () => {
  let stack: WeftStack;
  /** The simulator's counts once the dev environment's calls were made (before prod's). */
  let devStats: ReturnType<WeftStack['luma']['stats']>;
  let failedRunId: string;

  async function connect(connectionId: string, key = stack.keys.dev, environment = 'dev') {
    const res = await stack.clientWithKey(key).POST('/connections', {
      body: {
        provider_config_key: 'luma',
        connection_id: connectionId,
        credentials: { type: 'API_KEY', apiKey: environment === 'prod' ? PROD_API_KEY : API_KEY },
      },
    });
    expect(res.response.status).toBe(201);
    await stack.waitForSync(connectionId, 'list-events', { environment });
  }

  async function status(key = stack.keys.dev, integration = 'luma') {
    const res = await stack.clientWithKey(key).GET('/integrations/{key}/status', { params: { path: { key: integration } } });
    expect(res.response.status).toBe(200);
    return res.data!.data;
  }

  /** Request log entries are written without being awaited by the call: read until the count settles at `requests`. */
  async function statusWhenLogged(requests: number, key = stack.keys.dev) {
    for (const deadline = Date.now() + 10_000; ;) {
      const s = await status(key);
      if (s.last_hour.requests >= requests || Date.now() > deadline) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    stack = await startWeftStack({
      luma: { seed: 11, eventCount: 120, latencyMs: LATENCY_MS, apiKeys: [API_KEY, PROD_API_KEY] },
      temporalCallTimeoutMs: 10_000,
    });
    // dev: a tight request budget, so the sync's pages wait for it (rate-limit waits in the figures).
    await createLumaIntegration(stack, { rate_limit: { requests: 1, window_ms: 1_000 } });
    await createLumaIntegration(stack, { key: stack.keys.prod });

    await connect('ok-1');
    await connect('paused-1');
    await connect('fail-1');
    // fail-1's next run: Luma refuses the key (401) — the run fails and the connection needs re-authorization.
    stack.luma.failNext(1_000, 401);
    await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'fail-1', syncs: ['list-events'] } });
    await expect(stack.waitForSync('fail-1', 'list-events')).rejects.toThrow();
    stack.luma.failNext(0);
    const pause = await stack.client.POST('/sync/pause', { body: { provider_config_key: 'luma', connection_id: 'paused-1', syncs: ['list-events'] } });
    expect(pause.response.status).toBe(200);
    devStats = stack.luma.stats();
    const failedSync = await stack.core.stores.db.collection('syncs').findOne({ environment: 'dev', connection_id: 'fail-1' });
    failedRunId = failedSync?.last_run.id;
    expect(failedSync?.last_run.status).toBe('ERROR');

    // Another environment's integration of the same name, on the same simulator.
    await connect('prod-1', stack.keys.prod, 'prod');
  });
  afterAll(async () => stack?.shutdown());

  test("connections, syncs, paused schedules and the last hour's calls, as the simulator counted them", async () => {
    const s = await statusWhenLogged(devStats.requests);
    expect(s.provider_config_key).toBe('luma');
    expect(s.connections).toEqual({ total: 3, by_auth_state: { ok: 2, needs_reauthorization: 1 } });
    expect(s.syncs).toEqual({
      total: 3,
      by_last_state: { SUCCESS: 2, ERROR: 1, RUNNING: 0, NEVER_RUN: 0 },
      paused: 1,
      paused_checked: 3,
      paused_complete: true,
      temporal_error: null,
    });

    // Every request Luma received for dev (connect checks, sync pages, the refused ones), none of prod's.
    const failedAtLuma = devStats.requests - (devStats.byStatus[200] ?? 0);
    expect(devStats.byStatus[401]).toBeGreaterThan(0);
    expect(s.last_hour).toMatchObject({ requests: devStats.requests, errors: failedAtLuma, rate_limited: devStats.byStatus[429] ?? 0, complete: true });
    expect(s.last_hour.error_rate).toBeCloseTo(failedAtLuma / devStats.requests, 10);
    // Luma answers after LATENCY_MS, so no call took less.
    expect(s.last_hour.latency_ms.p50).toBeGreaterThanOrEqual(LATENCY_MS);
    // (null only when there were no calls: the document says so, and the line above has ruled it out)
    expect(s.last_hour.latency_ms.p95).toBeGreaterThanOrEqual(s.last_hour.latency_ms.p50!);
    // dev's budget (1 request a second: slower than any call, however busy the machine) held requests back; prod has none.
    expect(s.last_hour.rate_limit_waits.count).toBeGreaterThan(0);
    expect(s.last_hour.rate_limit_waits.total_ms).toBeGreaterThan(0);
    expect(Date.parse(s.last_hour.to) - Date.parse(s.last_hour.from)).toBe(3_600_000);

    // The latest errors, newest first: fail-1's failed run and its connection's refused key.
    expect(s.latest_errors).toHaveLength(2);
    expect(s.latest_errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'sync',
          connection_id: 'fail-1',
          sync: { name: 'list-events', variant: 'base' },
          run_id: failedRunId,
          code: 'provider_auth_failed',
        }),
        expect.objectContaining({ type: 'auth', connection_id: 'fail-1', sync: null, code: 'needs_reauthorization' }),
      ]),
    );
    expect(Date.parse(s.latest_errors[0].at)).toBeGreaterThanOrEqual(Date.parse(s.latest_errors[1].at));
    // A sync error's run_id finds that run's calls in the request log, the refused ones among them.
    await stack.core.stores.requestLogs.flush(); // entries are written in batches a few ms after their calls
    const { entries } = await stack.core.stores.requestLogs.range({ environment: 'dev', integration: 'luma', runId: failedRunId, limit: 100 });
    expect(entries.some((e) => e.status === 401)).toBe(true);
    expect(JSON.stringify(s)).not.toContain(API_KEY);
  });

  test("another environment's status counts only its own connections and calls", async () => {
    const total = stack.luma.stats();
    const prodRequests = total.requests - devStats.requests;
    expect(prodRequests).toBeGreaterThan(0);
    const s = await statusWhenLogged(prodRequests, stack.keys.prod);
    expect(s.connections).toEqual({ total: 1, by_auth_state: { ok: 1, needs_reauthorization: 0 } });
    expect(s.syncs).toMatchObject({ total: 1, by_last_state: { SUCCESS: 1, ERROR: 0, RUNNING: 0, NEVER_RUN: 0 }, paused: 0 });
    expect(s.latest_errors).toEqual([]);
    expect(s.last_hour).toMatchObject({ requests: prodRequests, errors: 0, error_rate: 0, rate_limit_waits: { count: 0, total_ms: 0 } });
    // dev's figures did not move.
    expect((await status()).last_hour.requests).toBe(devStats.requests);
  });

  test('an unknown integration is 404, a bad query 400', async () => {
    const unknown = await stack.client.GET('/integrations/{key}/status', { params: { path: { key: 'nope' } } });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error?.error.code).toBe('unknown_provider_config');
    // Malformed on purpose: the untyped helper.
    const bad = await stack.api('GET', '/integrations/luma/status?errors=0');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_query_params');
    const one = await stack.client.GET('/integrations/{key}/status', { params: { path: { key: 'luma' }, query: { errors: 1 } } });
    expect(one.data?.data.latest_errors).toHaveLength(1);
  });

  test('GET /connections lists each connection with its auth and sync errors', async () => {
    const res = await stack.client.GET('/connections', { params: { query: { integrationId: 'luma' } } });
    expect(res.response.status).toBe(200);
    const byId = new Map(res.data!.connections.map((c) => [c.connection_id, c]));
    expect([...byId.keys()].sort()).toEqual(['fail-1', 'ok-1', 'paused-1']);
    expect(byId.get('ok-1')?.errors).toEqual([]);
    expect(byId.get('paused-1')?.errors).toEqual([]);
    const errors = byId.get('fail-1')?.errors;
    expect(errors).toHaveLength(2);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'auth', log_id: null, code: 'needs_reauthorization' }),
        { type: 'sync', log_id: failedRunId, sync_name: 'list-events', variant: 'base', code: 'provider_auth_failed', message: expect.any(String) },
      ]),
    );
    // The one-connection lookup (what SDKs ask) carries them too.
    const one = await stack.client.GET('/connections', { params: { query: { connectionId: 'fail-1' } } });
    expect(one.data?.connections[0].errors).toEqual(errors);
    expect(JSON.stringify(res.data)).not.toContain(API_KEY);
  });

  /** The Temporal calls of the stack's client (the in-process API's) while `fn` runs, by method. */
  async function temporalCalls(fn: () => Promise<void>): Promise<Record<string, number>> {
    const service = stack.temporal.workflowService as unknown as Record<string, (...args: unknown[]) => unknown>;
    const counts: Record<string, number> = {};
    const originals = Object.entries(service).filter(([, f]) => typeof f === 'function');
    for (const [name, original] of originals) {
      service[name] = (...args: unknown[]) => {
        counts[name] = (counts[name] ?? 0) + 1;
        return original.apply(service, args);
      };
    }
    try {
      await fn();
    } finally {
      for (const [name, original] of originals) service[name] = original;
    }
    return counts;
  }

  /** Connections as an import would store them (the stores' own path, without schedules): they count like any other. */
  async function storeConnections(n: number, prefix: string) {
    for (let i = 0; i < n; i++) {
      const _id = randomUUID();
      const connection = await stack.core.stores.connections.create({
        _id,
        environment: 'dev',
        provider_config_key: 'luma',
        provider: 'luma',
        connection_id: `${prefix}-${i}`,
        auth_mode: 'API_KEY',
        credentials_encrypted: stack.core.cipher.seal({ type: 'API_KEY', apiKey: API_KEY }, sealedAt.connectionCredentials({ _id, environment: 'dev' })),
        connection_config: {},
        metadata: {},
        tags: {},
      });
      await stack.core.stores.syncs.ensure({
        environment: 'dev',
        connection: connection._id,
        connection_id: connection.connection_id,
        provider_config_key: 'luma',
        name: 'list-events',
        variant: 'base',
      });
    }
  }

  test('the status costs the same database reads and two Temporal counts, however many connections; deletes count out', async () => {
    async function measured() {
      const db = recordFilters(stack.core.mongo);
      let s!: Awaited<ReturnType<typeof status>>;
      const calls = await temporalCalls(async () => {
        s = await status();
      }).finally(() => db.stop());
      // What the status itself reads (the key check and the API's rate limit are every request's, and cached).
      const own = db.commands.filter((c) => !/^(environment|api_rate)/.test(c.collection));
      return { s, commands: own.map((c) => `${c.command} ${c.collection}`).sort(), calls };
    }
    const before = await measured();
    expect(before.s.connections.total).toBe(3);
    // Running and paused syncs: one count each, never a call per connection or schedule.
    expect(before.calls).toEqual({ countWorkflowExecutions: 2 });

    await storeConnections(25, 'bulk');
    const after = await measured();
    expect(after.s.connections).toEqual({ total: 28, by_auth_state: { ok: 27, needs_reauthorization: 1 } });
    expect(after.s.syncs).toMatchObject({ total: 28, by_last_state: { SUCCESS: 2, ERROR: 1, NEVER_RUN: 25 }, paused: 1, temporal_error: null });
    expect(after.calls).toEqual({ countWorkflowExecutions: 2 });
    // The same reads, not one more per connection (the request log's are the hour's, not the connections').
    expect(after.commands).toEqual(before.commands);
    expect(after.s.latest_errors).toEqual(before.s.latest_errors);

    // A deleted connection leaves the figures (the API's delete: its syncs' entries too).
    const deleted = await stack.api('DELETE', '/connections/bulk-0?provider_config_key=luma');
    expect(deleted.status).toBe(200);
    expect((await status()).syncs).toMatchObject({ total: 27, by_last_state: { NEVER_RUN: 24 } });
    expect((await status()).connections.total).toBe(27);
  });

  test('a schedule paused in the Temporal UI counts as paused (Temporal counts it, a moment later)', async () => {
    const id = syncScheduleId(stack.temporalIdPrefix, 'dev', 'luma', 'ok-1', 'list-events', 'base');
    const paused = async (want: number) => {
      for (const deadline = Date.now() + 15_000; ;) {
        const s = await status();
        if (s.syncs.paused === want || Date.now() > deadline) return s.syncs.paused;
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    await stack.temporal.schedule.getHandle(id).pause('operator');
    try {
      expect(await paused(2)).toBe(2);
    } finally {
      await stack.temporal.schedule.getHandle(id).unpause();
    }
    expect(await paused(1)).toBe(1);
  });
});
