import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver got: its method, path and query, headers and raw body. */
export interface ReceivedRequest {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/**
 * A webhook receiver on 127.0.0.1 (a free port) for the simulators' deliveries. It records
 * every request and answers with `answer(request)` (default 200 "ok"); `hold()` keeps answers
 * back until `release()`, so a test can see what is still pending. `close()` drops
 * connections, so nothing outlives the test.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  answer: (r: ReceivedRequest) => Answer | Promise<Answer> = () => ({ status: 200, body: 'ok' });
  /** Requests that arrived while an earlier one was still unanswered (the receiver's own concurrency). */
  maxConcurrent = 0;
  private active = 0;
  private held: Array<() => void> | null = null;
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  private server: http.Server | null = null;
  url = '';

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    this.release();
    const s = this.server;
    this.server = null;
    if (!s) return;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  }

  /** Answers nothing until `release()`. */
  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const go of held) go();
  }

  /** Resolves once `n` requests have arrived. */
  waitFor(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: ReceivedRequest = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', 'http://127.0.0.1'),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      this.requests.push(r);
      this.active++;
      this.maxConcurrent = Math.max(this.maxConcurrent, this.active);
      for (const w of this.waiters.filter((x) => this.requests.length >= x.n)) w.resolve();
      this.waiters = this.waiters.filter((x) => this.requests.length < x.n);
      const go = async () => {
        const a = await this.answer(r);
        // Yield once so a sender that does not wait for this answer would show up as concurrency.
        await new Promise((resolve) => setImmediate(resolve));
        this.active--;
        if (res.destroyed) return;
        res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
        res.end(a.body ?? '');
      };
      if (this.held) this.held.push(() => void go());
      else void go();
    });
  }
}
