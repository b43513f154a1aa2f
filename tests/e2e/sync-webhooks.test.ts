import { Webhook } from 'standardwebhooks';
import { connectOneDrive, createLumaIntegration, createOneDriveIntegration, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';
import { startWebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver';
import { actionResult, listRecords, startAction, triggerAction } from '../../cli/api-client/client';

const API_KEY = 'sandbox-luma-api-key';
const CONN = 'wh-user';

/**
 * `sync` and `async_action` webhooks on the real stack: a run's end queues its events in the
 * outbox and their delivery workflows bring them to a local app endpoint, signed.
 */
describe('sync and async_action webhooks', () => {
  let stack: WeftStack;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let signingKey: string;

  const syncEvents = (connectionId = CONN) => receiver.received.filter((w) => w.body?.type === 'sync' && w.body.connectionId === connectionId);
  /** The run's events are queued before its workflow completes: the outbox answers at once, delivery follows. */
  const queuedSyncEvents = async () =>
    (await stack.core.stores.webhookOutbox.list({ environment: 'dev', type: 'sync', connectionId: CONN, limit: 100 })).events;
  const nextSyncEvent = async (seen: number): Promise<ReceivedWebhook> => {
    await receiver.waitFor(() => syncEvents().length > seen, 15_000);
    return syncEvents()[seen];
  };
  const readFrom = (cursor: string) =>
    listRecords(stack.client, { model: 'CalendarEvent', connectionId: CONN, providerConfigKey: 'luma', cursor, limit: 1000 });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    stack = await startWeftStack({
      luma: { seed: 21, eventCount: 40, maxPageSize: 50 },
      graph: { seed: 5, drives: [{ fileCount: 3 }] },
      egressAllow: { webhooks: [receiver.url] },
      temporalCallTimeoutMs: 10_000,
    });
    expect((await stack.client.PATCH('/environment', { body: { webhook_url: receiver.url } })).response.status).toBe(200);
    signingKey = (await stack.client.POST('/environment/webhook-signing-key/rotate')).data!.data.webhook_signing_key;
    await createLumaIntegration(stack);
    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: CONN, credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(created.response.status).toBe(201);
    await stack.waitForSync(CONN, 'list-events');
  });
  afterAll(async () => {
    await stack?.shutdown();
    await receiver?.close();
  });

  test('the initial run: one signed event per model, its cursor reads exactly the run records', async () => {
    const hit = await nextSyncEvent(0);
    expect(hit.body).toEqual({
      from: 'weft',
      type: 'sync',
      connectionId: CONN,
      providerConfigKey: 'luma',
      syncName: 'list-events',
      syncVariant: 'base',
      model: 'CalendarEvent',
      syncType: 'INITIAL',
      success: true,
      modifiedAfter: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      cursor: expect.any(String),
      responseResults: { added: 40, updated: 0, deleted: 0 },
    });
    // Verified the way an app verifies it: the Standard Webhooks library, the environment's key.
    expect(() => new Webhook(signingKey).verify(hit.raw, hit.headers as Record<string, string>)).not.toThrow();
    const page = await readFrom(hit.body.cursor);
    expect(page.records).toHaveLength(40);
    expect(new Set(page.records.map((r) => r.id))).toEqual(new Set(stack.luma.eventIds()));
  });

  test('an incremental run: the cursor starts at its own changes; a run without changes sends nothing', async () => {
    const seen = syncEvents().length;
    const edited = stack.luma.editEvents(3);
    const added = stack.luma.addEvents(2);
    await runSync(stack, 'luma', CONN, 'list-events');
    const hit = await nextSyncEvent(seen);
    expect(hit.body).toMatchObject({ syncType: 'INCREMENTAL', success: true, responseResults: { added: 2, updated: 3, deleted: 0 } });
    expect(Date.parse(hit.body.modifiedAfter)).toBeGreaterThan(Date.now() - 60_000);

    const page = await readFrom(hit.body.cursor);
    expect(page.records.map((r) => r.id).sort()).toEqual([...edited, ...added].sort());
    expect(page.next_cursor).toBeNull();

    // No changes, send_sync_completion_always off (the default): the run queues nothing.
    const queued = (await queuedSyncEvents()).length;
    await runSync(stack, 'luma', CONN, 'list-events');
    expect(await queuedSyncEvents()).toHaveLength(queued);
  });

  test('send_sync_completion_always: a run without changes is reported too', async () => {
    expect((await stack.client.PATCH('/environment', { body: { send_sync_completion_always: true } })).response.status).toBe(200);
    const seen = syncEvents().length;
    await runSync(stack, 'luma', CONN, 'list-events');
    const hit = await nextSyncEvent(seen);
    expect(hit.body).toMatchObject({ success: true, responseResults: { added: 0, updated: 0, deleted: 0 } });
    expect((await readFrom(hit.body.cursor)).records).toHaveLength(0);
    expect((await stack.client.PATCH('/environment', { body: { send_sync_completion_always: false } })).response.status).toBe(200);
  });

  test('a failed run: its code and validation record with send_sync_error_webhooks, nothing without', async () => {
    const [bad] = stack.luma.eventIds().slice(5, 6);
    stack.luma.corruptEvent(bad, { start_at: 'next tuesday' });
    stack.luma.editEvents([bad]);
    const seen = syncEvents().length;
    await expect(runSync(stack, 'luma', CONN, 'list-events')).rejects.toThrow();
    const hit = await nextSyncEvent(seen);
    expect(hit.body).toMatchObject({
      type: 'sync',
      success: false,
      model: 'CalendarEvent',
      syncType: 'INCREMENTAL',
      error: {
        type: 'invalid_sync_record',
        description: expect.stringContaining('CalendarEvent'),
        detail: { model: 'CalendarEvent', validation: [{ path: 'start_at', code: 'invalid_format' }] },
      },
      startedAt: expect.any(String),
      failedAt: expect.any(String),
    });
    expect(Date.parse(hit.body.failedAt)).toBeGreaterThanOrEqual(Date.parse(hit.body.startedAt));

    expect((await stack.client.PATCH('/environment', { body: { send_sync_error_webhooks: false } })).response.status).toBe(200);
    const queued = (await queuedSyncEvents()).length;
    await expect(runSync(stack, 'luma', CONN, 'list-events')).rejects.toThrow();
    expect(await queuedSyncEvents()).toHaveLength(queued);
  });

  test('an async action announces its end with an async_action webhook', async () => {
    await createOneDriveIntegration(stack);
    expect((await connectOneDrive(stack, 'od-async')).status).toBe(201);
    const drive = { connectionId: 'od-async', providerConfigKey: 'one-drive' };
    const started = await startAction(stack.client, { action: 'list-drives', input: {}, ...drive });
    expect(started.response.status).toBe(202);
    const { id, statusUrl } = started.data!;
    const hit = await receiver.waitFor((w) => w.body?.type === 'async_action', 15_000);
    expect(hit.body).toEqual({
      from: 'weft',
      type: 'async_action',
      connectionId: 'od-async',
      providerConfigKey: 'one-drive',
      payload: { id, statusUrl },
    });
    // The output is readable at its statusUrl (the workflow's completion and the webhook's delivery race by milliseconds).
    expect(statusUrl).toBe(`/action/${id}`);
    let read = await actionResult(stack.client, { action: 'list-drives', id });
    for (let i = 0; i < 20 && read.response.status === 404; i++) {
      await new Promise((r) => setTimeout(r, 100));
      read = await actionResult(stack.client, { action: 'list-drives', id });
    }
    expect(read.response.status).toBe(200);
    // A sync-mode call sends none.
    await triggerAction(stack.client, { action: 'list-drives', input: {}, ...drive });
    const events = (await stack.core.stores.webhookOutbox.list({ environment: 'dev', type: 'async_action', limit: 10 })).events;
    expect(events.map((e) => e.payload)).toEqual([hit.body]);
  });

  test('no secret in any event', async () => {
    const all = JSON.stringify((await stack.core.stores.webhookOutbox.list({ environment: 'dev', limit: 1000 })).events);
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain(signingKey);
    expect(receiver.received.map((w) => w.raw).join('\n')).not.toContain(API_KEY);
  });
});
