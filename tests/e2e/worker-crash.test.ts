import type { ChildProcess } from 'node:child_process';
import { syncWorkflowId } from '../../control';
import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { readAllRecordsTyped } from '../support/weft-client';
import { spawnWorker } from '../support/worker-process';
import { waitFor } from '../support/wait';

const EVENTS = 3_000;

describe('a worker killed in the middle of a sync', () => {
  let stack: WeftStack;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    // No in-process worker: the sync must run in processes this test can kill for real.
    stack = await startWeftStack({ worker: false, heartbeatTimeoutMs: 3_000, luma: { seed: 11, eventCount: EVENTS, maxPageSize: 50, latencyMs: 25 } });
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await stack?.shutdown();
  });

  test('completes on a new worker with no record missing or duplicated', async () => {
    const first = await spawnWorker(stack);
    children.push(first);

    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'crash-user', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(created.response.status).toBe(201);

    const records = stack.core.stores.db.collection('records');
    await waitFor(async () => (await records.countDocuments({})) >= 600, 60_000, 'the first pages to be saved');
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    expect(first.signalCode).toBe('SIGKILL');
    const savedAtKill = await records.countDocuments({});
    expect(savedAtKill).toBeLessThan(EVENTS); // it really died mid-run

    const second = await spawnWorker(stack);
    children.push(second);
    const summary: any = await stack.waitForSync('crash-user', 'list-events');
    second.kill('SIGTERM');

    // Exactly the simulator's events, each once, and the run's counts agree.
    const all = await readAllRecordsTyped(stack.client, { model: 'CalendarEvent', connectionId: 'crash-user' });
    const ids = all.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(stack.luma.eventIds().sort());
    expect(summary.result.CalendarEvent).toEqual({ added: EVENTS, updated: 0, deleted: 0 });

    // The retried attempt resumed from the heartbeat checkpoint instead of page one.
    const firstPageRequests = stack.luma.requestLog().filter((r) => r.path === '/public/v1/calendar/list-events' && !r.query.pagination_cursor);
    expect(firstPageRequests).toHaveLength(1);

    const history = await stack.temporal.workflow
      .getHandle(syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', 'crash-user', 'list-events', 'base'))
      .fetchHistory();
    const attempts = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 1);
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
  });
});
