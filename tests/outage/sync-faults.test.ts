import type { ChildProcess } from 'node:child_process';
import { syncWorkflowId, syncScheduleId } from '../../control';
import { startWeftStack, createLumaIntegration, readAllRecords, type WeftStack } from '../support/weft-stack';
import { spawnWorker } from '../support/worker-process';
import { waitFor } from '../support/wait';
import { startRestartableServers, type RestartableServers } from './servers';

/**
 * Faults on the real servers while a sync is under way: the Temporal dev
 * server restarted on its database file, FerretDB restarted on its data, and the only worker
 * killed while a schedule is due. Each time the sync ends as it would have without the
 * fault: every record of the provider once, and one run where one was due.
 */

const EVENTS = 600;
/** 12 pages of 50: slow enough per page that the fault lands while the run is going. */
const PAGE_SIZE = 50;
const PAGE_LATENCY_MS = 700;

describe('faults on real servers in the middle of a sync', () => {
  let servers: RestartableServers;
  let stack: WeftStack;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    servers = await startRestartableServers();
    // A short heartbeat timeout: an attempt whose completion was lost is retried within seconds.
    // Status reads describe the run and the schedule; under a loaded CI run one took over the
    // 1.5 s default (503 orchestrator_unavailable, which the outage tests check, not these).
    stack = await startWeftStack({
      servers,
      heartbeatTimeoutMs: 3_000,
      temporalCallTimeoutMs: 10_000,
      luma: { eventCount: EVENTS, maxPageSize: PAGE_SIZE, defaultPageSize: PAGE_SIZE },
    });
    await createLumaIntegration(stack);
  }, 120_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await servers?.startMongo().catch(() => undefined);
    await servers?.startTemporal().catch(() => undefined);
    // Temporal calls still retrying must reach their deadline before the channel closes (see database-and-orchestrator.test.ts).
    await new Promise((r) => setTimeout(r, 2_000));
    await stack?.shutdown();
    await servers?.destroy();
  }, 60_000);

  async function connect(connectionId: string) {
    const res = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(res.status).toBe(201);
  }

  async function syncStatus(connectionId: string) {
    const res = await stack.api('GET', `/sync/status?provider_config_key=luma&syncs=list-events&connection_id=${connectionId}`);
    expect(res.status).toBe(200);
    expect(res.body.syncs).toHaveLength(1);
    return res.body.syncs[0];
  }

  /** Records of the connection as stored (not through the API, which could hide a duplicate). */
  async function storedRecordCount(connectionId: string) {
    const [connection] = await stack.core.stores.connections.findInIntegrations('dev', ['luma'], connectionId);
    return stack.core.stores.db.collection('records').countDocuments({ connection: connection._id });
  }

  /** Waits until the run has saved some pages and is still going; returns what it had saved. */
  async function waitUntilMidSync(connectionId: string): Promise<number> {
    await waitFor(async () => (await storedRecordCount(connectionId)) >= 2 * PAGE_SIZE, 30_000, `${connectionId}: the first pages to be saved`);
    expect((await syncStatus(connectionId)).status).toBe('RUNNING');
    const saved = await storedRecordCount(connectionId);
    expect(saved).toBeLessThan(EVENTS);
    return saved;
  }

  /** Every event of the provider exactly once, as the API lists them and as they are stored. */
  async function expectEveryEventOnce(connectionId: string) {
    const ids = (await readAllRecords(stack, connectionId, 'CalendarEvent')).map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(stack.luma.eventIds().sort());
    expect(await storedRecordCount(connectionId)).toBe(EVENTS);
  }

  function workflowIdOf(connectionId: string) {
    return syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');
  }

  test('the Temporal dev server stopped and restarted on its database file mid-sync: the same run completes, every record once', async () => {
    stack.luma.setLatency(PAGE_LATENCY_MS);
    try {
      await connect('temporal-restart');
      const before = await stack.temporal.workflow.getHandle(workflowIdOf('temporal-restart')).describe();
      expect(before.status.name).toBe('RUNNING');
      await waitUntilMidSync('temporal-restart');

      await servers.stopTemporal();
      // The worker keeps fetching and saving pages meanwhile; only Temporal is away.
      await new Promise((r) => setTimeout(r, 2_000));
      await servers.startTemporal();

      const summary: any = await stack.waitForSync('temporal-restart', 'list-events');
      expect(summary.result.CalendarEvent).toEqual({ added: EVENTS, updated: 0, deleted: 0 });
      expect(summary.recordCount.CalendarEvent).toBe(EVENTS);
      // The run that was going is the one that finished: Temporal kept it across the restart.
      const after = await stack.temporal.workflow.getHandle(workflowIdOf('temporal-restart')).describe();
      expect(after.runId).toBe(before.runId);
      expect(after.status.name).toBe('COMPLETED');
    } finally {
      stack.luma.setLatency(0);
    }
    expect(await syncStatus('temporal-restart')).toMatchObject({ status: 'SUCCESS', recordCount: { CalendarEvent: EVENTS } });
    await expectEveryEventOnce('temporal-restart');
  });

  test('FerretDB stopped and restarted mid-sync: the run completes, nothing lost or duplicated', async () => {
    stack.luma.setLatency(PAGE_LATENCY_MS);
    try {
      await connect('mongo-restart');
      const before = await stack.temporal.workflow.getHandle(workflowIdOf('mongo-restart')).describe();
      await waitUntilMidSync('mongo-restart');

      // FerretDB serves until its stop returns; then it is gone for a few pages' time: the
      // attempt either fails saving a page and Temporal retries it, or its driver waits for the
      // server to be back (on a loaded machine CI saw the latter): the run ends the same.
      await servers.stopMongo();
      await new Promise((r) => setTimeout(r, 3_000));
      await servers.startMongo();

      const summary: any = await stack.waitForSync('mongo-restart', 'list-events');
      expect(summary.result.CalendarEvent).toEqual({ added: EVENTS, updated: 0, deleted: 0 });
      expect(summary.recordCount.CalendarEvent).toBe(EVENTS);
      const after = await stack.temporal.workflow.getHandle(workflowIdOf('mongo-restart')).describe();
      expect(after.runId).toBe(before.runId);
      expect(after.status.name).toBe('COMPLETED');
    } finally {
      stack.luma.setLatency(0);
    }
    expect(await syncStatus('mongo-restart')).toMatchObject({ status: 'SUCCESS', recordCount: { CalendarEvent: EVENTS } });
    await expectEveryEventOnce('mongo-restart');
  });

  test('the worker stopped gracefully mid-sync (SIGTERM, as a deploy does): the run completes on the next worker, every record once', async () => {
    stack.luma.setLatency(PAGE_LATENCY_MS);
    try {
      await connect('worker-stop');
      const before = await stack.temporal.workflow.getHandle(workflowIdOf('worker-stop')).describe();
      await waitUntilMidSync('worker-stop');
      // Worker.shutdown(), what `weft worker` does on SIGTERM: it cancels the activity in flight,
      // whose page request is aborted. That is no failure of Luma's: the attempt is retried (once
      // it failed the run as provider_unreachable, "failed: WORKER_SHUTDOWN").
      await stack.stopWorker();
      await stack.startWorker();
      const summary: any = await stack.waitForSync('worker-stop', 'list-events');
      expect(summary.result.CalendarEvent).toEqual({ added: EVENTS, updated: 0, deleted: 0 });
      expect((await stack.temporal.workflow.getHandle(workflowIdOf('worker-stop')).describe()).runId).toBe(before.runId);
    } finally {
      stack.luma.setLatency(0);
    }
    expect(await syncStatus('worker-stop')).toMatchObject({ status: 'SUCCESS', recordCount: { CalendarEvent: EVENTS } });
    await expectEveryEventOnce('worker-stop');
  });

  test('the only worker killed while a schedule is due: the run happens when a worker returns, once', async () => {
    await connect('scheduled');
    await stack.waitForSync('scheduled', 'list-events');
    const scheduleId = syncScheduleId(stack.temporalIdPrefix, 'dev', 'luma', 'scheduled', 'list-events', 'base');
    const schedule = stack.temporal.schedule.getHandle(scheduleId);
    // The shortest frequency allowed: the schedule fires 30 s from now.
    const put = await stack.api('PUT', '/sync/update-connection-frequency', {
      body: { provider_config_key: 'luma', connection_id: 'scheduled', sync_name: 'list-events', frequency: '30s' },
    });
    expect(put).toEqual({ status: 200, body: { frequency: 'every 30s' } });
    const desc = await schedule.describe();
    expect(desc.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: 30_000 });
    const due = desc.info.nextActionTimes[0].getTime();
    expect(due - Date.now()).toBeGreaterThan(20_000);
    const lastRunBefore = (await stack.temporal.workflow.getHandle(workflowIdOf('scheduled')).describe()).runId;

    // The in-process worker goes; a worker of its own process takes over, and is killed just before the fire.
    await stack.stopWorker();
    const doomed = await spawnWorker(stack);
    children.push(doomed);
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now() - 2_000)));
    doomed.kill('SIGKILL');
    await new Promise((r) => doomed.once('exit', r));
    expect(doomed.signalCode).toBe('SIGKILL');

    // The schedule fires with no worker alive: the fire's workflow waits, the sync does not run.
    const fired = await firesSince(scheduleId, new Date(due - 1_000), 1);
    expect(fired).toHaveLength(1);
    expect(fired[0].status).toBe('RUNNING');
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await stack.temporal.workflow.getHandle(workflowIdOf('scheduled')).describe()).runId).toBe(lastRunBefore);
    expect((await syncStatus('scheduled')).status).toBe('SUCCESS');

    // A worker returns (the test's own; the killed one was the only one polling).
    await stack.startWorker();
    const outcome: any = await stack.temporal.workflow.getHandle(fired[0].workflowId, fired[0].runId).result();
    expect(outcome.ran).toBe(true);
    expect(outcome.summary.result.CalendarEvent).toEqual({ added: 0, updated: 0, deleted: 0 });

    // Once: one fire, one run of the sync since the kill (visibility is eventually consistent: read until it settles).
    expect(await firesSince(scheduleId, new Date(due - 1_000), 1)).toHaveLength(1);
    const runs = await settledList(`WorkflowId = "${workflowIdOf('scheduled')}" AND StartTime > "${new Date(due - 1_000).toISOString()}"`, 1);
    expect(runs).toHaveLength(1);
    expect(runs[0].runId).not.toBe(lastRunBefore);
    expect(runs[0].status).toBe('COMPLETED');
    expect(await syncStatus('scheduled')).toMatchObject({ status: 'SUCCESS', recordCount: { CalendarEvent: EVENTS } });
    const [state] = await stack.core.stores.syncs.listForConnection(
      (await stack.core.stores.connections.findInIntegrations('dev', ['luma'], 'scheduled'))[0]._id,
    );
    expect(state.last_run?.id).toBe(runs[0].runId);
  });

  /** The schedule's fires (scheduledSync workflows) that started after `since`. */
  function firesSince(scheduleId: string, since: Date, expected: number) {
    // The sync's run carries the fire's search attributes too (operators find it by them): only the fires.
    return settledList(`TemporalScheduledById = "${scheduleId}" AND WorkflowType = "scheduledSync" AND StartTime > "${since.toISOString()}"`, expected);
  }

  /** The workflows a visibility query lists, once at least `atLeast` show and two reads agree. */
  async function settledList(query: string, atLeast: number) {
    let last = '';
    for (let i = 0; i < 80; i++) {
      const found: Array<{ workflowId: string; runId: string; status: string }> = [];
      for await (const w of stack.temporal.workflow.list({ query })) found.push({ workflowId: w.workflowId, runId: w.runId, status: w.status.name });
      const key = JSON.stringify(found.sort((a, b) => a.runId.localeCompare(b.runId)));
      if (key === last && found.length >= atLeast) return found;
      last = key;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`no settled list for ${query}`);
  }
});
