import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { State } from '@temporalio/worker';
import { WeftError } from '../../common/errors';

/** What a worker process is doing, as its readiness reports it. */
export interface WorkerReadiness {
  /** `ok` (200): both Temporal workers run; otherwise 503: `starting`, `shutting_down` or `failed`. */
  status: 'ok' | 'starting' | 'shutting_down' | 'failed';
  /** Each Temporal worker's state (Worker.getState()), or `null` before it exists. */
  sync_worker: State | null;
  action_worker: State | null;
}

/** Seconds a probe is told to wait after a 503 (as the API's readiness says). */
const RETRY_AFTER_SECONDS = 5;

/** The readiness of a process whose two workers are in these states (null: not built yet). */
export function workerReadiness(sync: State | null, action: State | null): WorkerReadiness {
  const states = [sync, action];
  const status = states.every((s) => s === 'RUNNING')
    ? 'ok'
    : states.includes('FAILED')
      ? 'failed'
      : states.some((s) => s === 'STOPPING' || s === 'DRAINING' || s === 'DRAINED' || s === 'STOPPED')
        ? 'shutting_down'
        : 'starting';
  return { status, sync_worker: sync, action_worker: action };
}

export interface WorkerHealthServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The worker process's probes (WEFT_WORKER_HEALTH_PORT; off unless set), plain HTTP, no key:
 * - `GET /health`, liveness: 200 `{ status: "ok" }` while the event loop runs (checks nothing);
 * - `GET /ready`, readiness: 200 once both Temporal workers (sync and action) run, 503 with
 *   Retry-After while they start, after a stop signal while they drain, or if one failed.
 * Started before the workers are built, so a slow start reads as alive and not ready.
 */
export async function startWorkerHealthServer(opts: { port: number; host: string; readiness: () => WorkerReadiness }): Promise<WorkerHealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
      res.end(req.method === 'HEAD' ? undefined : text);
    };
    if (path !== '/health' && path !== '/ready') return answer(404, { error: { code: 'not_found', message: 'The worker serves GET /health and GET /ready.' } });
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return answer(405, { error: { code: 'method_not_allowed', message: 'GET or HEAD.' } }, { allow: 'GET, HEAD' });
    if (path === '/health') return answer(200, { status: 'ok' });
    const readiness = opts.readiness();
    if (readiness.status === 'ok') return answer(200, readiness);
    return answer(503, readiness, { 'retry-after': String(RETRY_AFTER_SECONDS) });
  });
  // A probe's connection is not kept open past a few seconds of idleness.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new WeftError(
              'worker_health_port_busy',
              `Port ${opts.port} on ${opts.host}, set as WEFT_WORKER_HEALTH_PORT, is already in use. Choose another (0: any free port).`,
            )
          : err,
      );
    server.once('error', onError);
    server.listen(opts.port, opts.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
