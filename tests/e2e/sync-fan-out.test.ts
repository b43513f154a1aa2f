import { syncScheduleId, syncWorkflowId } from '../../control';
import { createLumaIntegration, startWeftStack, waitForOperation, type WeftStack } from '../support/weft-stack';
import { listRecords } from '../../cli/api-client/client';

const CONNECTIONS = 15;
const EVENTS = 3;

/**
 * A trigger, reset, start or pause without connection_id addresses every connection of the
 * integration: the API answers at once (202, the operation) and a workflow does the work in
 * the background, its progress in GET /sync/status. (Before, a reset of 15 connections was
 * done inside the request and took over 20 s.)
 */
describe('sync operations over every connection of an integration', () => {
  let stack: WeftStack;
  const ids = Array.from({ length: CONNECTIONS }, (_, i) => `fan-${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    stack = await startWeftStack({ luma: { eventCount: EVENTS }, temporalCallTimeoutMs: 10_000 });
    await createLumaIntegration(stack);
    for (const id of ids) {
      const res = await stack.client.POST('/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      });
      expect(res.response.status).toBe(201);
    }
    for (const id of ids) await stack.waitForSync(id, 'list-events');
  }, 180_000);
  afterAll(async () => stack?.shutdown());

  async function statuses() {
    const res = await stack.client.GET('/sync/status', { params: { query: { provider_config_key: 'luma', syncs: 'list-events' } } });
    expect(res.response.status).toBe(200);
    return res.data!;
  }

  /** A connection's CalendarEvent records (one page: there are EVENTS of them). */
  const records = async (connectionId: string) =>
    (await listRecords(stack.client, { model: 'CalendarEvent', connectionId, providerConfigKey: 'luma' })).records;

  /** POST /sync/<verb> for every connection (no connection_id): 202 with the operation, or the error. */
  const everyConnection = (
    verb: '/sync/trigger' | '/sync/pause' | '/sync/start',
    body: { syncs: string[]; opts?: { reset?: boolean; emptyCache?: boolean } },
  ) => stack.client.POST(verb, { body: { provider_config_key: 'luma', ...body } });

  async function schedulePaused(connectionId: string): Promise<boolean> {
    const id = syncScheduleId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');
    return (await stack.temporal.schedule.getHandle(id).describe()).state.paused;
  }

  test('trigger with reset and emptyCache: answered before any connection is done, then every sync starts over', async () => {
    expect(await records(ids[0])).toHaveLength(EVENTS);

    const res = await everyConnection('/sync/trigger', { syncs: ['list-events'], opts: { reset: true, emptyCache: true } });
    expect(res.response.status).toBe(202);
    // The answer came before the work: nothing done yet.
    expect(res.data).toMatchObject({
      success: true,
      operation: { kind: 'trigger', status: 'RUNNING', total: CONNECTIONS, done: 0, opts: { reset: true, emptyCache: true } },
    });
    const operation = res.data!.operation!;
    expect((await statuses()).operations[0].id).toBe(operation.id);

    const op = await waitForOperation(stack, 'luma', operation.id);
    expect(op).toMatchObject({ status: 'SUCCESS', total: CONNECTIONS, done: CONNECTIONS, failed: 0, skipped: 0, errors: [] });
    expect(op.finishedAt).not.toBeNull();
    for (const id of ids) {
      const run: any = await stack.waitForSync(id, 'list-events');
      // The cache was emptied and the checkpoint reset: every event is added again.
      expect(run.result.CalendarEvent).toEqual({ added: EVENTS, updated: 0, deleted: 0 });
    }

    // Operators find the operation's workflow in the Temporal UI by integration and kind.
    const found = [];
    const query = `WeftIntegration = "luma" AND WeftOperation = "sync-trigger-all" AND WorkflowId STARTS_WITH "${stack.temporalIdPrefix}-sync-operation:"`;
    for (let i = 0; i < 40 && found.length === 0; i++) {
      for await (const w of stack.temporal.workflow.list({ query })) found.push(w);
      if (found.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect(found).toHaveLength(1);
    expect(found[0].status.name).toBe('COMPLETED');
  });

  test('pause and start every connection in the background; the status shows the schedules follow', async () => {
    const pause = await everyConnection('/sync/pause', { syncs: [] });
    expect(pause.response.status).toBe(202);
    const paused = pause.data!.operation!;
    expect(await waitForOperation(stack, 'luma', paused.id)).toMatchObject({ status: 'SUCCESS', done: CONNECTIONS });
    for (const id of ids) expect(await schedulePaused(id)).toBe(true);
    expect((await statuses()).syncs.map((s) => s.status)).toEqual(ids.map(() => 'PAUSED'));

    const start = await everyConnection('/sync/start', { syncs: ['list-events'] });
    expect(start.response.status).toBe(202);
    const started = start.data!.operation!;
    expect(await waitForOperation(stack, 'luma', started.id)).toMatchObject({ status: 'SUCCESS', done: CONNECTIONS });
    for (const id of ids) expect(await schedulePaused(id)).toBe(false);

    // Newest first.
    expect((await statuses()).operations.slice(0, 2).map((o) => o.id)).toEqual([started.id, paused.id]);
  });

  test('a reset never starts over under a run in progress: one connection is refused with 409, every connection waits for it', async () => {
    const syncId = (id: string) => syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', id, 'list-events', 'base');
    stack.luma.setLatency(2_000);
    try {
      // ids[0] is mid-run (its first page takes 2 s).
      expect((await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: ids[0], syncs: [] } })).response.status).toBe(200);
      const running = stack.temporal.workflow.getHandle(syncId(ids[0]));
      expect((await running.describe()).status.name).toBe('RUNNING');
      const firstSeen = (await records(ids[0])).map((r) => r._weft_metadata.first_seen_at);

      const refused = await stack.client.POST('/sync/trigger', {
        body: { provider_config_key: 'luma', connection_id: ids[0], syncs: ['list-events'], opts: { reset: true, emptyCache: true } },
      });
      expect([refused.response.status, refused.error?.error.code]).toEqual([409, 'sync_running']);
      // Nothing changed: the cache is as it was.
      expect((await records(ids[0])).map((r) => r._weft_metadata.first_seen_at)).toEqual(firstSeen);

      // Every connection: the operation waits for ids[0]'s run to end, then empties and reruns it.
      const all = await everyConnection('/sync/trigger', { syncs: [], opts: { reset: true, emptyCache: true } });
      expect(all.response.status).toBe(202);
      const runBefore = (await running.describe()).runId;
      stack.luma.setLatency(0);
      expect(await waitForOperation(stack, 'luma', all.data!.operation!.id, 120_000)).toMatchObject({ status: 'SUCCESS', done: CONNECTIONS, failed: 0 });
      const after = stack.temporal.workflow.getHandle(syncId(ids[0]));
      const run: any = await after.result();
      expect((await after.describe()).runId).not.toBe(runBefore);
      expect(run.type).toBe('INITIAL');
      expect(run.result.CalendarEvent).toEqual({ added: EVENTS, updated: 0, deleted: 0 });
    } finally {
      stack.luma.setLatency(0);
    }
  });

  test('a refused request starts no operation and changes nothing', async () => {
    const known = (await statuses()).operations.map((o) => o.id);
    const unknownSync = await everyConnection('/sync/trigger', { syncs: ['nope'], opts: { reset: true } });
    expect(unknownSync.response.status).toBe(400);
    expect(unknownSync.error?.error.code).toBe('unknown_sync');
    const unknownIntegration = await stack.client.POST('/sync/pause', { body: { provider_config_key: 'nope', syncs: [] } });
    expect(unknownIntegration.response.status).toBe(404);
    // Malformed on purpose: the untyped helper.
    const badOpts = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', syncs: [], opts: { reset: 'yes' } } });
    expect(badOpts.status).toBe(400);
    expect(badOpts.body.error.code).toBe('invalid_body');

    expect((await statuses()).operations.map((o) => o.id)).toEqual(known);
    for (const id of ids) expect(await schedulePaused(id)).toBe(false);
  });
});
