import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** Helpers of tests/production/multi-process.test.ts: compiled processes, a TCP forwarder, a webhook endpoint, schedule arithmetic. */

const REPO = path.resolve(__dirname, '../..');
/** Lines kept of a process's output besides its warnings and errors (the workers log every run at info). */
const TAIL_LINES = 300;

export interface CompiledProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Resolves with the exit code (null when killed by a signal) once the process has ended. */
  exited: Promise<number | null>;
  /** The first JSON log line with this `msg`, waiting for it. */
  logLine(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** The last lines and every warning or error, for a failure message. */
  output(): string;
}

/** `node <build>/cli/weft.js <command>`: plain node, no tsx, the build's own workflow bundle. */
export function spawnCompiled(name: string, buildDir: string, command: 'api' | 'worker', env: NodeJS.ProcessEnv, logDir?: string): CompiledProcess {
  const child = spawn(process.execPath, [path.join(buildDir, 'cli', 'weft.js'), command], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Everything it prints, to a file of its own (a long run's diagnosis).
  const file = logDir ? createWriteStream(path.join(logDir, `${name}-${child.pid}.log`)) : null;
  if (file) child.once('exit', () => file.end());
  const tail: string[] = [];
  const notable: string[] = [];
  const found = new Map<string, Record<string, unknown>>();
  let partial = '';
  const onData = (chunk: Buffer) => {
    file?.write(chunk);
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      if (!line.startsWith('{')) {
        notable.push(line);
        continue;
      }
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (typeof parsed.msg === 'string' && !found.has(parsed.msg)) found.set(parsed.msg, parsed);
        if (typeof parsed.level === 'number' && parsed.level >= 40) notable.push(line);
      } catch {
        notable.push(line);
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output = () => `${name} (pid ${child.pid}): warnings/errors:\n${notable.slice(-50).join('\n')}\nlast lines:\n${tail.slice(-40).join('\n')}`;
  return {
    name,
    child,
    pid: child.pid as number,
    exited,
    output,
    async logLine(msg, timeoutMs = 90_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const hit = found.get(msg);
        if (hit) return hit;
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before logging "${msg}"\n${output()}`);
        if (Date.now() > end) throw new Error(`${name}: no "${msg}" within ${timeoutMs} ms\n${output()}`);
        await sleep(50);
      }
    },
  };
}

export function alive(p: CompiledProcess): boolean {
  return p.child.exitCode === null && p.child.signalCode === null;
}

/** A TCP forwarder to `target` that can be cut (listener closed, every connection destroyed) and restored on the same port. */
export interface Forwarder {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startForwarder(target: { host: string; port: number }): Promise<Forwarder> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const cut = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return { port, cut, restore: () => listen(port), close: () => (server.listening ? cut() : Promise.resolve()) };
}

/** One delivery as the app's endpoint saw it. */
export interface Delivery {
  id: string;
  type: string;
  connectionId: string | undefined;
  status: number;
  /** When it arrived (Date.now()). */
  at: number;
}

/**
 * The app's webhook endpoint: while `failing` is on, answers 503 to the first attempt of about
 * one event in five (chosen by its id); 204 to everything else; keeps every attempt in order.
 * (A failed attempt is retried after 5 s, the next after 5 minutes: an event whose earlier
 * attempt failed elsewhere, e.g. a timeout, must not be failed here again, so the test turns
 * failing off before it stops workers.)
 */
export async function startWebhookEndpoint(): Promise<{ url: string; deliveries: Delivery[]; failing: boolean; close(): Promise<void> }> {
  const deliveries: Delivery[] = [];
  const seen = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = header(req.headers, 'webhook-id');
      let body: { type?: string; connectionId?: string } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // counted below with type ''
      }
      const first = !seen.has(id);
      seen.add(id);
      const status = endpoint.failing && first && failsFirst(id) ? 503 : 204;
      deliveries.push({ id, type: body.type ?? '', connectionId: body.connectionId, status, at: Date.now() });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    deliveries,
    failing: true,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return endpoint;
}

function header(headers: IncomingHttpHeaders, name: string): string {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : (v ?? '');
}

function failsFirst(id: string): boolean {
  let h = 0;
  for (const ch of id) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h % 5 === 0;
}

/**
 * What the endpoint saw of one event id: exactly one 2xx, and it came last (every attempt
 * before it failed; nothing after it). Null when that holds, else what is wrong. The one
 * repeat the product allows (README, webhooks): a worker killed between its attempt's 2xx and
 * recording it; its claim lapses after two minutes and another worker sends the event again.
 * `killedAt` names that moment: a second 2xx is accepted only for a first 2xx that arrived
 * before it, sent again at least `leaseMs` later.
 */
export function deliveryProblem(attempts: Delivery[], killedAt?: { at: number; leaseMs: number }): string | null {
  const ok = attempts.filter((a) => a.status >= 200 && a.status < 300);
  if (ok.length === 0) return `never answered 2xx (${attempts.length} attempts)`;
  const lapsedClaim = ok.length === 2 && killedAt && ok[0].at <= killedAt.at && ok[1].at >= killedAt.at + killedAt.leaseMs;
  if (ok.length > 1 && !lapsedClaim) return `answered 2xx ${ok.length} times`;
  if (attempts[attempts.length - 1] !== ok[ok.length - 1]) return 'sent again after a 2xx';
  return null;
}

/** The fire time Temporal appends to a scheduled workflow's ID (`…-2026-11-28T04:50:30Z`). */
export function fireTimeOf(workflowId: string): number {
  const m = /-(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/.exec(workflowId);
  if (!m) throw new Error(`no fire time in workflow ID ${workflowId}`);
  return Date.parse(m[1]);
}

/**
 * The nominal fire times of an interval schedule whose frequency was set by a request sent at
 * `setFrom` and answered by `setTo`, up to `until`: Weft phases the interval from the moment
 * it builds the schedule (offset = now % every), Temporal fires on whole seconds and discards
 * times before the update, so the first fire is the first phase time at least `every - 1 s`
 * after `setFrom` (the one before it is at or before the update, when the request took less
 * than `every - 1 s`).
 */
export function dueTimes(opts: { every: number; phase: number; setFrom: number; setTo: number; until: number }): number[] {
  if (opts.setTo - opts.setFrom >= opts.every - 1_000)
    throw new Error(`the frequency request took ${opts.setTo - opts.setFrom} ms: its first fire is ambiguous`);
  const earliest = opts.setFrom + opts.every - 1_000;
  let t = Math.ceil((earliest - opts.phase) / opts.every) * opts.every + opts.phase;
  const out: number[] = [];
  for (; t < opts.until; t += opts.every) out.push(t);
  return out;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `fn` over `items`, at most `concurrency` at once, results in order. */
export async function inParallel<T, R>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}
