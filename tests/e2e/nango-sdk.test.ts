import { Nango } from '@nangohq/node';
import { ScheduleNotFoundError } from '@temporalio/client';
import { syncWorkflowId, syncScheduleId } from '../../control';
import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { waitUntil } from '../support/wait';
import { sdk, sdkError } from '../support/nango-sdk-calls';

const API_KEY = 'sandbox-luma-api-key';
const EVENTS = 60;
const HOUR = 3_600_000;

/**
 * The promise to apps written against Nango: its own Node SDK (`@nangohq/node`),
 * pointed at a running Weft, drives syncs, variants, connections and records. Setup (the
 * integration, the connections) goes through Weft's API; every call under test goes through
 * the SDK only, and each asserts the effect (schedule, records, stored settings), not just
 * that the call did not throw.
 */
describe('Nango Node SDK against a running Weft', () => {
  let stack: WeftStack;
  let nango: Nango;

  beforeAll(async () => {
    // Status reads describe schedules and runs; on a loaded box one can take over the 1.5 s default.
    stack = await startWeftStack({ luma: { seed: 14, eventCount: EVENTS }, temporalCallTimeoutMs: 10_000 });
    await createLumaIntegration(stack);
    for (const id of ['sdk-1', 'sdk-2']) {
      const res = await stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: API_KEY }, tags: { team: 'blue' } },
      });
      expect(res.status).toBe(201);
      await stack.waitForSync(id, 'list-events');
    }
    nango = new Nango({ secretKey: stack.keys.dev, host: stack.apiUrl });
  });
  afterAll(async () => stack?.shutdown());

  function scheduleHandle(connectionId: string, variant = 'base') {
    const id = syncScheduleId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', variant);
    return stack.temporal.schedule.getHandle(id);
  }

  /** Temporal's own view of the schedule. */
  async function schedule(connectionId: string, variant = 'base') {
    const desc = await scheduleHandle(connectionId, variant).describe();
    return { paused: desc.state.paused, everyMs: (desc.spec.intervals ?? []).map((i) => i.every) };
  }

  async function status(connectionId: string, syncs: Parameters<Nango['syncStatus']>[1] = ['list-events']) {
    return (await sdk(nango.syncStatus('luma', syncs, connectionId))).syncs as any[];
  }

  async function allRecords(connectionId: string, variant?: string) {
    const out: any[] = [];
    let cursor: string | null = null;
    do {
      const page: { records: any[]; next_cursor: string | null } = await sdk(
        nango.listRecords({ providerConfigKey: 'luma', connectionId, model: 'CalendarEvent', variant, limit: 25, cursor }),
      );
      out.push(...page.records);
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  }

  test('getConnection and patchConnection: tags and webhook_url_override change, and a refused patch changes nothing', async () => {
    const before = await sdk(nango.getConnection('luma', 'sdk-1'));
    expect(before).toMatchObject({
      connection_id: 'sdk-1',
      provider_config_key: 'luma',
      provider: 'luma',
      tags: { team: 'blue' },
      webhook_url_override: null,
      credentials: { type: 'API_KEY', apiKey: API_KEY },
    });

    expect(await sdk(nango.patchConnection({ connectionId: 'sdk-1', provider_config_key: 'luma' }, { tags: { team: 'red', tier: 'gold' } }))).toEqual({
      success: true,
    });
    expect(
      await sdk(nango.patchConnection({ connectionId: 'sdk-1', provider_config_key: 'luma' }, { webhook_url_override: 'https://hooks.example.com/weft' })),
    ).toEqual({ success: true });
    const after = await sdk(nango.getConnection('luma', 'sdk-1'));
    expect(after).toMatchObject({ tags: { team: 'red', tier: 'gold' }, webhook_url_override: 'https://hooks.example.com/weft' });
    // The other connection is untouched.
    expect(await sdk(nango.getConnection('luma', 'sdk-2'))).toMatchObject({ tags: { team: 'blue' }, webhook_url_override: null });

    await expect(
      sdkError(nango.patchConnection({ connectionId: 'sdk-1', provider_config_key: 'luma' }, { webhook_url_override: 'not a url' })),
    ).resolves.toEqual([400, 'invalid_body']);
    await expect(sdkError(nango.patchConnection({ connectionId: 'nobody', provider_config_key: 'luma' }, { tags: { a: 'b' } }))).resolves.toEqual([
      404,
      'unknown_connection',
    ]);
    expect(await sdk(nango.getConnection('luma', 'sdk-1'))).toMatchObject({
      tags: { team: 'red', tier: 'gold' },
      webhook_url_override: 'https://hooks.example.com/weft',
    });
  });

  test('pauseSync and startSync for one connection: the schedule is paused and unpaused, syncStatus reads it', async () => {
    await sdk(nango.pauseSync('luma', ['list-events'], 'sdk-1'));
    expect(await schedule('sdk-1')).toMatchObject({ paused: true });
    expect(await schedule('sdk-2')).toMatchObject({ paused: false });
    expect((await status('sdk-1'))[0]).toMatchObject({ connection_id: 'sdk-1', name: 'list-events', status: 'PAUSED', nextScheduledSyncAt: null });

    await sdk(nango.startSync('luma', ['list-events'], 'sdk-1'));
    expect(await schedule('sdk-1')).toMatchObject({ paused: false });
    const [running] = await status('sdk-1');
    expect(running.status).not.toBe('PAUSED');
    expect(Date.parse(running.nextScheduledSyncAt)).toBeGreaterThan(Date.now());

    await expect(sdkError(nango.pauseSync('luma', ['no-such-sync'], 'sdk-1'))).resolves.toEqual([400, 'unknown_sync']);
    expect(await schedule('sdk-1')).toMatchObject({ paused: false });
  });

  test('pauseSync and startSync without a connection: every connection of the integration, eventually', async () => {
    await sdk(nango.pauseSync('luma', ['list-events']));
    await waitUntil(async () => (await schedule('sdk-1')).paused && (await schedule('sdk-2')).paused, { retryErrors: true });
    await waitUntil(
      async () => {
        const all = (await sdk(nango.syncStatus('luma', '*'))).syncs as any[];
        return all.length === 2 && all.every((s) => s.status === 'PAUSED');
      },
      { retryErrors: true },
    );

    // An empty list means every sync.
    await sdk(nango.startSync('luma', []));
    await waitUntil(async () => !(await schedule('sdk-1')).paused && !(await schedule('sdk-2')).paused, { retryErrors: true });
    await waitUntil(async () => ((await sdk(nango.syncStatus('luma', '*'))).syncs as any[]).every((s) => s.status !== 'PAUSED'), { retryErrors: true });
  });

  test('updateSyncConnectionFrequency sets the interval of that connection, and null goes back to the default', async () => {
    expect(await sdk(nango.updateSyncConnectionFrequency('luma', 'list-events', 'sdk-1', 'every 30 minutes'))).toEqual({ frequency: 'every 30m' });
    expect(await schedule('sdk-1')).toEqual({ paused: false, everyMs: [HOUR / 2] });
    expect(await schedule('sdk-2')).toMatchObject({ everyMs: [HOUR] });
    expect((await status('sdk-1'))[0].frequency).toBe('every 30m');

    await expect(sdkError(nango.updateSyncConnectionFrequency('luma', 'list-events', 'sdk-1', '5s'))).resolves.toEqual([400, 'frequency_too_short']);
    expect((await schedule('sdk-1')).everyMs).toEqual([HOUR / 2]);

    expect(await sdk(nango.updateSyncConnectionFrequency('luma', 'list-events', 'sdk-1', null))).toEqual({ frequency: 'every 1h' });
    expect((await schedule('sdk-1')).everyMs).toEqual([HOUR]);
    expect((await status('sdk-1'))[0].frequency).toBe('every 1h');
  });

  test('createSyncVariant / deleteSyncVariant: a variant with its own schedule and records, driven by the sync calls, gone when deleted', async () => {
    const target = { provider_config_key: 'luma', connection_id: 'sdk-2', name: 'list-events', variant: 'eu' };
    const created = await sdk(nango.createSyncVariant(target));
    expect(created).toMatchObject({ name: 'list-events', variant: 'eu' });
    expect(typeof created.id).toBe('string');
    expect(await schedule('sdk-2', 'eu')).toEqual({ paused: false, everyMs: [HOUR] }); // list-events is auto-start

    const eu = { name: 'list-events', variant: 'eu' };
    await waitUntil(async () => (await status('sdk-2', [eu]))[0]?.status === 'SUCCESS', { timeoutMs: 60_000, retryErrors: true });
    const variantRecords = await allRecords('sdk-2', 'eu');
    expect(variantRecords).toHaveLength(EVENTS);
    expect((await status('sdk-2', '*')).map((s) => s.variant).sort()).toEqual(['base', 'eu']);

    // The sync calls address the variant alone.
    await sdk(nango.pauseSync('luma', [eu], 'sdk-2'));
    expect((await schedule('sdk-2', 'eu')).paused).toBe(true);
    expect((await schedule('sdk-2')).paused).toBe(false);
    expect((await status('sdk-2', [eu]))[0].status).toBe('PAUSED');
    expect(await sdk(nango.updateSyncConnectionFrequency('luma', eu, 'sdk-2', '2h'))).toEqual({ frequency: 'every 2h' });
    expect(await schedule('sdk-2', 'eu')).toEqual({ paused: true, everyMs: [2 * HOUR] });
    // A paused variant still runs when triggered, and stays paused.
    const finishedBefore = (await status('sdk-2', [eu]))[0].finishedAt;
    await sdk(nango.triggerSync('luma', [eu], 'sdk-2'));
    await stack.temporal.workflow.getHandle(syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', 'sdk-2', 'list-events', 'eu')).result();
    const [triggered] = await status('sdk-2', [eu]);
    expect(triggered.status).toBe('PAUSED');
    expect(triggered.finishedAt > finishedBefore).toBe(true);
    expect((await schedule('sdk-2')).everyMs).toEqual([HOUR]);

    // Its records are its own: pruning them leaves the base sync's payloads alone.
    const last = variantRecords[variantRecords.length - 1];
    expect(
      await sdk(
        nango.pruneRecords({
          providerConfigKey: 'luma',
          connectionId: 'sdk-2',
          model: 'CalendarEvent',
          variant: 'eu',
          untilCursor: last._weft_metadata.cursor,
        }),
      ),
    ).toEqual({ count: EVENTS, has_more: false });
    expect((await allRecords('sdk-2', 'eu')).every((r) => Object.keys(r).sort().join() === '_weft_metadata,id')).toBe(true);
    expect((await allRecords('sdk-2')).every((r) => typeof r.name === 'string')).toBe(true);

    await expect(sdkError(nango.createSyncVariant(target))).resolves.toEqual([409, 'sync_variant_already_exists']);
    expect(await sdk(nango.deleteSyncVariant(target))).toEqual({ success: true });
    await expect(scheduleHandle('sdk-2', 'eu').describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect(await allRecords('sdk-2', 'eu')).toEqual([]);
    expect(await allRecords('sdk-2')).toHaveLength(EVENTS);
    expect((await status('sdk-2', '*')).map((s) => s.variant)).toEqual(['base']);
    await expect(sdkError(nango.deleteSyncVariant(target))).resolves.toEqual([404, 'unknown_sync_variant']);
  });

  test('listRecords pages by cursor; pruneRecords drops payloads up to a cursor and keeps ids and metadata', async () => {
    const before = await allRecords('sdk-1');
    expect(before).toHaveLength(EVENTS);
    expect(new Set(before.map((r) => r.id)).size).toBe(EVENTS);
    const k = 20;
    const pruned = await sdk(
      nango.pruneRecords({
        providerConfigKey: 'luma',
        connectionId: 'sdk-1',
        model: 'CalendarEvent',
        untilCursor: before[k - 1]._weft_metadata.cursor,
        limit: 15,
      }),
    );
    expect(pruned).toEqual({ count: 15, has_more: true });
    expect(
      await sdk(
        nango.pruneRecords({ providerConfigKey: 'luma', connectionId: 'sdk-1', model: 'CalendarEvent', untilCursor: before[k - 1]._weft_metadata.cursor }),
      ),
    ).toEqual({
      count: k - 15,
      has_more: false,
    });

    const after = await allRecords('sdk-1');
    expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id));
    after.forEach((r, i) => {
      expect(r._weft_metadata.cursor).toBe(before[i]._weft_metadata.cursor);
      if (i < k) expect(Object.keys(r).sort()).toEqual(['_weft_metadata', 'id']);
      else expect(r).toEqual(before[i]);
    });
    const picked = [before[3].id, before[k + 5].id];
    expect((await sdk(nango.listRecords({ providerConfigKey: 'luma', connectionId: 'sdk-1', model: 'CalendarEvent', ids: picked }))).records).toEqual([
      after[3],
      after[k + 5],
    ]);
    // The filter of listRecords still applies to pruned records.
    const added = await sdk(nango.listRecords({ providerConfigKey: 'luma', connectionId: 'sdk-1', model: 'CalendarEvent', filter: 'added', limit: 100 }));
    expect(added.records.map((r: any) => r.id)).toEqual(before.map((r) => r.id));
  });

  test('triggerSync for one connection with opts reset and emptyCache: the cache is emptied and refilled by a fresh run', async () => {
    const before = await allRecords('sdk-1');
    const finishedBefore = (await status('sdk-1'))[0].finishedAt;
    const t0 = new Date().toISOString();

    // reset without emptyCache: a full run again, the cached records stay (same first_seen_at).
    await sdk(nango.triggerSync('luma', ['list-events'], 'sdk-1', { reset: true }));
    await stack.waitForSync('sdk-1', 'list-events');
    const [afterReset] = await status('sdk-1');
    expect(afterReset.status).toBe('SUCCESS');
    expect(afterReset.finishedAt > finishedBefore).toBe(true);
    const kept = await allRecords('sdk-1');
    expect(kept.map((r) => [r.id, r._weft_metadata.first_seen_at])).toEqual(before.map((r) => [r.id, r._weft_metadata.first_seen_at]));
    // The records pruned earlier are unchanged upstream: a reset alone writes nothing for them (as a plain sync would not).
    const prunedIds = before.filter((r) => r.name === undefined).map((r) => r.id);
    expect(prunedIds).toHaveLength(20);
    expect(kept.filter((r) => r.name === undefined).map((r) => r.id)).toEqual(prunedIds);

    // reset + emptyCache: the records are dropped first, so every one is seen anew with its payload (the pruned ones too).
    await sdk(nango.triggerSync('luma', ['list-events'], 'sdk-1', { reset: true, emptyCache: true }));
    await stack.waitForSync('sdk-1', 'list-events');
    const refilled = await allRecords('sdk-1');
    expect(refilled.map((r) => r.id).sort()).toEqual(before.map((r) => r.id).sort());
    for (const r of refilled) {
      expect(r._weft_metadata.first_seen_at > t0).toBe(true);
      expect(typeof r.name).toBe('string');
    }
    expect((await status('sdk-1'))[0]).toMatchObject({ status: 'SUCCESS', recordCount: { CalendarEvent: EVENTS } });

    await expect(sdkError(nango.triggerSync('luma', ['no-such-sync'], 'sdk-1'))).resolves.toEqual([400, 'unknown_sync']);
    await expect(sdkError(nango.triggerSync('luma', ['list-events'], 'nobody'))).resolves.toEqual([404, 'unknown_connection']);
  });

  test("triggerSync's deprecated sync-mode form (still in the SDK) means the same as opts", async () => {
    const seen = async () => (await allRecords('sdk-1')).map((r) => [r.id, r._weft_metadata.first_seen_at]);
    const finishedAt = async () => (await status('sdk-1'))[0].finishedAt as string;
    const run = async (trigger: () => Promise<unknown>) => {
      const before = await finishedAt();
      await sdk(trigger());
      await stack.waitForSync('sdk-1', 'list-events');
      expect((await finishedAt()) > before).toBe(true);
    };

    // true (full_refresh), 'incremental': a run over the cached records.
    const cached = await seen();
    await run(() => nango.triggerSync('luma', ['list-events'], 'sdk-1', true));
    await run(() => nango.triggerSync('luma', ['list-events'], 'sdk-1', 'incremental'));
    expect(await seen()).toEqual(cached);

    // 'full_refresh_and_clear_cache': reset + emptyCache.
    const t0 = new Date().toISOString();
    await run(() => nango.triggerSync('luma', ['list-events'], 'sdk-1', 'full_refresh_and_clear_cache'));
    const fresh = await seen();
    expect(fresh).toHaveLength(EVENTS);
    expect(fresh.every(([, firstSeen]) => firstSeen > t0)).toBe(true);

    // Older SDKs sent full_resync; a mode Nango does not have, or both forms at once, is refused and runs nothing.
    await run(() =>
      stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'sdk-1', syncs: ['list-events'], full_resync: true } }),
    );
    const before = await finishedAt();
    for (const extra of [{ sync_mode: 'everything' }, { sync_mode: 'full_refresh', opts: { reset: true } }]) {
      const res = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'sdk-1', syncs: ['list-events'], ...extra } });
      expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_body']);
    }
    expect(await finishedAt()).toBe(before);
    expect(await seen()).toEqual(fresh);
  });

  test('triggerSync without a connection: every connection runs again, eventually', async () => {
    const finished = async () => Object.fromEntries(((await sdk(nango.syncStatus('luma', ['list-events']))).syncs as any[]).map((s) => [s.connection_id, s]));
    const before = await finished();
    expect(Object.keys(before).sort()).toEqual(['sdk-1', 'sdk-2']);
    await sdk(nango.triggerSync('luma', ['list-events']));
    await waitUntil(
      async () => {
        const now = await finished();
        return ['sdk-1', 'sdk-2'].every((id) => now[id].status === 'SUCCESS' && now[id].finishedAt > before[id].finishedAt);
      },
      { timeoutMs: 60_000, retryErrors: true },
    );
    // And with no sync named: every sync of every connection.
    const mid = await finished();
    await sdk(nango.triggerSync('luma'));
    await waitUntil(
      async () => {
        const now = await finished();
        return ['sdk-1', 'sdk-2'].every((id) => now[id].status === 'SUCCESS' && now[id].finishedAt > mid[id].finishedAt);
      },
      { timeoutMs: 60_000, retryErrors: true },
    );

    // With reset + emptyCache: every connection's cache is emptied and refilled.
    const t0 = new Date().toISOString();
    await sdk(nango.triggerSync('luma', ['list-events'], undefined, { reset: true, emptyCache: true }));
    await waitUntil(
      async () => {
        const now = await finished();
        if (!['sdk-1', 'sdk-2'].every((id) => now[id].status === 'SUCCESS' && now[id].finishedAt > t0)) return false;
        for (const id of ['sdk-1', 'sdk-2']) {
          const records = await allRecords(id);
          if (records.length !== EVENTS || !records.every((r) => r._weft_metadata.first_seen_at > t0 && typeof r.name === 'string')) return false;
        }
        return true;
      },
      { timeoutMs: 60_000, retryErrors: true },
    );
  });
});
