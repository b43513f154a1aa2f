import { syncWorkflowId } from '../control';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../tests/support/weft-stack';
import { countCommands, difference, type CommandCounts } from './command-counter';
import { databaseCpuClock, temporalCpuClock } from './database-cpu';
import type { Figure } from './figure';

/** The sync: 250 Luma events, three pages of 100. */
const EVENTS = 250;
/** Connections sharing one Luma key, besides the ones measured, and as many with keys of their own. */
const OTHERS = 100;
/** Runs counted one at a time, each kind. */
const COUNTED_RUNS = 10;
/** Requests in flight at once while connections are made and runs triggered, as an app's back end. */
const IN_FLIGHT = 10;
const SHARED_KEY = 'bench-shared-luma-key';

/**
 * `npm run bench -- shared`: a no-change run of a 250-event Luma sync on a connection whose
 * Luma key is shared with 100 other connections (one account at Luma's own budget, 300
 * requests a minute, every request claiming a place in it), next to one on a connection
 * with a key of its own. The worker runs in the bench's process, as do the API and the Luma
 * simulator.
 * - counted: COUNTED_RUNS runs one after another of each kind; database commands (by
 *   command and collection) and documents read per run, all through the core's client.
 * - timed: a no-change run of 100 connections of each kind, IN_FLIGHT at a time; CPU per
 *   run of FerretDB, the Temporal dev server and this process. The shared key's 300
 *   requests meet the 30 the counted runs used less than a minute before, so some may wait
 *   for the budget: the wait is part of the figure, as it is for an app whose users share
 *   an account.
 */
export async function sharedAccountFigures(): Promise<Figure[]> {
  const ownKeys = Array.from({ length: OTHERS + COUNTED_RUNS }, (_, i) => `bench-own-luma-key-${i}`);
  const stack = await startWeftStack({
    luma: { seed: 12, eventCount: EVENTS, apiKeys: [SHARED_KEY, ...ownKeys] },
    monitorCommands: true,
    temporalCallTimeoutMs: 30_000,
  });
  try {
    // Luma's own budget (300 a minute per key): no override.
    await createLumaIntegration(stack);
    const shared = Array.from({ length: OTHERS + COUNTED_RUNS }, (_, i) => `shared-${i}`);
    const own = ownKeys.map((_, i) => `own-${i}`);
    const setupStarted = performance.now();
    await connectAll(stack, shared, () => SHARED_KEY);
    await connectAll(stack, own, (i) => ownKeys[i]);
    progress(`${shared.length + own.length} connections made; waiting for their first runs`);
    await Promise.all([...shared, ...own].map((id) => runResult(stack, id)));
    progress(`first runs done in ${Math.round((performance.now() - setupStarted) / 1000)} s (the shared key's at its budget); counting`);

    const figures: Figure[] = [];
    const counted: Record<string, ReturnType<typeof mean>> = {};
    for (const [kind, ids] of [
      ['own_key', own.slice(0, COUNTED_RUNS)],
      ['shared_key', shared.slice(0, COUNTED_RUNS)],
    ] as const) {
      const counter = countCommands(stack.core.mongo);
      const perRun: CommandCounts[] = [];
      for (const id of ids) {
        const before = counter.snapshot();
        await triggerRun(stack, id);
        await runResult(stack, id);
        perRun.push(difference(counter.snapshot(), before));
      }
      counter.stop();
      counted[kind] = mean(perRun);
    }
    figures.push({
      figure: 'shared_account_database_work',
      events: EVENTS,
      runs_each: COUNTED_RUNS,
      own_key: counted.own_key,
      shared_key: counted.shared_key,
      commands_shared_vs_own: round(counted.shared_key.commands / counted.own_key.commands),
    });

    const clocks = {
      database: databaseCpuClock(stack.env.MONGODB_URI),
      temporal: temporalCpuClock(stack.env.TEMPORAL_ADDRESS),
      bench: () => (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    };
    const read = () => Object.fromEntries(Object.entries(clocks).map(([k, c]) => [k, c ? c() : NaN]));
    const timed: Record<string, { cpu_ms_per_run: Record<string, number>; all_ms: number; runs_per_s: number; seconds: number }> = {};
    for (const [kind, ids] of [
      ['own_key', own.slice(COUNTED_RUNS)],
      ['shared_key', shared.slice(COUNTED_RUNS)],
    ] as const) {
      const before = read();
      const started = performance.now();
      await inBatches(ids, IN_FLIGHT, async (id) => {
        await triggerRun(stack, id);
        await runResult(stack, id);
      });
      const seconds = (performance.now() - started) / 1000;
      const after = read();
      const perRun = Object.fromEntries(Object.keys(clocks).map((k) => [k, round(((after[k] - before[k]) * 1000) / ids.length)]));
      const all = Object.values(perRun).reduce((sum, v) => sum + (Number.isFinite(v) ? v : 0), 0);
      timed[kind] = { cpu_ms_per_run: perRun, all_ms: round(all), runs_per_s: round(ids.length / seconds), seconds: round(seconds) };
      progress(`${kind}: ${ids.length} runs in ${Math.round(seconds)} s`);
    }
    figures.push({
      figure: 'shared_account_cpu',
      runs_each: OTHERS,
      in_flight: IN_FLIGHT,
      own_key: timed.own_key,
      shared_key: timed.shared_key,
      shared_vs_own: round(timed.shared_key.all_ms / timed.own_key.all_ms),
      target: '<= 1.2',
      note: 'bench = the API, the worker and the Luma simulator in one process. Shared runs: 300 requests on one key at 300/min, after the counted runs’ 30, so some may wait for the budget (on timers)',
    });
    return figures;
  } finally {
    await stack.shutdown();
  }
}

/** Makes the connections, IN_FLIGHT at a time; a key check that meets the shared key's busy budget (429) is retried after its Retry-After. */
async function connectAll(stack: WeftStack, ids: string[], keyOf: (i: number) => string): Promise<void> {
  await inBatches(ids, IN_FLIGHT, async (id) => {
    for (;;) {
      const { response, error } = await stack.client.POST('/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: keyOf(ids.indexOf(id)) } },
      });
      if (response.status === 201) return;
      if (response.status === 429 && error?.error.code === 'provider_budget_busy') {
        await new Promise((r) => setTimeout(r, Number(response.headers.get('retry-after')) * 1000));
        continue;
      }
      throw new Error(`POST /connections: ${response.status} ${JSON.stringify(error)}`);
    }
  });
}

async function triggerRun(stack: WeftStack, connectionId: string): Promise<void> {
  const res = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: connectionId, syncs: ['list-events'] } });
  if (res.status !== 200) throw new Error(`POST /sync/trigger: ${res.status} ${JSON.stringify(res.body)}`);
}

/** The connection's latest run's result, once it has ended (Temporal's long poll: no database reads). */
async function runResult(stack: WeftStack, connectionId: string): Promise<unknown> {
  const id = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');
  return stack.temporal.workflow.getHandle(id).result();
}

async function inBatches<T>(items: T[], size: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await each(items[next++]);
    }),
  );
}

function mean(all: CommandCounts[]): { commands: number; documents_read: number; documents_written: number; by_kind: Record<string, number> } {
  const byKind: Record<string, number> = {};
  for (const c of all) for (const [k, n] of Object.entries(c.byKind)) byKind[k] = (byKind[k] ?? 0) + n / all.length;
  const avg = (f: (c: CommandCounts) => number) => round(all.reduce((s, c) => s + f(c), 0) / all.length);
  return {
    commands: avg((c) => c.commands),
    documents_read: avg((c) => c.documentsRead),
    documents_written: avg((c) => c.documentsWritten),
    by_kind: Object.fromEntries(
      Object.entries(byKind)
        .map(([k, n]) => [k, round(n)])
        .sort((a, b) => Number(b[1]) - Number(a[1])),
    ),
  };
}

function progress(message: string): void {
  process.stderr.write(`[bench shared] ${message}\n`);
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
