import { createLumaIntegration, startWeftStack, waitForOperation, type WeftStack } from '../support/weft-stack';

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
      const res = await stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      });
      expect(res.status).toBe(201);
    }
    for (const id of ids) await stack.waitForSync(id, 'list-events');
  }, 180_000);
  afterAll(async () => stack?.shutdown());

  async function statuses(): Promise<{ syncs: any[]; operations: any[] }> {
    const res = await stack.api('GET', '/sync/status?provider_config_key=luma&syncs=list-events');
    expect(res.status).toBe(200);
    return res.body;
  }

  async function schedulePaused(connectionId: string): Promise<boolean> {
    const id = [`${stack.temporalIdPrefix}-schedule`, 'dev', 'luma', connectionId, 'list-events', 'base'].map(encodeURIComponent).join(':');
    return (await stack.temporal.schedule.getHandle(id).describe()).state.paused;
  }

  test('trigger with reset and emptyCache: answered before any connection is done, then every sync starts over', async () => {
    const before = await stack.api('GET', '/records?model=CalendarEvent', { headers: { 'Connection-Id': ids[0], 'Provider-Config-Key': 'luma' } });
    expect(before.body.records).toHaveLength(EVENTS);

    const res = await stack.api('POST', '/sync/trigger', {
      body: { provider_config_key: 'luma', syncs: ['list-events'], opts: { reset: true, emptyCache: true } },
    });
    expect(res.status).toBe(202);
    // The answer came before the work: nothing done yet.
    expect(res.body).toMatchObject({
      success: true,
      operation: { kind: 'trigger', status: 'RUNNING', total: CONNECTIONS, done: 0, opts: { reset: true, emptyCache: true } },
    });
    expect((await statuses()).operations[0].id).toBe(res.body.operation.id);

    const op = await waitForOperation(stack, 'luma', res.body.operation.id);
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
    const pause = await stack.api('POST', '/sync/pause', { body: { provider_config_key: 'luma', syncs: [] } });
    expect(pause.status).toBe(202);
    expect(await waitForOperation(stack, 'luma', pause.body.operation.id)).toMatchObject({ status: 'SUCCESS', done: CONNECTIONS });
    for (const id of ids) expect(await schedulePaused(id)).toBe(true);
    expect((await statuses()).syncs.map((s) => s.status)).toEqual(ids.map(() => 'PAUSED'));

    const start = await stack.api('POST', '/sync/start', { body: { provider_config_key: 'luma', syncs: ['list-events'] } });
    expect(start.status).toBe(202);
    expect(await waitForOperation(stack, 'luma', start.body.operation.id)).toMatchObject({ status: 'SUCCESS', done: CONNECTIONS });
    for (const id of ids) expect(await schedulePaused(id)).toBe(false);

    // Newest first.
    expect((await statuses()).operations.slice(0, 2).map((o) => o.id)).toEqual([start.body.operation.id, pause.body.operation.id]);
  });

  test('a reset never starts over under a run in progress: one connection is refused with 409, every connection waits for it', async () => {
    const syncId = (id: string) => [`${stack.temporalIdPrefix}-sync`, 'dev', 'luma', id, 'list-events', 'base'].map(encodeURIComponent).join(':');
    const records = async (id: string) =>
      (await stack.api('GET', '/records?model=CalendarEvent', { headers: { 'Connection-Id': id, 'Provider-Config-Key': 'luma' } })).body.records;
    stack.luma.setLatency(2_000);
    try {
      // ids[0] is mid-run (its first page takes 2 s).
      expect((await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: ids[0], syncs: [] } })).status).toBe(200);
      const running = stack.temporal.workflow.getHandle(syncId(ids[0]));
      expect((await running.describe()).status.name).toBe('RUNNING');
      const firstSeen = (await records(ids[0])).map((r: any) => r._weft_metadata.first_seen_at);

      const refused = await stack.api('POST', '/sync/trigger', {
        body: { provider_config_key: 'luma', connection_id: ids[0], syncs: ['list-events'], opts: { reset: true, emptyCache: true } },
      });
      expect([refused.status, refused.body.error?.code]).toEqual([409, 'sync_running']);
      // Nothing changed: the cache is as it was.
      expect((await records(ids[0])).map((r: any) => r._weft_metadata.first_seen_at)).toEqual(firstSeen);

      // Every connection: the operation waits for ids[0]'s run to end, then empties and reruns it.
      const all = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', syncs: [], opts: { reset: true, emptyCache: true } } });
      expect(all.status).toBe(202);
      const runBefore = (await running.describe()).runId;
      stack.luma.setLatency(0);
      expect(await waitForOperation(stack, 'luma', all.body.operation.id, 120_000)).toMatchObject({ status: 'SUCCESS', done: CONNECTIONS, failed: 0 });
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
    const unknownSync = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', syncs: ['nope'], opts: { reset: true } } });
    expect(unknownSync.status).toBe(400);
    expect(unknownSync.body.error.code).toBe('unknown_sync');
    const unknownIntegration = await stack.api('POST', '/sync/pause', { body: { provider_config_key: 'nope', syncs: [] } });
    expect(unknownIntegration.status).toBe(404);
    const badOpts = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', syncs: [], opts: { reset: 'yes' } } });
    expect(badOpts.status).toBe(400);
    expect(badOpts.body.error.code).toBe('invalid_body');

    expect((await statuses()).operations.map((o) => o.id)).toEqual(known);
    for (const id of ids) expect(await schedulePaused(id)).toBe(false);
  });
});
