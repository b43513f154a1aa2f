import { temporal as proto } from '@temporalio/proto';
import { syncWorkflowId } from '../control';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../tests/support/weft-stack';
import { countCommands, difference, type CommandCounts } from './command-counter';
import { databaseCpuClock, pidCpuClock, temporalCpuClock } from './database-cpu';
import type { Figure } from './figure';
import { spawnWorkerProcess } from './worker-process';

/** The sync: 250 Luma events, three pages of 100. */
const EVENTS = 250;
/** Far above what the bench sends, so no limit (Luma's or Weft's) paces it. */
const HIGH_RATE_LIMIT = { requests: 100_000, window_ms: 60_000 };
/** Connections whose runs are counted one at a time, each command attributed to its phase. */
const COUNTED_RUNS = 10;
/** Requests in flight at once while connections are made and runs triggered, as an app's back end. */
const IN_FLIGHT = 10;

/**
 * What one sync run costs when nothing changed: `npm run bench -- runs [connections]`. A
 * 250-event Luma sync, each connection with a Luma account (API key) of its own, every
 * connection synced once first; then
 * - counted, COUNTED_RUNS runs one after another with the worker in the bench's process:
 *   the database commands of the trigger request and of the run (by command and
 *   collection), documents read and written, and the run's Temporal tasks (its history);
 * - timed, a no-change run of every connection, IN_FLIGHT triggers at a time, with the
 *   worker in a process of its own (as deployed): CPU per run of each process (FerretDB, the
 *   Temporal dev server, the worker, and the bench's own, which is the API, the Luma
 *   simulator and the client) and runs per second. A run's end is read from Temporal (its
 *   workflow result), not by polling the API.
 */
export async function runCostFigures(connections = 200): Promise<Figure[]> {
  const keys = Array.from({ length: Math.max(connections, COUNTED_RUNS) }, (_, i) => `bench-luma-key-${i}`);
  const luma = {
    seed: 11,
    eventCount: EVENTS,
    apiKeys: keys,
    rateLimit: { limit: HIGH_RATE_LIMIT.requests, windowMs: HIGH_RATE_LIMIT.window_ms, lockoutMs: 0 },
  };
  const figures: Figure[] = [];

  const counted = await startWeftStack({ luma, monitorCommands: true, temporalCallTimeoutMs: 30_000 });
  try {
    await createLumaIntegration(counted, { rate_limit: HIGH_RATE_LIMIT });
    const ids = keys.slice(0, COUNTED_RUNS).map((_, i) => `counted-${i}`);
    await connectAll(counted, ids, keys);
    progress(`${ids.length} connections made; waiting for their first runs`);
    await Promise.all(ids.map((id) => runResult(counted, id)));
    progress('first runs done; counting');
    const counter = countCommands(counted.core.mongo);
    const trigger: CommandCounts[] = [];
    const run: CommandCounts[] = [];
    const tasks: Array<{ workflowTasks: number; activities: number; events: number }> = [];
    for (const id of ids) {
      const before = counter.snapshot();
      await triggerRun(counted, id);
      const triggered = counter.snapshot();
      const summary = await runResult(counted, id);
      if (summary.changed !== false) throw new Error(`a run that should change nothing changed: ${JSON.stringify(summary)}`);
      trigger.push(difference(triggered, before));
      run.push(difference(counter.snapshot(), triggered));
      tasks.push(await temporalTasks(counted, id));
    }
    counter.stop();
    figures.push({
      figure: 'no_change_run_database_work',
      runs: ids.length,
      events: EVENTS,
      trigger_request: mean(trigger),
      run: mean(run),
      temporal_per_run: {
        workflow_tasks: tasks.reduce((s, t) => s + t.workflowTasks, 0) / tasks.length,
        activities: tasks.reduce((s, t) => s + t.activities, 0) / tasks.length,
        history_events: tasks.reduce((s, t) => s + t.events, 0) / tasks.length,
      },
    });
  } finally {
    await counted.shutdown();
  }

  const timed = await startWeftStack({ luma, worker: false, temporalCallTimeoutMs: 30_000 });
  const worker = await spawnWorkerProcess(timed);
  try {
    await createLumaIntegration(timed, { rate_limit: HIGH_RATE_LIMIT });
    const ids = keys.slice(0, connections).map((_, i) => `timed-${i}`);
    await connectAll(timed, ids, keys);
    progress(`${ids.length} connections made; waiting for their first runs`);
    await Promise.all(ids.map((id) => runResult(timed, id)));
    progress('first runs done; timing');
    const clocks = {
      database: databaseCpuClock(timed.env.MONGODB_URI),
      temporal: temporalCpuClock(timed.env.TEMPORAL_ADDRESS),
      worker: pidCpuClock(worker.child.pid as number),
      bench: () => process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    };
    const read = () => Object.fromEntries(Object.entries(clocks).map(([k, c]) => [k, c ? c() : NaN]));
    const before = read();
    const started = performance.now();
    await inBatches(ids, IN_FLIGHT, async (id) => {
      await triggerRun(timed, id);
      const summary = await runResult(timed, id);
      if (summary.changed !== false) throw new Error(`a run that should change nothing changed: ${JSON.stringify(summary)}`);
    });
    const seconds = (performance.now() - started) / 1000;
    const after = read();
    const perRunMs = Object.fromEntries(Object.keys(clocks).map((k) => [k, round(((after[k] - before[k]) * 1000) / ids.length)]));
    const total = Object.values(perRunMs).reduce((s, v) => s + (Number.isFinite(v) ? v : 0), 0);
    figures.push({
      figure: 'no_change_run_cpu',
      connections: ids.length,
      in_flight: IN_FLIGHT,
      runs_per_s: round(ids.length / seconds),
      cpu_ms_per_run: { ...perRunMs, all: round(total) },
      note: 'bench = the API, the Luma simulator and the client in one process; worker in a process of its own',
    });
  } finally {
    await worker.stop();
    await timed.shutdown();
  }
  return figures;
}

async function connectAll(stack: WeftStack, ids: string[], keys: string[]): Promise<void> {
  await inBatches(ids, IN_FLIGHT, async (id) => {
    const res = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: keys[ids.indexOf(id)] } },
    });
    if (res.status !== 201) throw new Error(`POST /connections: ${res.status} ${JSON.stringify(res.body)}`);
  });
}

async function triggerRun(stack: WeftStack, connectionId: string): Promise<void> {
  const res = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: connectionId, syncs: ['list-events'] } });
  if (res.status !== 200) throw new Error(`POST /sync/trigger: ${res.status} ${JSON.stringify(res.body)}`);
}

/** The connection's latest run's summary, once it has ended (Temporal's long poll: no database reads). */
async function runResult(stack: WeftStack, connectionId: string): Promise<{ changed?: boolean }> {
  const id = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');
  return stack.temporal.workflow.getHandle(id).result();
}

async function temporalTasks(stack: WeftStack, connectionId: string): Promise<{ workflowTasks: number; activities: number; events: number }> {
  const id = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');
  const events = (await stack.temporal.workflow.getHandle(id).fetchHistory()).events ?? [];
  const T = proto.api.enums.v1.EventType;
  return {
    workflowTasks: events.filter((e) => e.eventType === T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).length,
    activities: events.filter((e) => e.eventType === T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).length,
    events: events.length,
  };
}

async function inBatches<T>(items: T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await each(items[next++]);
    }),
  );
}

function mean(all: CommandCounts[]): CommandCounts {
  const byKind: Record<string, number> = {};
  for (const c of all) for (const [k, n] of Object.entries(c.byKind)) byKind[k] = (byKind[k] ?? 0) + n / all.length;
  const avg = (f: (c: CommandCounts) => number) => round(all.reduce((s, c) => s + f(c), 0) / all.length);
  return {
    commands: avg((c) => c.commands),
    byKind: Object.fromEntries(
      Object.entries(byKind)
        .map(([k, n]) => [k, round(n)])
        .sort((a, b) => Number(b[1]) - Number(a[1])),
    ),
    documentsRead: avg((c) => c.documentsRead),
    documentsWritten: avg((c) => c.documentsWritten),
  };
}

function progress(message: string): void {
  process.stderr.write(`[bench runs] ${message}\n`);
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
