import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { Agent, request } from 'undici';
import { READ_CACHE_TTL_MS } from '../../store/read-cache';
import { RequestLogStore, type RequestLogEntry } from '../../store/request-logs';
import { connectOneDrive, createOneDriveIntegration, startWeftStack, waitForLogs, type WeftStack } from '../support/weft-stack';

/** Proxied calls, CONCURRENCY at a time: every one of them must be in the request log. */
const CALLS = 200;
const CONCURRENCY = 32;

/** Collections the proxy's lookups read (through the read caches): connection, integration, secret key. */
const LOOKUPS = new Set(['connections', 'connection_keys', 'integrations', 'integration_keys', 'environments', 'environment_keys']);

/**
 * The proxy logs every call without the call waiting for its entry: entries are written in
 * batches in the background (store/request-logs.ts). Batching must lose nothing, under
 * concurrency and across a clean stop, and the per-call cost in database work must stay a
 * share of a batch, not a command of its own per call.
 */
describe('the proxy request log under concurrency', () => {
  let stack: WeftStack;
  const headers = (connectionId: string) => ({
    authorization: `Bearer ${stack.keys.dev}`,
    'connection-id': connectionId,
    'provider-config-key': 'one-drive',
  });

  beforeAll(async () => {
    stack = await startWeftStack({
      worker: false,
      monitorCommands: true,
      graph: { seed: 7, drives: [{ fileCount: 3 }] },
      apiRateLimit: { limit: 1_000_000, windowMs: 60_000 },
    });
    await createOneDriveIntegration(stack);
    for (const id of ['busy', 'stopping']) expect((await connectOneDrive(stack, id)).status).toBe(201);
  });
  afterAll(async () => stack?.shutdown());

  /**
   * `calls` GET /proxy/v1.0/me, `concurrency` in flight; the Graph request id of each answer.
   * Connections of their own, closed after: one kept from an earlier burst may be closed by
   * the API's keep-alive timeout just as it is reused (a reset on a loaded machine).
   */
  async function proxyCalls(connectionId: string, calls: number, concurrency: number): Promise<string[]> {
    const requestIds: string[] = [];
    const dispatcher = new Agent();
    let started = 0;
    try {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (started < calls) {
            started += 1;
            const res = await request(`${stack.apiUrl}/proxy/v1.0/me`, { headers: headers(connectionId), dispatcher });
            await res.body.arrayBuffer();
            expect(res.statusCode).toBe(200);
            requestIds.push(String(res.headers['request-id']));
          }
        }),
      );
    } finally {
      await dispatcher.close();
    }
    return requestIds;
  }

  test('N concurrent proxied calls are N entries, each with its own provider request id; the database work is batched', async () => {
    await proxyCalls('busy', 1, 1); // the caches filled, as on a running API
    await stack.core.stores.requestLogs.flush();
    const commands: CommandStartedEvent[] = [];
    const listen = (e: CommandStartedEvent) => commands.push(e);
    stack.core.mongo.on('commandStarted', listen);
    const began = Date.now();
    let requestIds: string[];
    try {
      requestIds = await proxyCalls('busy', CALLS, CONCURRENCY);
      await stack.core.stores.requestLogs.flush();
    } finally {
      stack.core.mongo.off('commandStarted', listen);
    }
    const elapsed = Date.now() - began;
    expect(new Set(requestIds).size).toBe(CALLS);

    const logs: RequestLogEntry[] = (await waitForLogs(stack, 'connection_id=busy&operation=proxy&limit=1000', CALLS + 1)) as never;
    expect(logs).toHaveLength(CALLS + 1);
    expect(new Set(logs.map((e) => e.id)).size).toBe(CALLS + 1);
    // Each call is its own entry: the request ids the app got are exactly those logged.
    const logged = new Set(logs.map((e) => e.provider_request_id));
    for (const id of requestIds) expect(logged.has(id)).toBe(true);
    for (const e of logs) expect(e).toMatchObject({ operation: 'proxy', method: 'GET', status: 200, integration: 'one-drive', connection_id: 'busy' });

    // What the calls cost the database. Each entry is three documents (its environment's,
    // integration's and connection's copies) plus, without TTL indexes, one expiry key per
    // batch: no more documents than that, and fewer inserts than entries.
    const logInserts = commands.filter((c) => c.commandName === 'insert' && c.command.insert === 'request_logs');
    const documents = logInserts.reduce((n, c) => n + (c.command.documents as unknown[]).length, 0);
    expect(documents).toBeGreaterThanOrEqual(3 * CALLS);
    expect(documents).toBeLessThanOrEqual(3 * CALLS + logInserts.length);
    expect(logInserts.length).toBeLessThan(CALLS);
    for (const c of logInserts) {
      for (const doc of c.command.documents as Array<Record<string, unknown>>) {
        if (!String(doc._id).startsWith('#expiry|')) expect(Object.keys(doc).sort()).toEqual(['_id', 'at', 'json']);
      }
    }
    // The lookups come from the caches: at most one read of each per cache lifetime that passed.
    const lifetimes = Math.floor(elapsed / READ_CACHE_TTL_MS) + 1;
    const lookups = commands.filter((c) => c.commandName === 'find' && LOOKUPS.has(String(c.command.find)));
    const byCollection = new Map<string, number>();
    for (const c of lookups) byCollection.set(String(c.command.find), (byCollection.get(String(c.command.find)) ?? 0) + 1);
    for (const [, n] of byCollection) expect(n).toBeLessThanOrEqual(lifetimes);
    // The hourly sums of the log are written every few seconds, not per call.
    const hourSums = commands.filter((c) => c.commandName === 'update' && c.command.update === 'request_log_hours');
    // (At most one per 5 s since the first call, the calls and the wait for their entries included.)
    expect(hourSums.length).toBeLessThanOrEqual(Math.floor((Date.now() - began) / 5_000) + 1);
    // Nothing else is read or written per call (the API's rate counter takes blocks of requests).
    const others = commands.filter(
      (c) =>
        !logInserts.includes(c) && !lookups.includes(c) && !hourSums.includes(c) && !(c.commandName === 'insert' && c.command.insert === 'api_rate_blocks'),
    );
    expect(others.map((c) => `${c.commandName} ${String(c.command[c.commandName])}`)).toEqual([]);
    expect(commands.filter((c) => c.command.insert === 'api_rate_blocks').length).toBeLessThan(CALLS / 4);
  });

  test('stopped right after a burst: every call answered is in the log', async () => {
    const requestIds = await proxyCalls('stopping', 64, CONCURRENCY);
    // Stopped right after the last answer: entries still batched in memory are written by the stop.
    await stack.core.close();
    const client = await new MongoClient(stack.env.MONGODB_URI).connect();
    try {
      const logs = new RequestLogStore(client.db(stack.env.MONGODB_DB), 14);
      const page = await logs.range({ environment: 'dev', connectionId: 'stopping', operation: 'proxy', limit: 1_000 });
      expect(page.entries.map((e) => e.provider_request_id).sort()).toEqual([...requestIds].sort());
    } finally {
      await client.close();
    }
    // The stack's own shutdown reconnects nothing: its database goes with this test's client.
    const cleanup = await new MongoClient(stack.env.MONGODB_URI).connect();
    await cleanup
      .db(stack.env.MONGODB_DB)
      .dropDatabase()
      .catch(() => undefined);
    await cleanup.close();
  });
});
