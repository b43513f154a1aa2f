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

  constructor(
    private readonly name: string,
    private readonly handler: http.RequestListener,
  ) {}

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

  /** Sends after `latencyMs` (at once when 0). */
  respondAfter(latencyMs: number, send: () => void): void {
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
