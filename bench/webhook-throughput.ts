import { queueWebhook, type OutboxDeps } from '../webhooks/outbox';
import { startScriptedReceiver, stackOutboxDeps, type ScriptedReceiver } from '../tests/support/scripted-receiver';
import { startWeftStack } from '../tests/support/weft-stack';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { databaseCpuClock } from './database-cpu';
import type { Figure } from './figure';
import { now, percentile, round1 } from './timing';
import { spawnWorkerProcess } from './worker-process';

const EVENTS = 1_000;
/** Events being stored at once: the API's requests and the workers' activities queue events side by side. */
const QUEUE_CONCURRENCY = 50;
const WARM_UP_EVENTS = 20;

/**
 * Webhook throughput from the outbox to a 2xx: EVENTS events queued as the product queues
 * them (queueWebhook: stored, then handed to their webhookDelivery workflows), delivered by a
 * worker in a process of its own to a receiver on 127.0.0.1 answering 200 at once. Measured
 * from the first queue call to the last 2xx; also each event's queue-to-2xx latency.
 */
export async function webhookThroughput(events = EVENTS): Promise<Figure[]> {
  const app = await startScriptedReceiver();
  const stack = await startWeftStack({ worker: false, egressAllow: { webhooks: [app.url] }, temporalCallTimeoutMs: 10_000 });
  const worker = await spawnWorkerProcess(stack);
  try {
    const patched = await stack.api('PATCH', '/environment', { body: { webhook_url: `${app.url}/hooks` } });
    if (patched.status !== 200) throw new Error(`PATCH /environment: ${patched.status} ${JSON.stringify(patched.body)}`);
    await stack.api('POST', '/environment/webhook-signing-key/rotate');
    const deps = stackOutboxDeps(stack);

    // The worker's first workflow and activity tasks (isolate, caches, connections) are not the figure.
    await deliverBatch(deps, app, 'warm-up', WARM_UP_EVENTS);
    app.received.length = 0;

    // CPU seconds of each process over the batch: what one event costs where, and so where the ceiling is.
    const clocks: Record<string, (() => number) | null> = {
      temporal: temporalCpuClock(stack.env.TEMPORAL_ADDRESS),
      ferretdb: databaseCpuClock(stack.env.MONGODB_URI),
      worker: worker.child.pid ? processCpuClock(String(worker.child.pid)) : null,
      bench: () => (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    };
    const cpuBefore = Object.fromEntries(Object.entries(clocks).map(([k, c]) => [k, c?.() ?? NaN]));
    const batch = await deliverBatch(deps, app, 'measured', events);
    const cpuMsPerEvent = Object.fromEntries(Object.entries(clocks).map(([k, c]) => [k, round1((((c?.() ?? NaN) - cpuBefore[k]) * 1000) / events)]));
    const cpuMsTotal = Object.values(cpuMsPerEvent).reduce((a, b) => a + b, 0);
    const ids = new Set(app.received.map((r) => String(r.headers['webhook-id'])));
    const eventsPerS = (events / batch.totalMs) * 1000;
    return [
      {
        figure: 'webhook_throughput',
        events,
        queue_concurrency: QUEUE_CONCURRENCY,
        receiver: '127.0.0.1, answers 200 at once',
        events_per_s: round1(eventsPerS),
        first_queue_to_last_2xx_ms: round1(batch.totalMs),
        queueing_ms: round1(batch.queueingMs),
        queue_to_2xx_p50_ms: percentile(batch.latencies, 50),
        queue_to_2xx_p99_ms: percentile(batch.latencies, 99),
        delivered_ids: ids.size,
        requests: app.received.length,
        // The bench process is the API's part (queueWebhook) and the receiver.
        cpu_ms_per_event: cpuMsPerEvent,
        cores: availableParallelism(),
        // Were these processes alone on the machine at 100% of every core.
        cpu_bound_ceiling_events_per_s: round1((availableParallelism() * 1000) / cpuMsTotal),
        load_average_1m: round1(loadavg()[0]),
        target: 'events_per_s >= 200',
        pass: eventsPerS >= 200 && ids.size === events,
      },
    ];
  } finally {
    await worker.stop();
    await stack.shutdown();
    await app.close();
  }
}

interface Batch {
  totalMs: number;
  queueingMs: number;
  /** Per event: from its queue call to its 2xx. */
  latencies: number[];
}

async function deliverBatch(deps: OutboxDeps, app: ScriptedReceiver, label: string, count: number): Promise<Batch> {
  const queuedAt = new Map<string, number>();
  const start = now();
  const startEpoch = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(QUEUE_CONCURRENCY, count) }, async () => {
      while (next < count) {
        const i = next++;
        const at = Date.now();
        const queued = await queueWebhook(deps, {
          environment: 'dev',
          type: 'sync',
          gate: null,
          payload: {
            from: 'weft',
            type: 'sync',
            connectionId: `${label}-${i % 20}`,
            providerConfigKey: 'luma',
            syncName: 'list-events',
            model: 'CalendarEvent',
            success: true,
          },
        });
        if (!queued.id) throw new Error(`event not queued: ${queued.skipped}`);
        queuedAt.set(queued.id, at);
      }
    }),
  );
  const queueingMs = now() - start;
  const deadline = Date.now() + 10 * 60_000;
  const delivered = () => app.received.filter((r) => r.status === 200 && queuedAt.has(String(r.headers['webhook-id'])));
  while (new Set(delivered().map((r) => r.headers['webhook-id'])).size < count) {
    if (Date.now() > deadline) throw new Error(`${label}: ${delivered().length} of ${count} events delivered after 10 minutes`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const all = delivered();
  const lastAt = Math.max(...all.map((r) => r.at));
  return { totalMs: lastAt - startEpoch, queueingMs, latencies: all.map((r) => r.at - queuedAt.get(String(r.headers['webhook-id']))!) };
}

/** CPU seconds (user + system) a process has used so far, from /proc. */
function processCpuClock(pid: string): () => number {
  return () => {
    // Fields after the command name, which is in parentheses and may hold spaces; USER_HZ is 100.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
}

/** The local Temporal dev server serving `address` (its `--port`), or null (an external one). */
function temporalCpuClock(address: string): (() => number) | null {
  const port = address.split(':').pop();
  const pid = readdirSync('/proc').find((p) => {
    if (!/^\d+$/.test(p)) return false;
    try {
      const args = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      return /temporal$/.test(args[0]) && args[args.indexOf('--port') + 1] === port;
    } catch {
      return false;
    }
  });
  return pid ? processCpuClock(pid) : null;
}
