import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { State } from '@temporalio/worker';
import { closeConnectionsWhileDraining } from '../../api/middleware/draining';
import { healthRoutes } from '../../api/routers/health';
import { groupRouter } from '../../api/routing/mount';
import type { ApiDeps, ApiLifecycle } from '../../api/deps';
import { startWorkerHealthServer, workerReadiness, type WorkerHealthServer } from '../../app/worker/health-server';

/**
 * The probes on their own, with the database and Temporal replaced by functions the test
 * controls: liveness calls nothing, readiness names the part that is down and says when the
 * process is draining. tests/outage/ checks readiness against servers really stopped;
 * tests/production/multi-process.test.ts against compiled processes.
 */
type Check = () => Promise<unknown>;

function fakeDeps(parts: { database: Check; orchestrator: Check }, lifecycle?: ApiLifecycle): ApiDeps {
  return {
    stores: { db: { command: () => parts.database() } },
    temporal: {
      connection: { withDeadline: (_deadline: number, fn: () => Promise<unknown>) => fn() },
      workflowService: { getSystemInfo: () => parts.orchestrator() },
    },
    lifecycle,
  } as unknown as ApiDeps;
}

const ok: Check = async () => ({});
const down: Check = async () => {
  throw new Error('connection refused');
};
const silent: Check = () => new Promise(() => undefined);

describe('the API’s probes', () => {
  let server: Server;
  let url: string;
  const parts = { database: ok, orchestrator: ok };
  const lifecycle: ApiLifecycle = { shuttingDown: false };

  beforeAll(async () => {
    const app = express();
    const deps = fakeDeps({ database: () => parts.database(), orchestrator: () => parts.orchestrator() }, lifecycle);
    // As api/app.ts mounts them.
    app.use(closeConnectionsWhileDraining(lifecycle));
    app.use(groupRouter(healthRoutes, { deps, openApiDocument: () => ({}) as never }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  afterEach(() => {
    parts.database = ok;
    parts.orchestrator = ok;
    lifecycle.shuttingDown = false;
  });

  async function get(path: string) {
    const res = await fetch(`${url}${path}`);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), connection: res.headers.get('connection'), body: await res.json() };
  }

  test('GET /health (liveness) answers 200 without calling the database or Temporal, even while both are down', async () => {
    let calls = 0;
    parts.database = async () => {
      calls++;
      throw new Error('down');
    };
    parts.orchestrator = parts.database;
    expect(await get('/health')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(calls).toBe(0);
  });

  test('GET /ready answers 200 when both are reachable', async () => {
    expect(await get('/ready')).toMatchObject({ status: 200, retryAfter: null, body: { status: 'ok', database: 'ok', orchestrator: 'ok' } });
  });

  test.each([
    ['the database refuses', { database: down }, { database: 'unavailable', orchestrator: 'ok' }],
    ['Temporal refuses', { orchestrator: down }, { database: 'ok', orchestrator: 'unavailable' }],
    ['Temporal does not answer', { orchestrator: silent }, { database: 'ok', orchestrator: 'unavailable' }],
    ['both are down', { database: down, orchestrator: silent }, { database: 'unavailable', orchestrator: 'unavailable' }],
  ])('GET /ready answers 503 with Retry-After naming the part that is down: %s', async (_name, failing, expected) => {
    Object.assign(parts, failing);
    const res = await get('/ready');
    expect(res).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^\d+$/), body: { status: 'unavailable', ...expected } });
  });

  test('while the process drains, GET /ready answers 503 shutting_down and every answer closes its connection; liveness stays 200', async () => {
    lifecycle.shuttingDown = true;
    const ready = await get('/ready');
    expect(ready).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^\d+$/), connection: 'close' });
    expect(ready.body).toEqual({ status: 'shutting_down', database: 'ok', orchestrator: 'ok' });
    expect(await get('/health')).toMatchObject({ status: 200, connection: 'close', body: { status: 'ok' } });
  });
});

describe('the worker’s probes (WEFT_WORKER_HEALTH_PORT)', () => {
  test.each<[State | null, State | null, string]>([
    [null, null, 'starting'],
    ['INITIALIZED', 'INITIALIZED', 'starting'],
    ['RUNNING', 'INITIALIZED', 'starting'],
    ['RUNNING', 'RUNNING', 'ok'],
    ['STOPPING', 'RUNNING', 'shutting_down'],
    ['DRAINING', 'DRAINED', 'shutting_down'],
    ['STOPPED', 'STOPPED', 'shutting_down'],
    ['RUNNING', 'FAILED', 'failed'],
  ])('sync worker %s, action worker %s: %s', (sync, action, status) => {
    expect(workerReadiness(sync, action)).toEqual({ status, sync_worker: sync, action_worker: action });
  });

  let server: WorkerHealthServer;
  let states: [State | null, State | null] = [null, null];
  beforeAll(async () => {
    server = await startWorkerHealthServer({ port: 0, host: '127.0.0.1', readiness: () => workerReadiness(...states) });
  });
  afterAll(() => server.close());

  test('GET /health is 200 at once; GET /ready 503 until both workers run, 200 then, 503 shutting_down once they stop', async () => {
    const get = async (path: string, method = 'GET') => {
      const res = await fetch(`${server.url}${path}`, { method });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() };
    };
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await get('/health')).toMatchObject({ status: 200, text: '{"status":"ok"}' });
    const starting = await get('/ready');
    expect(starting).toMatchObject({ status: 503, retryAfter: expect.stringMatching(/^\d+$/) });
    expect(JSON.parse(starting.text)).toEqual({ status: 'starting', sync_worker: null, action_worker: null });
    states = ['RUNNING', 'RUNNING'];
    expect(await get('/ready')).toMatchObject({ status: 200, retryAfter: null });
    // HEAD, as some load balancers probe: the status without a body.
    expect(await get('/ready', 'HEAD')).toMatchObject({ status: 200, text: '' });
    states = ['STOPPING', 'STOPPING'];
    expect(JSON.parse((await get('/ready')).text)).toMatchObject({ status: 'shutting_down' });
    expect((await get('/nothing')).status).toBe(404);
    expect((await get('/ready', 'POST')).status).toBe(405);
  });

  test('a port already in use stops the start with worker_health_port_busy', async () => {
    const port = Number(new URL(server.url).port);
    await expect(startWorkerHealthServer({ port, host: '127.0.0.1', readiness: () => workerReadiness(null, null) })).rejects.toThrow(
      expect.objectContaining({ code: 'worker_health_port_busy' }),
    );
  });
});
