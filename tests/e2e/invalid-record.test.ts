import { WorkflowFailedError } from '@temporalio/client';
import { syncWorkflowId } from '../../control';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { readAllRecordsTyped } from '../support/weft-client';

const API_KEY = 'sandbox-luma-api-key';

/** Records are validated with their zod model in production: one bad record stops the run. */
describe('an invalid record from the provider', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({ luma: { seed: 3, eventCount: 120, maxPageSize: 50 } });
    await createLumaIntegration(stack);
    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'v-user', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(created.response.status).toBe(201);
    await stack.waitForSync('v-user', 'list-events');
  });
  afterAll(async () => stack?.shutdown());

  test('stops the run with invalid_sync_record and the exact validation failure record', async () => {
    const [bad] = stack.luma.eventIds().slice(60, 61);
    stack.luma.corruptEvent(bad, { start_at: 'next tuesday', url: 'not a url' });
    stack.luma.editEvents(stack.luma.eventIds().slice(110, 111));
    const readEvents = () => readAllRecordsTyped(stack.client, { model: 'CalendarEvent', connectionId: 'v-user' });
    const before = await readEvents();

    await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'v-user', syncs: ['list-events'] } });
    const failure = await stack.waitForSync('v-user', 'list-events').then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);

    const status = await stack.client.GET('/sync/status', {
      params: { query: { provider_config_key: 'luma', syncs: 'list-events', connection_id: 'v-user' } },
    });
    const sync = status.data!.syncs[0];
    expect(sync.status).toBe('ERROR');
    expect(sync.latestError).toEqual({
      code: 'invalid_sync_record',
      message: expect.stringContaining('CalendarEvent'),
      detail: {
        model: 'CalendarEvent',
        validation: [
          { path: 'start_at', message: 'Invalid ISO datetime', code: 'invalid_format' },
          { path: 'url', message: 'Invalid URL', code: 'invalid_format' },
        ],
      },
    });

    // Nothing of the failed run deleted anything, and the bad record was never stored.
    const after = await readEvents();
    expect(after.filter((r) => r._weft_metadata.deleted_at !== null)).toHaveLength(0);
    expect(after.find((r) => r.id === bad)?.start_at).toBe(before.find((r) => r.id === bad)?.start_at);
    // Not retried: validation failures cannot fix themselves (one attempt of runSync).
    const history = await stack.temporal.workflow
      .getHandle(syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', 'v-user', 'list-events', 'base'))
      .fetchHistory();
    const started = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes);
    expect(started.length).toBeGreaterThan(0);
    expect(started.map((e) => e.activityTaskStartedEventAttributes?.attempt)).toEqual(started.map(() => 1));
  });

  test('the API key never appears in logs, request logs or API responses', async () => {
    const logs = stack.logs.join('\n');
    expect(logs).not.toContain(API_KEY);
    await stack.core.stores.requestLogs.flush(); // entries are written in batches a few ms after their calls
    const requestLogs = await stack.core.stores.db.collection('request_logs').find({}).toArray();
    expect(requestLogs.length).toBeGreaterThan(0);
    expect(JSON.stringify(requestLogs)).not.toContain(API_KEY);
    const conn = await stack.client.GET('/connections');
    expect(conn.response.status).toBe(200);
    expect(JSON.stringify(conn.data)).not.toContain(API_KEY);
  });
});
