import type http from 'node:http';
import { listenLocal, type LocalServer } from './http';

/**
 * The part every simulator shares: listening on 127.0.0.1, answering after a simulated
 * latency, and stopping cleanly (responses still waiting for their latency are dropped,
 * so a stopped simulator never writes to a closed socket or keeps jest alive).
 */
export class SimulatorHost {
  private server: LocalServer | null = null;
  private readonly pending = new Set<NodeJS.Timeout>();
  /** Delay before every response (ms). */
  latencyMs: number;
  private failRemaining = 0;
  private failStatus = 500;

  constructor(
    private readonly name: string,
    private readonly handler: http.RequestListener,
    latencyMs = 0,
  ) {
    this.latencyMs = latencyMs;
  }

  setLatency(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error('setLatency: ms must be a non-negative number');
    this.latencyMs = ms;
  }

  /** The next `n` requests fail with `status` (each simulator shapes its own error body). */
  failNext(n: number, status: number): void {
    if (!Number.isInteger(n) || n < 0) throw new Error('failNext: n must be a non-negative integer');
    if (!Number.isInteger(status) || status < 400 || status > 599) throw new Error('failNext: status must be 400–599');
    this.failRemaining = n;
    this.failStatus = status;
  }

  /** The status of the next injected failure, consuming it, or null when none is queued. */
  takeFailure(): number | null {
    if (this.failRemaining <= 0) return null;
    this.failRemaining -= 1;
    return this.failStatus;
  }

  /** Base URL while started, else null. */
  get url(): string | null {
    return this.server?.url ?? null;
  }

  async start(port = 0): Promise<string> {
    if (this.server) throw new Error(`${this.name} simulator already started`);
    this.server = await listenLocal(this.handler, port);
    return this.server.url;
  }

  async stop(): Promise<void> {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
    const s = this.server;
    this.server = null;
    if (s) await s.close();
  }

  /** Sends after the current latency (at once when 0). */
  respondAfter(send: () => void): void {
    const latencyMs = this.latencyMs;
    if (latencyMs <= 0) {
      send();
      return;
    }
    const t = setTimeout(() => {
      this.pending.delete(t);
      send();
    }, latencyMs);
    this.pending.add(t);
  }
}
