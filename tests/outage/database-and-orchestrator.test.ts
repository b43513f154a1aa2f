import { createLumaIntegration, createOneDriveIntegration, connectOneDrive, readAllRecords, startWeftStack, type WeftStack } from '../support/weft-stack';
import { syncWorkflowId, reconcileSyncSchedules } from '../../control';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { startRestartableServers, type RestartableServers } from './servers';

/**
 * MongoDB and Temporal go away under a running API and worker, and come back. While one is
 * down, every request that needs it is answered quickly with 503 and Retry-After (never a
 * 500, never a hang); once it is back, the same API and worker carry on, restarted by
 * nobody, with nothing lost.
 */

/** The issue asks for "about 2 s"; the server-selection and call timeouts are 1.5 s. */
const OUTAGE_ANSWER_MS = 2_500;
const EVENTS = 200;

describe('outages of MongoDB and Temporal', () => {
  let servers: RestartableServers;
  let stack: WeftStack;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    servers = await startRestartableServers();
    hooks = await startWebhookReceiver();
    stack = await startWeftStack({ servers, luma: { eventCount: EVENTS }, graph: {}, egressAllow: { webhooks: [hooks.url] }, temporalCallTimeoutMs: 1_500 });
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: hooks.url } })).status).toBe(200);
    await createLumaIntegration(stack);
    await createOneDriveIntegration(stack);
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(created.status).toBe(201);
    expect(((await stack.waitForSync('user-1', 'list-events')) as any).result.CalendarEvent.added).toBe(EVENTS);
    expect((await connectOneDrive(stack, 'drive-user')).status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    // Both servers must be up for a clean shutdown (the stack drops its database).
    await servers?.startMongo().catch(() => undefined);
    await servers?.startTemporal().catch(() => undefined);
    // Let Temporal calls still in their retry loop reach their deadline (1.5 s) before the
    // channel closes: a retry timer firing on a closed channel throws into whichever test
    // file runs next in this jest worker.
    await new Promise((r) => setTimeout(r, 2_000));
    await stack?.shutdown();
    await servers?.destroy();
    await hooks?.close();
  }, 60_000);

  /** A request, timed. */
  async function timed(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
    const started = Date.now();
    const res = await stack.api(method, path, opts);
    return { ...res, ms: Date.now() - started };
  }

  async function timedRaw(path: string) {
    const started = Date.now();
    const res = await fetch(`${stack.apiUrl}${path}`, { headers: { accept: 'text/html' } });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      type: res.headers.get('content-type'),
      text: await res.text(),
      ms: Date.now() - started,
    };
  }

  /** GET /ready (readiness), with the Retry-After header. */
  async function health(path = '/ready') {
    const started = Date.now();
    const res = await fetch(`${stack.apiUrl}${path}`);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json(), ms: Date.now() - started };
  }

  async function until<T>(attempt: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await attempt();
      if (done(v) || Date.now() > deadline) return v;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  const connectionHeaders = { 'connection-id': 'user-1', 'provider-config-key': 'luma' };
  const actionHeaders = { 'connection-id': 'drive-user', 'provider-config-key': 'one-drive' };

  test('MongoDB down: 503 database_unavailable with Retry-After within ~2 s; back up: the same API and worker carry on', async () => {
    expect(await health()).toMatchObject({ status: 200, body: { status: 'ok', database: 'ok', orchestrator: 'ok' } });

    // A run in flight when the database goes (its page is on the way, slowly): its activity
    // fails on the database and Temporal retries it. The page takes longer than stopping
    // FerretDB does (about 3 s, serving all the while), so the run reaches the database only
    // once it is gone (with 1.5 s, a loaded machine let the run finish before the stop); and
    // less than the activity's 10 s heartbeat timeout.
    stack.luma.setLatency(7_000);
    stack.luma.resetStats();
    expect((await timed('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } })).status).toBe(200);
    const run = stack.waitForSync('user-1', 'list-events');
    await until(
      async () => stack.luma.requestLog().some((e) => e.path.endsWith('/list-events')),
      (seen) => seen,
      15_000,
    );
    await servers.stopMongo();

    const requests = [
      () => timed('GET', '/connections'),
      () => timed('GET', '/records?model=CalendarEvent', { headers: connectionHeaders }),
      () =>
        timed('POST', '/connections', {
          body: { provider_config_key: 'luma', connection_id: 'user-2', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
        }),
      () => timed('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } }),
      () => timed('GET', '/v1/list-drives', { headers: actionHeaders }),
      () => timed('GET', '/environment'),
    ];
    for (const request of requests) {
      const res = await request();
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual({ code: 'database_unavailable', message: expect.any(String) });
      expect(res.ms).toBeLessThanOrEqual(OUTAGE_ANSWER_MS);
    }
    // The header, on one of them (stack.api hides headers).
    const raw = await fetch(`${stack.apiUrl}/connections`, { headers: { authorization: `Bearer ${stack.keys.dev}` } });
    expect(raw.status).toBe(503);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThan(0);
    // A browser page says so as a page.
    const page = await timedRaw('/connect?session_token=weft_connect_whatever');
    expect(page).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^\d+$/) });
    expect(page.type).toMatch(/text\/html/);
    expect(page.text).toContain('database_unavailable');
    expect(page.ms).toBeLessThanOrEqual(OUTAGE_ANSWER_MS);

    const down = await health();
    expect(down).toMatchObject({
      status: 503,
      retryAfter: expect.stringMatching(/^\d+$/),
      body: { status: 'unavailable', database: 'unavailable', orchestrator: 'ok' },
    });
    expect(down.ms).toBeLessThanOrEqual(OUTAGE_ANSWER_MS);
    // Liveness stays 200: restarting the API would not bring the database back.
    expect(await health('/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(stack.logs.join('\n')).not.toMatch(/"level":50[^\n]*unhandled API error/);

    await new Promise((r) => setTimeout(r, 2_000));
    await servers.startMongo();
    stack.luma.setLatency(0);

    // No restart of anything: the next requests succeed.
    // At once, normally; at most the watch's 15 s if the driver's monitor stalled (see store/database-watch.ts).
    const back = await until(
      () => timed('GET', '/connections'),
      (r) => r.status === 200,
      25_000,
    );
    if (back.status !== 200)
      console.error(
        'outage test: still unavailable after the restart:',
        stack.logs
          .filter((l) => l.includes('"dependency":"database"'))
          .slice(-4)
          .join('\n'),
      );
    expect(back.status).toBe(200);
    expect(back.body.connections.map((c: any) => c.connection_id).sort()).toEqual(['drive-user', 'user-1']);
    expect((await health()).body).toEqual({ status: 'ok', database: 'ok', orchestrator: 'ok' });
    // The run that the outage interrupted was retried by Temporal and finished; the records are all there.
    const summary: any = await run;
    expect(summary.result.CalendarEvent).toEqual({ added: 0, updated: 0, deleted: 0 });
    const history = await stack.temporal.workflow
      .getHandle(syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', 'user-1', 'list-events', 'base'))
      .fetchHistory();
    const attempts = history.events!.map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0);
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
    expect(await readAllRecords(stack, 'user-1', 'CalendarEvent')).toHaveLength(EVENTS);
    const created = await timed('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'user-2', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(created.status).toBe(201);
    expect(((await stack.waitForSync('user-2', 'list-events')) as any).result.CalendarEvent.added).toBe(EVENTS);
  }, 180_000);

  test('Temporal down: 503 orchestrator_unavailable with Retry-After within ~2 s; back up: syncs and actions run again', async () => {
    await servers.stopTemporal();

    const needsTemporal = [
      () => timed('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } }),
      () => timed('POST', '/action/trigger', { headers: actionHeaders, body: { action_name: 'list-drives', input: {} } }),
      () => timed('POST', '/action/trigger', { headers: { ...actionHeaders, 'x-async': 'true' }, body: { action_name: 'list-drives', input: {} } }),
      () => timed('GET', '/v1/list-drives', { headers: actionHeaders }),
      () => timed('GET', '/action/00000000-0000-4000-8000-000000000000'),
    ];
    for (const request of needsTemporal) {
      const res = await request();
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual({ code: 'orchestrator_unavailable', message: expect.any(String) });
      expect(res.ms).toBeLessThanOrEqual(OUTAGE_ANSWER_MS);
    }
    const raw = await fetch(`${stack.apiUrl}/sync/trigger`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] }),
    });
    expect(raw.status).toBe(503);
    expect(Number(raw.headers.get('retry-after'))).toBeGreaterThan(0);
    // A connection stored while Temporal is away (its first sync cannot start: 503) is still
    // reported to the app, from POST /connections and from a connect flow alike: the event is
    // stored now and delivered by the worker's dispatcher, whose first attempt needs no workflow.
    const imported = await timed('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'while-temporal-down', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(imported).toMatchObject({ status: 503, body: { error: { code: 'orchestrator_unavailable' } } });
    const outbox = stack.core.stores.db.collection('webhook_outbox');
    expect(await outbox.countDocuments({ type: 'auth', 'payload.connectionId': 'while-temporal-down' })).toBe(1);
    const session = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: ['luma'] } });
    const viaFlow = await fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${session.body.data.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiKey: 'sandbox-luma-api-key' }),
    });
    expect(viaFlow.status).toBe(503);
    const [stored] = (await stack.api('GET', '/connections?integrationId=luma')).body.connections.filter(
      (c: any) => !['user-1', 'user-2', 'while-temporal-down'].includes(c.connection_id),
    );
    expect(await outbox.countDocuments({ type: 'auth', 'payload.connectionId': stored.connection_id })).toBe(1);
    // Delivered while Temporal is still away.
    await hooks.waitFor(
      (w) => w.body.type === 'auth' && w.body.connectionId === 'while-temporal-down' && w.body.operation === 'creation' && w.body.success === true,
      30_000,
    );
    await hooks.waitFor((w) => w.body.type === 'auth' && w.body.connectionId === stored.connection_id && w.body.success === true, 30_000);
    // Deleting a connection would leave its syncs running: refused, nothing deleted.
    const deleting = await timed('DELETE', '/connections/user-1?provider_config_key=luma');
    expect(deleting).toMatchObject({ status: 503, body: { error: { code: 'orchestrator_unavailable' } } });
    expect((await stack.api('GET', '/connections?connectionId=user-1')).body.connections).toHaveLength(1);
    // What does not need Temporal keeps working.
    expect((await timed('GET', '/records?model=CalendarEvent&limit=1', { headers: connectionHeaders })).status).toBe(200);
    const down = await health();
    expect(down).toMatchObject({ status: 503, body: { status: 'unavailable', database: 'ok', orchestrator: 'unavailable' } });
    expect(down.ms).toBeLessThanOrEqual(OUTAGE_ANSWER_MS);
    expect(await health('/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    // The integration status answers what the database knows, and says what Temporal could not count.
    const status = await timed('GET', '/integrations/luma/status');
    expect(status.status).toBe(200);
    expect(status.ms).toBeLessThanOrEqual(OUTAGE_ANSWER_MS);
    expect(status.body.data.connections.total).toBeGreaterThanOrEqual(2);
    expect(status.body.data.syncs).toMatchObject({
      paused: null,
      paused_complete: false,
      by_last_state: { RUNNING: null },
      temporal_error: { code: 'orchestrator_unavailable', message: expect.any(String) },
    });

    // A worker starting now: its schedule reconcile meets Temporal away, retries, and ends once it is back.
    const reconciling = reconcileSyncSchedules(
      {
        temporal: stack.temporal,
        registry: stack.core.registry,
        stores: stack.core.stores,
        settings: { temporalIdPrefix: stack.temporalIdPrefix, syncTaskQueue: stack.taskQueue, heartbeatTimeoutMs: 10_000 },
      },
      { retryDelayMs: 1_500 },
    );
    await servers.startTemporal();
    const reconciled = await reconciling;
    expect(reconciled.retried).toBeGreaterThan(0);
    expect(reconciled).toMatchObject({ failed: 0 });
    expect(reconciled.checked).toBeGreaterThanOrEqual(2);

    const trigger = await until(
      () => timed('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } }),
      (r) => r.status === 200,
      15_000,
    );
    expect(trigger.status).toBe(200);
    // The worker rode out the outage: it picks up the new run, and the action.
    expect(((await stack.waitForSync('user-1', 'list-events')) as any).result.CalendarEvent).toEqual({ added: 0, updated: 0, deleted: 0 });
    const action = await timed('POST', '/action/trigger', { headers: actionHeaders, body: { action_name: 'list-drives', input: {} } });
    expect(action.status).toBe(200);
    expect(action.body.drives.map((d: any) => d.id).sort()).toEqual(
      stack.graph
        .drives()
        .map((d) => d.id)
        .sort(),
    );
    expect((await health()).body).toEqual({ status: 'ok', database: 'ok', orchestrator: 'ok' });
  }, 180_000);
});
