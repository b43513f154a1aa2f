import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createLumaIntegration, startWeftStack } from '../tests/support/weft-stack';
import type { Figure } from './figure';
import { percentile } from './timing';
import { spawnWorkerProcess } from './worker-process';

const RUNS = 50;
const WARM_UP_RUNS = 3;

/**
 * From a sync run's end (its results committed: `sync_runs.finished_at`, the moment
 * `GET /records` shows them) to its `sync` webhook arriving at a local app endpoint, for an
 * incremental Luma run that changed one record; the worker in a process of its own, as
 * deployed. Same machine, same clock.
 */
export async function syncWebhookLatency(): Promise<Figure[]> {
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: string; modifiedAfter?: string };
      if (body.type === 'sync' && body.modifiedAfter) arrivals.set(body.modifiedAfter, at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;

  const stack = await startWeftStack({
    worker: false,
    luma: { seed: 9, eventCount: 5 },
    egressAllow: { webhooks: [receiverUrl] },
    temporalCallTimeoutMs: 10_000,
  });
  const worker = await spawnWorkerProcess(stack);
  try {
    await stack.api('PATCH', '/environment', { body: { webhook_url: receiverUrl } });
    await createLumaIntegration(stack);
    const connectionId = `latency-${randomBytes(4).toString('hex')}`;
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    if (created.status !== 201) throw new Error(`POST /connections: ${created.status} ${JSON.stringify(created.body)}`);
    await stack.waitForSync(connectionId, 'list-events');

    const latencies: number[] = [];
    for (let i = 0; i < WARM_UP_RUNS + RUNS; i++) {
      stack.luma.editEvents(1);
      const res = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: connectionId, syncs: ['list-events'] } });
      if (res.status !== 200) throw new Error(`POST /sync/trigger: ${res.status} ${JSON.stringify(res.body)}`);
      const summary = (await stack.waitForSync(connectionId, 'list-events')) as { runId: string };
      const run = await stack.core.stores.syncRuns.get(summary.runId);
      if (!run?.finished_at) throw new Error(`run ${summary.runId} has no end`);
      const key = run.started_at.toISOString();
      const deadline = Date.now() + 30_000;
      while (!arrivals.has(key)) {
        if (Date.now() > deadline) throw new Error(`no sync webhook for the run started at ${key}`);
        await new Promise((r) => setTimeout(r, 2));
      }
      if (i >= WARM_UP_RUNS) latencies.push(arrivals.get(key)! - run.finished_at.getTime());
    }
    return [
      {
        figure: 'sync_end_to_webhook',
        runs: RUNS,
        sync: 'luma list-events, one record changed per run',
        from: 'sync_runs.finished_at (results committed)',
        to: 'the sync webhook received by a local endpoint',
        p50_ms: percentile(latencies, 50),
        p99_ms: percentile(latencies, 99),
        max_ms: percentile(latencies, 100),
      },
    ];
  } finally {
    await worker.stop();
    await stack.shutdown();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
