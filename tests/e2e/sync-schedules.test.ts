import { ScheduleNotFoundError } from '@temporalio/client';
import { syncRunInput, syncWorkflowId, reconcileSyncSchedules, syncScheduleId } from '../../control';
import { startWeftStack, createLumaIntegration, createOneDriveIntegration, connectOneDrive, waitForOperation, type WeftStack } from '../support/weft-stack';
import { listRecords } from '../../cli/api-client/client';
import { waitUntil } from '../support/wait';

const API_KEY = 'sandbox-luma-api-key';
const HOUR = 3_600_000;

function scheduleId(stack: WeftStack, connectionId: string, syncName: string, providerConfigKey = 'luma', variant = 'base') {
  return syncScheduleId(stack.temporalIdPrefix, 'dev', providerConfigKey, connectionId, syncName, variant);
}

/** A sync's Temporal Schedule per connection: created with the connection, driven by start/pause/frequency, gone with it. */
describe('sync schedules (real Temporal dev server)', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    // Status reads describe schedules and runs; on a loaded CI box one can take over the 1.5 s default.
    stack = await startWeftStack({ graph: {}, temporalCallTimeoutMs: 10_000 });
    await createLumaIntegration(stack);
    await createOneDriveIntegration(stack);
  });
  afterAll(async () => stack?.shutdown());

  /**
   * The schedule as Temporal describes it. Right after concurrent updates the dev server can
   * answer not-found for a moment (its scheduler workflow is between runs): asked again, up to 3 s.
   */
  async function schedule(connectionId: string, syncName = 'list-events', providerConfigKey = 'luma') {
    const handle = stack.temporal.schedule.getHandle(scheduleId(stack, connectionId, syncName, providerConfigKey));
    for (const deadline = Date.now() + 3_000; ;) {
      try {
        return await handle.describe();
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError) || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  async function connectLuma(connectionId: string) {
    const res = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: connectionId, credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(res.response.status).toBe(201);
    await stack.waitForSync(connectionId, 'list-events');
  }

  async function status(connectionId: string, syncs = 'list-events', providerConfigKey = 'luma') {
    const res = await stack.client.GET('/sync/status', { params: { query: { provider_config_key: providerConfigKey, syncs, connection_id: connectionId } } });
    expect(res.response.status).toBe(200);
    return res.data!.syncs;
  }

  type SyncTarget = { connection_id?: string; syncs: Array<string | { name: string; variant: string }> };
  /** POST /sync/pause or /sync/start for luma, through the typed client. */
  const pauseOrStart = (verb: '/sync/pause' | '/sync/start', body: SyncTarget, providerConfigKey = 'luma') =>
    stack.client.POST(verb, { body: { provider_config_key: providerConfigKey, ...body } });

  /** Every run under the sync's fixed workflow ID that started after `since` (visibility is eventually consistent: read until it settles). */
  async function runsSince(connectionId: string, since: Date): Promise<string[]> {
    const id = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');
    let last = '';
    for (let i = 0; i < 40; i++) {
      const runs: string[] = [];
      for await (const w of stack.temporal.workflow.list({ query: `WorkflowId = "${id}" AND StartTime > "${since.toISOString()}"` })) runs.push(w.runId);
      const key = runs.sort().join(',');
      if (key === last && runs.length > 0) return runs;
      last = key;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`no settled run list for ${id}`);
  }

  test('a new connection gets a schedule per sync at its frequency: running for auto-start syncs, paused for the others', async () => {
    await connectLuma('sched-1');
    const luma = await schedule('sched-1');
    expect(everyMs(luma)).toEqual([HOUR]);
    expect(luma.state.paused).toBe(false);
    expect(luma.policies.overlap).toBe('SKIP');
    expect(luma.policies.catchupWindow).toBe(HOUR);
    expect(luma.action.workflowType).toBe('scheduledSync');
    expect(luma.action.taskQueue).toBe(stack.taskQueue);

    expect((await connectOneDrive(stack, 'sched-od')).status).toBe(201);
    await stack.waitForSync('sched-od', 'user-files', { providerConfigKey: 'one-drive' });
    expect((await schedule('sched-od', 'user-files', 'one-drive')).state.paused).toBe(false);
    const selected = await schedule('sched-od', 'user-files/selected', 'one-drive');
    expect(selected.state.paused).toBe(true);
    expect(everyMs(selected)).toEqual([HOUR]);

    const [s] = await status('sched-1');
    expect(s).toMatchObject({ status: 'SUCCESS', frequency: 'every 1h' });
    // One interval after the schedule was made (not on the hour: fires of many connections spread out).
    const next = Date.parse(s.nextScheduledSyncAt!);
    expect(next).toBeGreaterThan(Date.now() + HOUR - 60_000);
    expect(next).toBeLessThanOrEqual(Date.now() + HOUR);
    const od = await status('sched-od', '*', 'one-drive');
    expect(od.find((x) => x.name === 'user-files/selected')).toMatchObject({ status: 'PAUSED', nextScheduledSyncAt: null, frequency: 'every 1h' });
  });

  test('POST /sync/pause and /sync/start pause and unpause the schedule, and the status reads it (a pause in Temporal too)', async () => {
    const pause = await pauseOrStart('/sync/pause', { connection_id: 'sched-1', syncs: ['list-events'] });
    expect([pause.response.status, pause.data]).toEqual([200, { success: true }]);
    expect((await schedule('sched-1')).state.paused).toBe(true);
    expect((await status('sched-1'))[0]).toMatchObject({ status: 'PAUSED', nextScheduledSyncAt: null, frequency: 'every 1h' });

    const start = await pauseOrStart('/sync/start', { connection_id: 'sched-1', syncs: ['list-events'] });
    expect([start.response.status, start.data]).toEqual([200, { success: true }]);
    expect((await schedule('sched-1')).state.paused).toBe(false);
    const [running] = await status('sched-1');
    expect(running.status).toBe('SUCCESS');
    expect(running.nextScheduledSyncAt).not.toBeNull();

    // An operator pausing it in the Temporal UI: the API shows it.
    await stack.temporal.schedule.getHandle(scheduleId(stack, 'sched-1', 'list-events')).pause('operator');
    expect((await status('sched-1'))[0].status).toBe('PAUSED');
    await stack.temporal.schedule.getHandle(scheduleId(stack, 'sched-1', 'list-events')).unpause();

    // Without connection_id: every connection of the integration, in the background (202, then progress in the status).
    await connectLuma('sched-2');
    const pauseAll = await pauseOrStart('/sync/pause', { syncs: ['list-events'] });
    expect(pauseAll.response.status).toBe(202);
    expect(await waitForOperation(stack, 'luma', pauseAll.data!.operation!.id)).toMatchObject({ status: 'SUCCESS', total: 2, done: 2 });
    expect((await schedule('sched-1')).state.paused).toBe(true);
    expect((await schedule('sched-2')).state.paused).toBe(true);
    const startAll = await pauseOrStart('/sync/start', { syncs: [] });
    expect(startAll.response.status).toBe(202);
    expect(await waitForOperation(stack, 'luma', startAll.data!.operation!.id)).toMatchObject({ status: 'SUCCESS', total: 2, done: 2 });
    expect((await schedule('sched-1')).state.paused).toBe(false);
    expect((await schedule('sched-2')).state.paused).toBe(false);

    // Refused requests change nothing.
    const unknownSync = await pauseOrStart('/sync/pause', { syncs: ['nope'] });
    expect(unknownSync.response.status).toBe(400);
    expect(unknownSync.error?.error.code).toBe('unknown_sync');
    const unknownVariant = await pauseOrStart('/sync/pause', { connection_id: 'sched-1', syncs: [{ name: 'list-events', variant: 'v2' }] });
    expect(unknownVariant.response.status).toBe(404);
    expect(unknownVariant.error?.error.code).toBe('unknown_sync_variant');
    // Over every connection, a variant applies where it exists: here nowhere, so nothing is paused.
    const noVariantAnywhere = await pauseOrStart('/sync/pause', { syncs: [{ name: 'list-events', variant: 'v2' }] });
    expect(noVariantAnywhere.response.status).toBe(202);
    expect(await waitForOperation(stack, 'luma', noVariantAnywhere.data!.operation!.id)).toMatchObject({ status: 'SUCCESS', done: 0, skipped: 2 });
    const unknownConnection = await pauseOrStart('/sync/pause', { connection_id: 'nobody', syncs: [] });
    expect(unknownConnection.response.status).toBe(404);
    expect((await schedule('sched-1')).state.paused).toBe(false);
    expect((await schedule('sched-2')).state.paused).toBe(false);
  });

  test('PUT /sync/update-connection-frequency changes the interval; refused inputs change nothing; null goes back to the default', async () => {
    const base = { provider_config_key: 'luma', connection_id: 'sched-1', sync_name: 'list-events' };
    /** The typed client: the answer's status and body. */
    const put = async (body: typeof base & { frequency: string | null }) => {
      const res = await stack.client.PUT('/sync/update-connection-frequency', { body });
      return { status: res.response.status, body: res.data ?? res.error };
    };
    /** Malformed or refused on purpose: the untyped helper. */
    const putUntyped = (body: Record<string, unknown>) => stack.api('PUT', '/sync/update-connection-frequency', { body });
    const stored = async () =>
      (await stack.core.stores.syncs.get({ connection: (await connectionDoc('sched-1'))._id, name: 'list-events', variant: 'base' }))?.frequency;

    await pauseOrStart('/sync/pause', { connection_id: 'sched-1', syncs: [] });
    const ok = await put({ ...base, frequency: 'every 30 minutes' });
    expect(ok).toEqual({ status: 200, body: { frequency: 'every 30m' } });
    let desc = await schedule('sched-1');
    expect(everyMs(desc)).toEqual([HOUR / 2]);
    expect(desc.policies.catchupWindow).toBe(HOUR / 2);
    expect(desc.state.paused).toBe(true); // a frequency change keeps the pause
    expect(await stored()).toBe('every 30 minutes');
    expect((await status('sched-1'))[0]).toMatchObject({ status: 'PAUSED', frequency: 'every 30m' });

    for (const [body, httpStatus, code] of [
      [{ ...base, frequency: '10s' }, 400, 'frequency_too_short'],
      [{ ...base, frequency: 'every 29 seconds' }, 400, 'frequency_too_short'],
      [{ ...base, frequency: 'soon' }, 400, 'invalid_frequency'],
      [{ ...base, frequency: 'every' }, 400, 'invalid_frequency'],
      [{ ...base, frequency: '-1h' }, 400, 'invalid_frequency'],
      [{ ...base, frequency: 3600 }, 400, 'invalid_body'],
      [{ ...base, sync_name: 'nope', frequency: '2h' }, 400, 'unknown_sync'],
      [{ ...base, sync_variant: 'v2', frequency: '2h' }, 404, 'unknown_sync_variant'],
      [{ ...base, connection_id: 'nobody', frequency: '2h' }, 404, 'unknown_connection'],
    ] as const) {
      const res = await putUntyped(body);
      expect([res.status, res.body.error?.code]).toEqual([httpStatus, code]);
    }
    desc = await schedule('sched-1');
    expect(everyMs(desc)).toEqual([HOUR / 2]);
    expect(await stored()).toBe('every 30 minutes');

    expect(await put({ ...base, frequency: '1 day' })).toEqual({ status: 200, body: { frequency: 'every 1d' } });
    expect(everyMs(await schedule('sched-1'))).toEqual([24 * HOUR]);
    expect(await put({ ...base, frequency: '2h' })).toEqual({ status: 200, body: { frequency: 'every 2h' } });
    expect(everyMs(await schedule('sched-1'))).toEqual([2 * HOUR]);

    expect(await put({ ...base, frequency: null })).toEqual({ status: 200, body: { frequency: 'every 1h' } });
    expect(everyMs(await schedule('sched-1'))).toEqual([HOUR]);
    expect(await stored()).toBeNull();
    await pauseOrStart('/sync/start', { connection_id: 'sched-1', syncs: [] });
  });

  async function connectionDoc(connectionId: string) {
    const [doc] = await stack.core.stores.connections.findInIntegrations('dev', ['luma'], connectionId);
    return doc;
  }

  test('a scheduled fire and a manual trigger run the sync once, whichever comes first', async () => {
    await connectLuma('sched-3');
    const handle = stack.temporal.schedule.getHandle(scheduleId(stack, 'sched-3', 'list-events'));
    const fixedId = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', 'sched-3', 'list-events', 'base');
    stack.luma.setLatency(1_500);
    try {
      // Scheduled first: the trigger joins the scheduled run.
      const t0 = new Date();
      await handle.trigger();
      await waitUntil(async () => (await stack.temporal.workflow.getHandle(fixedId).describe()).startTime > t0, { retryErrors: true });
      const scheduledRun = await stack.temporal.workflow.getHandle(fixedId).describe();
      expect(scheduledRun.status.name).toBe('RUNNING');
      expect(scheduledRun.parentExecution).toBeDefined();
      // The status reads RUNNING from the sync's state, set when the run's first activity starts (a moment after the workflow).
      expect(await waitUntil(async () => (await status('sched-3'))[0].status === 'RUNNING' && 'RUNNING', { retryErrors: true })).toBe('RUNNING');
      const trigger = await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'sched-3', syncs: ['list-events'] } });
      expect(trigger.response.status).toBe(200);
      expect((await stack.temporal.workflow.getHandle(fixedId).describe()).runId).toBe(scheduledRun.runId);
      await stack.waitForSync('sched-3', 'list-events');
      expect(await runsSince('sched-3', t0)).toEqual([scheduledRun.runId]);

      // Triggered first: the schedule's fire finds the run going and ends without another.
      const t1 = new Date();
      await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'sched-3', syncs: ['list-events'] } });
      const manualRun = await stack.temporal.workflow.getHandle(fixedId).describe();
      expect(manualRun.status.name).toBe('RUNNING');
      await handle.trigger();
      const fire = await waitUntil(
        async () => {
          const recent = (await handle.describe()).info.recentActions.filter((a) => a.takenAt > t1);
          return recent[0]?.action.workflow.workflowId;
        },
        { retryErrors: true },
      );
      const outcome = await stack.temporal.workflow.getHandle(fire).result();
      expect(outcome).toEqual({ ran: false, reason: 'already_running' });
      await stack.waitForSync('sched-3', 'list-events');
      expect(await runsSince('sched-3', t1)).toEqual([manualRun.runId]);
    } finally {
      stack.luma.setLatency(0);
    }
  });

  test('a sync variant has its own schedule, run and records; deleting it removes them and leaves the base alone', async () => {
    const target = { provider_config_key: 'luma', connection_id: 'sched-1' };
    const v2Path = { params: { path: { name: 'list-events', variant: 'v2' } }, body: target };
    const created = await stack.client.POST('/sync/{name}/variant/{variant}', v2Path);
    expect(created.response.status).toBe(200);
    expect(created.data).toMatchObject({ name: 'list-events', variant: 'v2' });
    expect(typeof created.data?.id).toBe('string');
    const v2 = await stack.temporal.schedule.getHandle(scheduleId(stack, 'sched-1', 'list-events', 'luma', 'v2')).describe();
    expect(v2.state.paused).toBe(false); // list-events is auto-start
    expect(everyMs(v2)).toEqual([HOUR]);
    await stack.temporal.workflow.getHandle(syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', 'sched-1', 'list-events', 'v2')).result();
    const records = (variant: string) =>
      listRecords(stack.client, { model: 'CalendarEvent', connectionId: 'sched-1', providerConfigKey: 'luma', variant, limit: 1000 });
    expect((await records('v2')).records).toHaveLength(200);
    const baseCount = (await records('base')).records.length;
    expect(baseCount).toBe(200);
    expect((await status('sched-1', '*')).map((x) => x.variant).sort()).toEqual(['base', 'v2']);
    expect((await status('sched-1', 'list-events')).map((x) => x.variant).sort()).toEqual(['base', 'v2']);
    // As Nango's SDK names a variant in the status query.
    expect((await status('sched-1', 'list-events::v2')).map((x) => [x.name, x.variant, x.status])).toEqual([['list-events', 'v2', 'SUCCESS']]);

    // Paused on its own.
    await pauseOrStart('/sync/pause', { connection_id: target.connection_id, syncs: [{ name: 'list-events', variant: 'v2' }] });
    expect((await stack.temporal.schedule.getHandle(scheduleId(stack, 'sched-1', 'list-events', 'luma', 'v2')).describe()).state.paused).toBe(true);
    expect((await schedule('sched-1')).state.paused).toBe(false);

    // Refused on purpose (and one body malformed): the untyped helper.
    for (const [path, body, httpStatus, code] of [
      ['/sync/list-events/variant/v2', target, 409, 'sync_variant_already_exists'],
      ['/sync/list-events/variant/base', target, 400, 'invalid_variant'],
      ['/sync/list-events/variant/not%20a%20name', target, 400, 'invalid_variant'],
      ['/sync/nope/variant/v3', target, 400, 'unknown_sync'],
      ['/sync/list-events/variant/v3', { ...target, connection_id: 'nobody' }, 404, 'unknown_connection'],
      ['/sync/list-events/variant/v3', { provider_config_key: 'luma' }, 400, 'invalid_body'],
    ] as const) {
      const res = await stack.api('POST', path, { body });
      expect([path, res.status, res.body.error?.code]).toEqual([path, httpStatus, code]);
    }
    expect((await status('sched-1', '*')).map((x) => x.variant).sort()).toEqual(['base', 'v2']);

    const deleted = await stack.client.DELETE('/sync/{name}/variant/{variant}', v2Path);
    expect([deleted.response.status, deleted.data]).toEqual([200, { success: true }]);
    await expect(stack.temporal.schedule.getHandle(scheduleId(stack, 'sched-1', 'list-events', 'luma', 'v2')).describe()).rejects.toBeInstanceOf(
      ScheduleNotFoundError,
    );
    expect((await records('v2')).records).toHaveLength(0);
    expect((await records('base')).records).toHaveLength(baseCount);
    expect((await status('sched-1', '*')).map((x) => x.variant)).toEqual(['base']);
    // The target in the query instead of the body.
    const again = await stack.client.DELETE('/sync/{name}/variant/{variant}', {
      params: { path: { name: 'list-events', variant: 'v2' }, query: { provider_config_key: 'luma', connection_id: 'sched-1' } },
    });
    expect([again.response.status, again.error?.error.code]).toEqual([404, 'unknown_sync_variant']);
    const base = await stack.client.DELETE('/sync/{name}/variant/{variant}', { params: { path: { name: 'list-events', variant: 'base' } }, body: target });
    expect([base.response.status, base.error?.error.code]).toEqual([400, 'invalid_variant']);
  });

  test('concurrent variant creates never exceed the limit, and a run of a deleted variant does not bring it back', async () => {
    // user-files/selected is not auto-start: its variants get paused schedules and no runs.
    expect((await connectOneDrive(stack, 'variants-od')).status).toBe(201);
    const target = { provider_config_key: 'one-drive', connection_id: 'variants-od' };
    for (let i = 0; i < 18; i++) expect((await stack.api('POST', `/sync/user-files%2Fselected/variant/v${i}`, { body: target })).status).toBe(200);
    // Two places left, five asking at once: two get them.
    const racers = await Promise.all(
      ['r0', 'r1', 'r2', 'r3', 'r4'].map((v) => stack.api('POST', `/sync/user-files%2Fselected/variant/${v}`, { body: target })),
    );
    expect(racers.map((r) => r.status).sort()).toEqual([200, 200, 409, 409, 409]);
    for (const r of racers.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('too_many_variants');
    const variants = (await status('variants-od', 'user-files/selected', 'one-drive')).map((x) => x.variant).filter((v) => v !== 'base');
    expect(variants).toHaveLength(20);
    // The same name twice at once: one is created, the other told it exists.
    await stack.api('DELETE', '/sync/user-files%2Fselected/variant/v0', { body: target });
    const same = await Promise.all([0, 1].map(() => stack.api('POST', '/sync/user-files%2Fselected/variant/twin', { body: target })));
    expect(same.map((r) => [r.status, r.body.error?.code ?? null]).sort()).toEqual([
      [200, null],
      [409, 'sync_variant_already_exists'],
    ]);

    // A fire already on its way as the variant is deleted: its run stops at the start and writes nothing.
    await connectLuma('variants-luma');
    const connection = (await stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'variants-luma' }))!;
    const late = { params: { path: { name: 'list-events', variant: 'late' } }, body: { provider_config_key: 'luma', connection_id: 'variants-luma' } };
    expect((await stack.client.POST('/sync/{name}/variant/{variant}', late)).response.status).toBe(200);
    const lateId = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', 'variants-luma', 'list-events', 'late');
    await stack.temporal.workflow.getHandle(lateId).result();
    expect((await stack.client.DELETE('/sync/{name}/variant/{variant}', late)).response.status).toBe(200);
    const input = syncRunInput({ settings: { heartbeatTimeoutMs: 30_000 } }, connection, { name: 'list-events', variant: 'late' });
    const failed = await stack.temporal.workflow.execute('syncRun', { workflowId: lateId, taskQueue: stack.taskQueue, args: [input] }).then(
      () => null,
      (err: unknown) => err,
    );
    // The refusal, wherever the workflow's failure carries it (the activity's failure, under the run's own).
    const types: unknown[] = [];
    for (let e = failed as { cause?: unknown; type?: unknown } | null; e; e = e.cause as typeof e) types.push(e.type);
    expect(types).toContain('unknown_sync_variant');
    expect((await status('variants-luma', '*')).map((x) => x.variant)).toEqual(['base']);
    const lateRecords = await listRecords(stack.client, { model: 'CalendarEvent', connectionId: 'variants-luma', providerConfigKey: 'luma', variant: 'late' });
    expect(lateRecords.records).toHaveLength(0);
  });

  test('deleting a connection deletes its schedules', async () => {
    await connectLuma('sched-gone');
    expect((await schedule('sched-gone')).state.paused).toBe(false);
    const res = await stack.client.DELETE('/connections/{connectionId}', {
      params: { path: { connectionId: 'sched-gone' }, query: { provider_config_key: 'luma' } },
    });
    expect([res.response.status, res.data]).toEqual([200, { success: true }]);
    await expect(schedule('sched-gone')).rejects.toBeInstanceOf(ScheduleNotFoundError);
    // Other connections keep theirs.
    expect((await schedule('sched-1')).state.paused).toBe(false);
  });

  test('at worker start, schedules follow a changed default frequency (overrides stay) and syncs without one get one; idempotent, safe run at once', async () => {
    await connectLuma('sched-r1');
    await connectLuma('sched-r2');
    await connectLuma('sched-r3');
    const override = await stack.client.PUT('/sync/update-connection-frequency', {
      body: { provider_config_key: 'luma', connection_id: 'sched-r2', sync_name: 'list-events', frequency: 'every 45 minutes' },
    });
    expect(override.response.status).toBe(200);
    // sched-r3 as a connection of an earlier version: no schedule.
    await stack.temporal.schedule.getHandle(scheduleId(stack, 'sched-r3', 'list-events')).delete();

    /** Start-up reconcile passes the stack's worker has finished (its log line). */
    const reconcilePasses = () =>
      stack.logs.filter((l) => l.includes('sync schedules reconciled') || l.includes('sync schedule reconcile pass stopped')).length;
    const def = stack.core.registry.getSync('luma', 'list-events')!;
    const original = def.frequency;
    const deps = {
      temporal: stack.temporal,
      registry: stack.core.registry,
      stores: stack.core.stores,
      settings: { temporalIdPrefix: stack.temporalIdPrefix, syncTaskQueue: stack.taskQueue, heartbeatTimeoutMs: 10_000 },
    };
    try {
      // The code's default changes, and the worker restarts with it.
      def.frequency = 'every 2h';
      const passesBefore = reconcilePasses();
      await stack.stopWorker();
      await stack.startWorker();
      // The restarted worker's own pass must be over before the two below start: a schedule it
      // updates after them would be left at 2 h (seen once on a loaded machine).
      await waitUntil(async () => reconcilePasses() > passesBefore, { retryErrors: true });
      await waitUntil(async () => everyMs(await schedule('sched-r1'))[0] === 2 * HOUR, { retryErrors: true });
      await waitUntil(async () => everyMs(await schedule('sched-r3'))[0] === 2 * HOUR, { retryErrors: true });
      expect((await schedule('sched-r3')).state.paused).toBe(false); // auto-start
      expect(everyMs(await schedule('sched-r2'))).toEqual([45 * 60_000]);
      expect((await status('sched-r1'))[0].frequency).toBe('every 2h');

      // Two workers starting at once with yet another default: both succeed, one result.
      def.frequency = 'every 3h';
      const both = await Promise.all([reconcileSyncSchedules(deps), reconcileSyncSchedules(deps)]);
      expect(both.map((r) => r.failed)).toEqual([0, 0]);
      for (const id of ['sched-1', 'sched-2', 'sched-r1', 'sched-r3']) expect(everyMs(await schedule(id))).toEqual([3 * HOUR]);
      expect(everyMs(await schedule('sched-r2'))).toEqual([45 * 60_000]);
      // And once more: nothing left to change.
      const again = await reconcileSyncSchedules(deps);
      expect(again).toMatchObject({ created: 0, updated: 0, failed: 0 });
      expect(again.checked).toBeGreaterThanOrEqual(5);
    } finally {
      def.frequency = original;
    }
  });
});

function everyMs(desc: { spec: { intervals?: Array<{ every: number }> } }): number[] {
  return (desc.spec.intervals ?? []).map((i) => i.every);
}
