import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { readAllRecordsTyped } from '../support/weft-client';
import { recordFilters, selectsByIdOnly } from '../support/command-filters';

const API_KEY = 'sandbox-luma-api-key';
const EVENTS = 120;
const headers = { 'connection-id': 'prune-user', 'provider-config-key': 'luma' };

/** `PATCH /records/prune` (Nango's `pruneRecords`) on real Temporal + FerretDB, records from a Luma sync. */
describe('PATCH /records/prune', () => {
  let stack: WeftStack;
  let connectionRef: string;

  /** The stored record documents of the connection, by id: what a refused or repeated call must leave as it was. */
  async function storedRecords(): Promise<Map<string, Record<string, unknown>>> {
    const docs = await stack.core.stores.db.collection('records').find({ connection: connectionRef }).toArray();
    return new Map(docs.map((d) => [d.id as string, d as Record<string, unknown>]));
  }

  /** Refused on purpose (malformed bodies and headers among them): the untyped helper. */
  const pruneUntyped = (body: unknown, h: Record<string, string>) => stack.api('PATCH', '/records/prune', { body, headers: h });
  /** The typed client: the answer's status and body. */
  const prune = async (body: { model: 'CalendarEvent'; until_cursor: string; limit?: number }) => {
    const res = await stack.client.PATCH('/records/prune', { params: { header: headers }, body });
    return { status: res.response.status, body: res.data ?? res.error };
  };
  /** Every CalendarEvent record of the connection, typed. */
  const readEvents = () => readAllRecordsTyped(stack.client, { model: 'CalendarEvent', connectionId: 'prune-user' });

  async function sync() {
    await stack.client.POST('/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'prune-user', syncs: ['list-events'] } });
    return (await stack.waitForSync('prune-user', 'list-events')) as any;
  }

  beforeAll(async () => {
    stack = await startWeftStack({ monitorCommands: true, luma: { seed: 11, eventCount: EVENTS } });
    await createLumaIntegration(stack);
    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'prune-user', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(created.response.status).toBe(201);
    connectionRef = created.data!.id;
    await sync();
    expect(await readEvents()).toHaveLength(EVENTS);
  });
  afterAll(async () => stack?.shutdown());

  test('refused input: a 400 with a stable code, and no stored record changes', async () => {
    const before = await storedRecords();
    const [first] = await readEvents();
    const cursor: string = first._weft_metadata.cursor;
    const cases: Array<[unknown, Record<string, string>, number, string]> = [
      [{ model: 'CalendarEvent', until_cursor: 'not-a-cursor' }, headers, 400, 'invalid_cursor'],
      [{ model: 'NoSuchModel', until_cursor: cursor }, headers, 400, 'unknown_model'],
      [{ model: 'CalendarEvent' }, headers, 400, 'invalid_body'],
      [{ model: 'CalendarEvent', until_cursor: cursor, limit: 0 }, headers, 400, 'invalid_body'],
      [{ model: 'CalendarEvent', until_cursor: cursor, limit: 10_001 }, headers, 400, 'invalid_body'],
      [{ model: 'CalendarEvent', until_cursor: cursor, surprise: true }, headers, 400, 'invalid_body'],
      [{ model: 'CalendarEvent', until_cursor: cursor }, { 'provider-config-key': 'luma' }, 400, 'invalid_headers'],
      [{ model: 'CalendarEvent', until_cursor: cursor }, { ...headers, 'connection-id': 'nobody' }, 404, 'unknown_connection'],
    ];
    for (const [body, h, status, code] of cases) {
      const res = await pruneUntyped(body, h);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status, code });
    }
    expect(await storedRecords()).toEqual(before);
  });

  test('drops the payloads up to the cursor (inclusive), keeps ids and metadata, leaves later records as they were', async () => {
    const before = await readEvents();
    const storedBefore = await storedRecords();
    const k = 40;
    const until = before[k - 1];
    const res = await prune({ model: 'CalendarEvent', until_cursor: until._weft_metadata.cursor });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: k, has_more: false });

    const after = await readEvents();
    // Same records, same order, same cursors.
    expect(after.map((r) => r.id)).toEqual(before.map((r) => r.id));
    for (let i = 0; i < after.length; i++) {
      const { pruned_at, ...meta } = after[i]._weft_metadata;
      const { pruned_at: wasPruned, ...metaBefore } = before[i]._weft_metadata;
      expect(wasPruned).toBeNull();
      expect(meta).toEqual(metaBefore);
      if (i < k) {
        expect(Object.keys(after[i]).sort()).toEqual(['_weft_metadata', 'id']);
        expect(after[i].id).toBe(before[i].id);
        expect(Date.parse(pruned_at!)).not.toBeNaN();
      } else {
        expect(after[i]).toEqual(before[i]);
      }
    }
    // In the store: the payload is gone, the hash and change order are kept (the next sync of unchanged data writes nothing).
    const stored = await storedRecords();
    for (const r of before.slice(0, k)) {
      // (`data_json`: the payload as stored, one JSON string)
      const { data_json: data, pruned_at, ...rest } = stored.get(r.id)!;
      const { data_json: dataBefore, pruned_at: _none, ...restBefore } = storedBefore.get(r.id)!;
      expect(JSON.parse(data as string)).toEqual({});
      expect(Object.keys(JSON.parse(dataBefore as string) as object).length).toBeGreaterThan(1);
      expect(pruned_at).toBeInstanceOf(Date);
      expect(rest).toEqual(restBefore);
    }
    for (const r of before.slice(k)) expect(stored.get(r.id)).toEqual(storedBefore.get(r.id));
  });

  test('pruning again is idempotent: nothing counted, nothing written', async () => {
    const records = await readEvents();
    const before = await storedRecords();
    const res = await prune({ model: 'CalendarEvent', until_cursor: records[39]._weft_metadata.cursor });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 0, has_more: false });
    expect(await storedRecords()).toEqual(before);
  });

  test('limit bounds one call; has_more says to call again, and the calls together prune exactly up to the cursor', async () => {
    const records = await readEvents();
    const cursor = records[99]._weft_metadata.cursor;
    const first = await prune({ model: 'CalendarEvent', until_cursor: cursor, limit: 25 });
    expect(first.body).toEqual({ count: 25, has_more: true });
    const second = await prune({ model: 'CalendarEvent', until_cursor: cursor, limit: 25 });
    expect(second.body).toEqual({ count: 25, has_more: true });
    const third = await prune({ model: 'CalendarEvent', until_cursor: cursor, limit: 25 });
    expect(third.body).toEqual({ count: 10, has_more: false });
    const after = await readEvents();
    expect(after.slice(0, 100).every((r) => r._weft_metadata.pruned_at !== null && Object.keys(r).length === 2)).toBe(true);
    expect(after.slice(100).every((r) => r._weft_metadata.pruned_at === null && Object.keys(r).length > 2)).toBe(true);
  });

  test('a prune reads and writes records, their feed and counters by _id only (what FerretDB reads through its index)', async () => {
    const records = await readEvents();
    const rec = recordFilters(stack.core.mongo);
    let res;
    try {
      res = await prune({ model: 'CalendarEvent', until_cursor: records[109]._weft_metadata.cursor, limit: 5 });
    } finally {
      rec.stop();
    }
    expect(res.body).toEqual({ count: 5, has_more: true });
    const scoped = rec.commands.filter((c) => ['records', 'record_feed', 'record_counters'].includes(c.collection));
    expect(scoped.filter((c) => c.collection === 'records' && c.command === 'update')).toHaveLength(5);
    expect(scoped.filter((c) => !selectsByIdOnly(c.filter)).map((c) => `${c.command} ${c.collection} ${JSON.stringify(c.filter)}`)).toEqual([]);
  });

  test('a sync keeps unchanged pruned records pruned, and a changed one comes back with its payload as a later change', async () => {
    const before = await readEvents();
    const edited = stack.luma.editEvents(before.slice(0, 5).map((r) => r.id));
    const summary = await sync();
    expect(summary.result.CalendarEvent).toEqual({ added: 0, updated: edited.length, deleted: 0 });
    const after = await readEvents();
    const byId = new Map(after.map((r) => [r.id, r]));
    for (const id of edited) {
      expect(byId.get(id)?._weft_metadata).toMatchObject({ last_action: 'UPDATED', pruned_at: null });
      expect(Object.keys(byId.get(id)!).length).toBeGreaterThan(2);
    }
    // Still pruned: the rest of the first hundred.
    for (const r of before.slice(5, 100)) expect(byId.get(r.id)).toEqual(r);
    // The edited ones moved to the end of the change order.
    expect(
      after
        .slice(-edited.length)
        .map((r) => r.id)
        .sort(),
    ).toEqual([...edited].sort());
  });
});
