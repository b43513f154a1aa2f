import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { readAllRecordsTyped } from '../support/weft-client';
import { listRecords, type RecordsPage } from '../../cli/api-client/client';
import { toCalendarEvent } from '../../integrations/luma/mappers';

const API_KEY = 'sandbox-luma-api-key';
const EVENTS = 1_200;

/** The whole path on real Temporal + FerretDB: REST → syncRun workflow → records → REST. */
describe('Luma list-events, end to end', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({ luma: { seed: 7, eventCount: EVENTS } });
    await createLumaIntegration(stack);
  });
  afterAll(async () => stack?.shutdown());

  /** Every CalendarEvent record of a connection, typed as CalendarEvent (the `weft` CLI's client). */
  const readEvents = (connectionId: string, opts: { filter?: string; modifiedAfter?: string } = {}) =>
    readAllRecordsTyped(stack.client, { model: 'CalendarEvent', connectionId, ...opts });

  async function status(connectionId: string) {
    const res = await stack.client.GET('/sync/status', {
      params: { query: { provider_config_key: 'luma', syncs: 'list-events', connection_id: connectionId } },
    });
    expect(res.response.status).toBe(200);
    return res.data!.syncs[0];
  }

  test('a new connection syncs every event into records that GET /records returns', async () => {
    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(created.response.status).toBe(201);
    expect(JSON.stringify(created.data)).not.toContain(API_KEY);

    // The initial run starts by itself (auto-start); an explicit trigger joins it.
    const trigger = await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } });
    expect(trigger.data).toEqual({ success: true });
    const summary: any = await stack.waitForSync('user-1', 'list-events');
    expect(summary.result.CalendarEvent).toEqual({ added: EVENTS, updated: 0, deleted: 0 });

    const records = await readEvents('user-1');
    expect(records).toHaveLength(EVENTS);
    expect(new Set(records.map((r) => r.id)).size).toBe(EVENTS);

    const expected = new Map(stack.luma.events().map((e) => [e.api_id, toCalendarEvent(e as never)]));
    for (const r of records) {
      const { _weft_metadata: meta, ...data } = r;
      expect(data).toEqual(expected.get(r.id));
      expect(meta.last_action).toBe('ADDED');
      expect(meta.deleted_at).toBeNull();
      expect(typeof meta.cursor).toBe('string');
    }

    const s = await status('user-1');
    expect(s).toMatchObject({ connection_id: 'user-1', name: 'list-events', variant: 'base', status: 'SUCCESS', recordCount: { CalendarEvent: EVENTS } });
    expect(s.latestResult).toEqual({ CalendarEvent: { added: EVENTS, updated: 0, deleted: 0 } });
  });

  test('a second run over unchanged data writes nothing', async () => {
    const before = await stack.core.stores.db
      .collection('records')
      .find({}, { projection: { id: 1, seq: 1, last_modified_at: 1 } })
      .toArray();
    await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: [] } });
    const summary: any = await stack.waitForSync('user-1', 'list-events');
    expect(summary.result.CalendarEvent).toEqual({ added: 0, updated: 0, deleted: 0 });
    expect(summary.changed).toBe(false);
    const after = await stack.core.stores.db
      .collection('records')
      .find({}, { projection: { id: 1, seq: 1, last_modified_at: 1 } })
      .toArray();
    const key = (d: any) => `${d.id}|${d.seq}|${d.last_modified_at.toISOString()}`;
    expect(after.map(key).sort()).toEqual(before.map(key).sort());
  });

  test('edits, deletions and additions between runs are reported exactly', async () => {
    const edited = stack.luma.editEvents(7);
    const deleted = stack.luma.deleteEvents(5).filter((id) => !edited.includes(id));
    const added = stack.luma.addEvents(3);
    const runStart = new Date().toISOString();

    await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } });
    const summary: any = await stack.waitForSync('user-1', 'list-events');
    const editedAlive = edited.filter((id) => !deleted.includes(id));
    expect(summary.result.CalendarEvent).toEqual({ added: added.length, updated: editedAlive.length, deleted: deleted.length });

    const changed = await readEvents('user-1', { modifiedAfter: runStart });
    const ids = (action: string) =>
      changed
        .filter((r) => r._weft_metadata.last_action === action)
        .map((r) => r.id)
        .sort();
    expect(ids('UPDATED')).toEqual([...editedAlive].sort());
    expect(ids('DELETED')).toEqual([...deleted].sort());
    expect(ids('ADDED')).toEqual([...added].sort());

    const onlyDeleted = await readEvents('user-1', { filter: 'deleted' });
    expect(onlyDeleted.map((r) => r.id).sort()).toEqual([...deleted].sort());
    expect(onlyDeleted.every((r) => r._weft_metadata.deleted_at !== null)).toBe(true);

    const updatedRecord = changed.find((r) => r.id === editedAlive[0]);
    expect(updatedRecord?.name).toBe(toCalendarEvent(stack.luma.getEvent(editedAlive[0]) as never).name);
    expect((await status('user-1')).recordCount).toEqual({ CalendarEvent: EVENTS - deleted.length + added.length });
  });

  test('records page by cursor without skipping or repeating', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: RecordsPage<'CalendarEvent'> = await listRecords(stack.client, {
        model: 'CalendarEvent',
        connectionId: 'user-1',
        providerConfigKey: 'luma',
        limit: 97,
        cursor: cursor ?? undefined,
      });
      expect(page.records.length).toBeLessThanOrEqual(97);
      seen.push(...page.records.map((r) => r.id));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBeGreaterThan(10);
    expect(new Set(seen).size).toBe(seen.length);
    const total = await stack.core.stores.db.collection('records').countDocuments({});
    expect(seen).toHaveLength(total);
  });

  test('ids= takes up to 1,000 repeated ids (more than the query parser allowed by default: 20) and answers exactly those records', async () => {
    const stored = await stack.core.stores.db
      .collection('records')
      .find({ connection: { $exists: true }, deleted_at: null })
      .project({ id: 1 })
      .toArray();
    const wanted = stored.slice(0, 100).map((d) => d.id as string);
    expect(wanted).toHaveLength(100);
    // The typed client sends an array as repeated `ids=` (openapi-fetch's form style).
    const res = await listRecords(stack.client, {
      model: 'CalendarEvent',
      connectionId: 'user-1',
      providerConfigKey: 'luma',
      limit: 1000,
      ids: [...wanted, 'no-such-event'],
    });
    expect(res.records.map((r) => r.id).sort()).toEqual([...wanted].sort());

    const header = { 'connection-id': 'user-1', 'provider-config-key': 'luma' };
    const tooMany = Array.from({ length: 1_001 }, (_, i) => `e${i}`);
    const refused = await stack.client.GET('/records', { params: { header, query: { model: 'CalendarEvent', ids: tooMany } } });
    expect(refused.response.status).toBe(400);
    expect(JSON.stringify(refused.error)).toContain('at most 1000 ids');
  });

  test('a filter that matches little answers within a bounded read: pages may be short or empty and still carry a cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let shortPagesWithCursor = 0;
    do {
      const page: RecordsPage<'CalendarEvent'> = await listRecords(stack.client, {
        model: 'CalendarEvent',
        connectionId: 'user-1',
        providerConfigKey: 'luma',
        filter: 'deleted',
        limit: 1,
        cursor: cursor ?? undefined,
      });
      seen.push(...page.records.map((r) => r.id));
      cursor = page.next_cursor;
      if (cursor && page.records.length === 0) shortPagesWithCursor += 1;
    } while (cursor);
    // The deleted records are the latest changes: the first request stops after its bound with none.
    expect(shortPagesWithCursor).toBeGreaterThan(0);
    const deleted = await stack.core.stores.db.collection('records').find({ last_action: 'DELETED' }).toArray();
    expect(seen.sort()).toEqual(deleted.map((d) => d.id).sort());
    expect(new Set(seen).size).toBe(seen.length);
  });

  test('a run that fails midway deletes nothing and reports the error', async () => {
    await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'user-fail', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    await stack.waitForSync('user-fail', 'list-events');
    const liveBefore = (await readEvents('user-fail', { filter: 'added,updated' })).length;

    stack.luma.deleteEvents(4);
    stack.luma.setLatency(60);
    const beforeRequests = stack.luma.requestLog().length;
    await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-fail', syncs: ['list-events'] } });
    // Let a few pages through, then make Luma refuse the key: a non-retryable failure.
    while (stack.luma.requestLog().length < beforeRequests + 3) await new Promise((r) => setTimeout(r, 20));
    stack.luma.failNext(1_000, 401);
    await expect(stack.waitForSync('user-fail', 'list-events')).rejects.toThrow();
    stack.luma.failNext(0);
    stack.luma.setLatency(0);

    const s = await status('user-fail');
    expect(s.status).toBe('ERROR');
    expect(s.latestError?.code).toBe('provider_auth_failed');
    const deletedNow = await readEvents('user-fail', { filter: 'deleted' });
    expect(deletedNow).toHaveLength(0);
    expect((await readEvents('user-fail')).length).toBe(liveBefore);

    const conn = await stack.client.GET('/connections', { params: { query: { connectionId: 'user-fail' } } });
    expect(conn.data?.connections[0].errors[0].type).toBe('auth');
  });
});

describe('API auth, isolation and input errors', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({ luma: { seed: 3, eventCount: 20 } });
    await createLumaIntegration(stack);
    await createLumaIntegration(stack, { key: stack.keys.prod });
    const res = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'dev-user', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(res.response.status).toBe(201);
    await stack.waitForSync('dev-user', 'list-events');
  });
  afterAll(async () => stack?.shutdown());

  test('an unknown or missing secret key gets 401', async () => {
    for (const key of [null, 'weft_sk_dev_not-a-real-key-000000000']) {
      const res = await stack.api('GET', '/connections', { key });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
    const malformed = await stack.api('GET', '/connections', { key: null, headers: { authorization: 'Basic abc' } });
    expect(malformed.status).toBe(401);
  });

  test("another environment's connection is invisible (404)", async () => {
    const prod = stack.clientWithKey(stack.keys.prod);
    const header = { 'connection-id': 'dev-user', 'provider-config-key': 'luma' };
    const records = await prod.GET('/records', { params: { header, query: { model: 'CalendarEvent' } } });
    expect(records.response.status).toBe(404);
    expect(records.error?.error.code).toBe('unknown_connection');
    const get = await prod.GET('/connections/{connectionId}', { params: { path: { connectionId: 'dev-user' }, query: { provider_config_key: 'luma' } } });
    expect(get.response.status).toBe(404);
    const trigger = await prod.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'dev-user', syncs: [] } });
    expect(trigger.response.status).toBe(404);
    const list = await prod.GET('/connections');
    expect(list.data?.connections).toEqual([]);
    // The dev key still sees it.
    expect((await stack.client.GET('/records', { params: { header, query: { model: 'CalendarEvent' } } })).response.status).toBe(200);
  });

  test('malformed bodies get 400 with the zod issues and change nothing', async () => {
    const missing = await stack.api('POST', '/connections', { body: { provider_config_key: 'luma', connection_id: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('invalid_body');
    expect(missing.body.error.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'credentials', code: expect.any(String), message: expect.any(String) })]),
    );

    const wrongType = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'x', credentials: { type: 'API_KEY', apiKey: 42 } },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.errors[0].path).toBe('credentials.apiKey');

    const notJson = await stack.api('POST', '/sync/trigger', { body: '{"provider_config_key": ' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_json');

    const unknownField = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', syncs: [], surprise: true } });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.errors[0].code).toBe('unrecognized_keys');

    const noModel = await stack.api('GET', '/records', { headers: { 'connection-id': 'dev-user', 'provider-config-key': 'luma' } });
    expect(noModel.status).toBe(400);
    expect(noModel.body.error.code).toBe('invalid_query_params');
    expect(noModel.body.error.errors[0].path).toBe('model');

    const noHeaders = await stack.api('GET', '/records?model=CalendarEvent');
    expect(noHeaders.status).toBe(400);
    expect(noHeaders.body.error.code).toBe('invalid_headers');

    const badCursor = await stack.api('GET', '/records?model=CalendarEvent&cursor=garbage', {
      headers: { 'connection-id': 'dev-user', 'provider-config-key': 'luma' },
    });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error.code).toBe('invalid_cursor');

    const unknownSync = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', syncs: ['nope'] } });
    expect(unknownSync.status).toBe(400);
    expect(unknownSync.body.error.code).toBe('unknown_sync');

    const list = await stack.client.GET('/connections');
    expect(list.data?.connections.map((c) => c.connection_id)).toEqual(['dev-user']);
  });

  test('a key the provider refuses is not stored', async () => {
    const res = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'bad-key', credentials: { type: 'API_KEY', apiKey: 'not-a-valid-luma-key' } },
    });
    expect(res.response.status).toBe(400);
    expect(res.error?.error.code).toBe('invalid_credentials');
    expect(JSON.stringify(res.error)).not.toContain('not-a-valid-luma-key');
    expect((await stack.client.GET('/connections', { params: { query: { connectionId: 'bad-key' } } })).data?.connections).toEqual([]);
    // A credentials type the integration does not take (and no connection_id): the untyped helper.
    const wrongMode = await stack.api('POST', '/connections', { body: { provider_config_key: 'luma', credentials: { type: 'OAUTH2', access_token: 'abc' } } });
    expect(wrongMode.status).toBe(400);
    expect(wrongMode.body.error.code).toBe('invalid_credentials_type');
  });

  test('unknown integration and connection get their own 404 codes', async () => {
    const noIntegration = await stack.client.GET('/records', {
      params: { header: { 'connection-id': 'dev-user', 'provider-config-key': 'nope' }, query: { model: 'CalendarEvent' } },
    });
    expect(noIntegration.response.status).toBe(404);
    expect(noIntegration.error?.error.code).toBe('unknown_provider_config');
    const noConnection = await stack.client.GET('/connections/{connectionId}', {
      params: { path: { connectionId: 'ghost' }, query: { provider_config_key: 'luma' } },
    });
    expect(noConnection.response.status).toBe(404);
    expect(noConnection.error?.error.code).toBe('unknown_connection');
  });

  test('credentials are stored encrypted and never logged', async () => {
    const doc = await stack.core.stores.db.collection('connections').findOne({ connection_id: 'dev-user' });
    expect(JSON.stringify(doc)).not.toContain(API_KEY);
    expect(stack.logs.join('\n')).not.toContain(API_KEY);
    const logs = await stack.core.stores.db.collection('request_logs').find({}).toArray();
    expect(logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs)).not.toContain(API_KEY);
    const full = await stack.client.GET('/connections/{connectionId}', {
      params: { path: { connectionId: 'dev-user' }, query: { provider_config_key: 'luma' } },
    });
    expect(full.data?.credentials).toMatchObject({ type: 'API_KEY', apiKey: API_KEY });
  });
});
