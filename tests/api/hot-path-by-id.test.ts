import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { recordFilters, selectsByIdOnly, type FilteredCommand } from '../support/command-filters';

const API_KEY = 'sandbox-luma-api-key';

/**
 * Collections the API and the workers read on every request or run. (Records, request logs
 * and webhook queues have their own range-keyed layouts and tests.)
 */
const LOOKUP_COLLECTIONS = new Set([
  'environments',
  'environment_keys',
  'integrations',
  'integration_keys',
  'connections',
  'connection_keys',
  'connection_list_keys',
  'connection_refresh_leases',
  'syncs',
  'sync_checkpoints',
  'sync_runs',
  'rate_budget_log',
  'rate_budget_heads',
  'connect_sessions',
  'connect_session_attempts',
  'auth_states',
  'api_rate_blocks',
  'store_migrations',
  'sync_operations',
]);

/**
 * And what a sync run reads and writes of the records engine: with one filter on other fields,
 * every run read all connections' records on FerretDB, and runs (and with them the creation
 * of connections) got slower with every connection (`npm run bench -- schedules` showed it).
 */
const RECORD_COLLECTIONS = new Set(['records', 'record_counters', 'record_run_batches', 'record_swaps', 'record_index', 'record_feed']);

/** The worker's periodic retention sweep (deleteMany by an expiry field) is not a request's lookup. */
function isRetentionSweep(c: FilteredCommand): boolean {
  const keys = Object.keys(c.filter);
  return c.command === 'delete' && keys.length === 1 && Object.keys(c.filter[keys[0]] ?? {}).join() === '$lt';
}

/**
 * The request path with many connections in the database must not read a collection: every
 * lookup it makes is by `_id` (FerretDB's SQLite backend answers nothing else from an index).
 * Checked on the real stack, with the MongoDB client reporting every command it sends.
 */
describe('the hot path reads by _id', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({ monitorCommands: true, luma: { seed: 3, eventCount: 40 } });
    await createLumaIntegration(stack);
  });
  afterAll(async () => stack?.shutdown());

  async function lookupsNotById(fn: () => Promise<void>, collections = LOOKUP_COLLECTIONS): Promise<string[]> {
    const rec = recordFilters(stack.core.mongo);
    try {
      await fn();
    } finally {
      rec.stop();
    }
    const relevant = rec.commands.filter((c) => collections.has(c.collection) && !isRetentionSweep(c));
    expect(relevant.length).toBeGreaterThan(0);
    return relevant.filter((c) => !selectsByIdOnly(c.filter)).map((c) => `${c.command} ${c.collection} ${JSON.stringify(c.filter)}`);
  }

  test('connect, read, update and check a connection; create a reconnect session', async () => {
    expect(
      await lookupsNotById(async () => {
        const created = await stack.api('POST', '/connections', {
          body: { provider_config_key: 'luma', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: API_KEY } },
        });
        expect(created.status).toBe(201);
        const dup = await stack.api('POST', '/connections', {
          body: { provider_config_key: 'luma', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: API_KEY } },
        });
        expect(dup.status).toBe(409);
        expect(dup.body.error.code).toBe('duplicate_connection');
        const got = await stack.api('GET', '/connections/user-1?provider_config_key=luma');
        expect(got.status).toBe(200);
        expect(got.body.credentials).toMatchObject({ type: 'API_KEY', apiKey: API_KEY });
        expect((await stack.api('GET', '/connections/nobody?provider_config_key=luma')).status).toBe(404);
        // Another environment's key does not see it.
        expect((await stack.api('GET', '/connections/user-1?provider_config_key=luma', { key: stack.keys.prod })).status).toBe(404);
        expect(
          (await stack.api('PATCH', '/connections/metadata', { body: { provider_config_key: 'luma', connection_id: 'user-1', metadata: { plan: 'pro' } } }))
            .status,
        ).toBe(200);
        expect((await stack.api('PATCH', '/connections/user-1?provider_config_key=luma', { body: { tags: { plan: 'pro' } } })).status).toBe(200);
        const listed = await stack.api('GET', '/connections?connectionId=user-1');
        expect(listed.body.connections.map((c: { id: string }) => c.id)).toEqual([created.body.id]);
        expect((await stack.api('GET', '/connections?connectionId=user-1&integrationId=luma')).body.connections).toHaveLength(1);
        expect((await stack.api('GET', '/connections?connectionId=user-1&integrationId=other')).body.connections).toEqual([]);
        expect((await stack.api('GET', '/connections?connectionId=user-1', { key: stack.keys.prod })).body.connections).toEqual([]);
        expect((await stack.api('GET', '/integrations/luma')).status).toBe(200);
        expect((await stack.api('GET', '/environment')).status).toBe(200);
        const session = await stack.api('POST', '/connect/sessions', { body: { connection_id: 'user-1', end_user: { id: 'u1' } } });
        expect(session.status).toBe(201);
        const unknown = await stack.api('POST', '/connect/sessions', { body: { connection_id: 'nobody', end_user: { id: 'u1' } } });
        expect(unknown.status).toBe(404);
      }),
    ).toEqual([]);
  });

  test('a sync run (records engine included: writes, delete detection, counts) and its status', async () => {
    await stack.waitForSync('user-1', 'list-events');
    stack.luma.editEvents(3);
    stack.luma.deleteEvents(2);
    expect(
      await lookupsNotById(
        async () => {
          const trigger = await stack.api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } });
          expect(trigger.status).toBe(200);
          const summary: any = await stack.waitForSync('user-1', 'list-events');
          expect(summary.result.CalendarEvent).toEqual({ added: 0, updated: 3, deleted: 2 });
          const status = await stack.api('GET', '/sync/status?provider_config_key=luma&syncs=*&connection_id=user-1');
          expect(status.status).toBe(200);
          expect(status.body.syncs.map((s: { name: string }) => s.name)).toContain('list-events');
        },
        new Set([...LOOKUP_COLLECTIONS, ...RECORD_COLLECTIONS]),
      ),
    ).toEqual([]);
  });

  test('deleting a connection (its records too) frees its key for a new one', async () => {
    expect(
      await lookupsNotById(
        async () => {
          expect((await stack.api('DELETE', '/connections/user-1?provider_config_key=luma')).status).toBe(200);
        },
        new Set([...LOOKUP_COLLECTIONS, ...RECORD_COLLECTIONS]),
      ),
    ).toEqual([]);
    expect((await stack.api('GET', '/connections/user-1?provider_config_key=luma')).status).toBe(404);
    const again = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(again.status).toBe(201);
    expect((await stack.api('GET', '/connections/user-1?provider_config_key=luma')).body.id).toBe(again.body.id);
  });
});
