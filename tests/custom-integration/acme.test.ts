import { readAllRecords, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';
import { createAcmeSimulator, type AcmeSimulator } from './acme/simulator';

const API_KEY = 'acme-live-key-7f3a9c21d4e8b6f0';
const WRONG_KEY = 'acme-wrong-key-0b1c2d3e4f5a6b7c';
const SESSION = 'acme-session-secret-5e6f7a8b9c0d';
const TASKS = 120;

/**
 * A fourth integration that lives entirely in this folder (provider definition, zod model,
 * sync, simulator), loaded from a folder the way WEFT_INTEGRATIONS_DIR's integrations are,
 * and run end to end on real Temporal + FerretDB: integration, connection with an API key,
 * sync, records. Its provider's quirks are its own data: the API-key and session headers
 * are redacted from the logs, its request-id header is kept in the request log.
 */
describe('a custom integration from an integrations folder, end to end', () => {
  let stack: WeftStack;
  let acme: AcmeSimulator;

  beforeAll(async () => {
    acme = createAcmeSimulator({ apiKey: API_KEY, taskCount: TASKS });
    await acme.start();
    // This test's folder is the integrations folder: `acme/` is its one integration.
    stack = await startWeftStack({ integrationsDir: __dirname, egressAllow: { providers: [acme.url] } });
  });
  afterAll(async () => {
    await stack?.shutdown();
    await acme?.stop();
  });

  test('the folder is registered next to the pre-built integrations', () => {
    expect(stack.core.registry.get('acme-tasks')?.provider.displayName).toBe('Acme Tasks');
    expect(stack.core.registry.get('luma')).toBeDefined();
    expect(stack.core.registry.secretHeaders()).toEqual(expect.arrayContaining(['x-acme-api-key', 'acme-session', 'x-luma-api-key']));
  });

  test('create, connect with an API key, sync, read the records; the key is in no log, the request ids are', async () => {
    const created = await stack.api('POST', '/integrations', {
      body: { unique_key: 'acme', provider: 'acme-tasks', provider_overrides: { base_url: acme.url } },
    });
    expect(created.status).toBe(201);

    // A wrong key is refused before anything is stored (the simulator echoes it in its 401 body).
    const refused = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'acme', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: WRONG_KEY } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_credentials');
    expect(JSON.stringify(refused.body)).not.toContain(WRONG_KEY);
    expect(await stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: 'acme', connectionId: 'user-1' })).toBeNull();

    const connected = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'acme', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(connected.status).toBe(201);
    expect(JSON.stringify(connected.body)).not.toContain(API_KEY);

    const summary = await runSync(stack, 'acme', 'user-1', 'tasks');
    expect(summary.result.Task).toEqual({ added: TASKS, updated: 0, deleted: 0 });

    const records = await readAllRecords(stack, 'user-1', 'Task', {}, 'acme');
    expect(records).toHaveLength(TASKS);
    const byId = new Map(records.map((r) => [r.id, r]));
    for (const t of acme.tasks) {
      const { _weft_metadata: meta, ...data } = byId.get(t.task_id);
      expect(data).toEqual({ id: t.task_id, title: t.title, done: t.state === 'done', updated_at: t.updated });
      expect(meta.last_action).toBe('ADDED');
    }
    // The key went to the provider in the provider's own header, on every call.
    expect(acme.keysSeen.filter((k) => k === API_KEY).length).toBeGreaterThanOrEqual(1 + Math.ceil(TASKS / 50));

    // A careless log line with the provider's headers, on the process's own logger.
    stack.core.logger.info({ headers: { 'x-acme-api-key': API_KEY, 'acme-session': SESSION } }, 'acme request headers');
    const logs = stack.logs.join('\n');
    expect(logs).toContain('acme request headers');
    for (const secret of [API_KEY, WRONG_KEY, SESSION]) expect(logs).not.toContain(secret);

    // The request log: every call of the connection (verification and sync), with Acme's request id.
    const entries = await requestLog(stack, 'acme');
    expect(JSON.stringify(entries)).not.toContain(API_KEY);
    expect(JSON.stringify(entries)).not.toContain(WRONG_KEY);
    const pages = entries.filter((e) => e.operation === 'sync:tasks');
    expect(pages).toHaveLength(Math.ceil(TASKS / 50));
    for (const e of entries) expect(acme.requestIds).toContain(e.provider_request_id);
    expect(new Set(entries.map((e) => e.provider_request_id)).size).toBe(entries.length);
    const stored = await stack.core.stores.db.collection('request_logs').find({}).toArray();
    expect(JSON.stringify(stored)).not.toContain(API_KEY);
    expect(JSON.stringify(stored)).not.toContain(WRONG_KEY);
  });
});

async function requestLog(stack: WeftStack, integration: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | undefined;
  await stack.core.stores.requestLogs.flush(); // entries are written in batches a few ms after their calls
  do {
    const page = await stack.core.stores.requestLogs.range({ environment: 'dev', integration, limit: 100, cursor });
    out.push(...page.entries);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return out;
}
