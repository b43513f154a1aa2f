import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AcmeSimulator {
  url: string;
  apiKey: string;
  /** The tasks it lists, as its API shapes them. */
  tasks: Array<{ task_id: string; title: string; state: 'open' | 'done'; updated: string }>;
  /** Every request id it answered with, in order. */
  requestIds: string[];
  /** Every API key it was sent (right or wrong). */
  keysSeen: string[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Acme's API as far as the test needs it: `GET /v1/me` and `GET /v1/tasks` (cursor pages of
 * `data` + `next_cursor`), both behind `x-acme-api-key`. A wrong key is refused with a 401
 * whose body echoes it, as careless APIs do; every answer carries `x-acme-request-id`.
 */
export function createAcmeSimulator(opts: { apiKey: string; taskCount: number }): AcmeSimulator {
  const tasks = Array.from({ length: opts.taskCount }, (_, i) => ({
    task_id: `task-${String(i + 1).padStart(4, '0')}`,
    title: `Task number ${i + 1}`,
    state: (i % 3 === 0 ? 'done' : 'open') as 'open' | 'done',
    updated: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
  }));
  const requestIds: string[] = [];
  const keysSeen: string[] = [];
  let server: Server | null = null;
  const sim: AcmeSimulator = {
    url: '',
    apiKey: opts.apiKey,
    tasks,
    requestIds,
    keysSeen,
    async start() {
      server = createServer((req, res) => handle(req, res));
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      sim.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async stop() {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const requestId = `acme-req-${requestIds.length + 1}`;
    requestIds.push(requestId);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-acme-request-id': requestId });
      res.end(JSON.stringify(body));
    };
    const key = req.headers['x-acme-api-key'];
    if (typeof key === 'string') keysSeen.push(key);
    if (key !== opts.apiKey) return send(401, { error: 'unauthorized', message: `API key ${String(key)} is not valid` });
    const url = new URL(req.url ?? '/', sim.url);
    if (req.method === 'GET' && url.pathname === '/v1/me') return send(200, { id: 'acct-1', name: 'Acme test account' });
    if (req.method === 'GET' && url.pathname === '/v1/tasks') {
      const limit = Math.min(Number(url.searchParams.get('limit') ?? 20), 100);
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const page = tasks.slice(start, start + limit);
      const next = start + limit < tasks.length ? String(start + limit) : null;
      return send(200, { data: page, next_cursor: next });
    }
    send(404, { error: 'not_found' });
  }
  return sim;
}
