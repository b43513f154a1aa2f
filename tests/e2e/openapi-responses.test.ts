import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { OpenApiResponseChecker, type ObservedResponse } from '../support/openapi-responses';
import { buildOpenApiDocument, type OpenApiDocument } from '../../api/openapi/document';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { listRecords } from '../../cli/api-client/client';

const API_KEY = 'sandbox-luma-api-key';

/** `weft <args>` as its own process (cli/weft.ts through tsx, as the `weft` executable runs it without a build). */
function weftCli(args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'cli/weft.ts', ...args],
      { cwd: join(__dirname, '../..'), env: { ...process.env, ...env } },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve({ stdout, stderr })),
    );
  });
}
const headers = { 'connection-id': 'user-1', 'provider-config-key': 'luma' };

/**
 * The document describes what the API really answers: a representative walk over every
 * resource (success and error answers) on the real stack, each answer checked against the
 * document's schema for its route and status, and the webhooks the walk causes checked
 * against the document’s `webhooks`. (tests/support/weft-stack.ts checks every answer of every
 * test file the same way.)
 */
describe('OpenAPI document against the real API', () => {
  let stack: WeftStack;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const seen: ObservedResponse[] = [];
  let served: OpenApiDocument;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    stack = await startWeftStack({ luma: { seed: 3, eventCount: 30 }, egressAllow: { webhooks: [receiver.url] }, onResponse: (r) => seen.push(r) });
  });
  afterAll(async () => {
    await stack?.shutdown();
    await receiver?.close();
  });

  test('GET /openapi.json (no key) is the document built from the zod schemas and this registry', async () => {
    const res = await fetch(`${stack.apiUrl}/openapi.json`);
    expect(res.status).toBe(200);
    served = (await res.json()) as OpenApiDocument;
    expect(served.openapi).toBe('3.1.0');
    expect(served).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(stack.core.registry))));
  });

  test('every answer of a walk over the API fits the document', async () => {
    const api = stack.api.bind(stack);
    await api('GET', '/health');
    await createLumaIntegration(stack);
    await api('GET', '/integrations');
    await api('GET', '/integrations/luma');
    await api('GET', '/integrations/luma?include=credentials');
    await api('PATCH', '/integrations/luma', { body: { display_name: 'Luma calendar' } });
    await api('GET', '/integrations/nope');
    await api('POST', '/integrations', { body: { unique_key: 'luma', provider: 'luma' } });
    await api('POST', '/integrations', { body: { unique_key: 'bad key!', provider: 'luma' } });
    await api('GET', '/integrations', { key: 'weft_sk_dev_not-a-real-key-at-all' });
    await api('GET', '/no/such/route');

    await api('PATCH', '/environment', { body: { webhook_url: receiver.url, send_sync_completion_always: true } });
    await api('POST', '/environment/webhook-signing-key/rotate');
    await api('GET', '/environment');

    await api('POST', '/connections', { body: { provider_config_key: 'luma', connection_id: 'user-1', credentials: { type: 'API_KEY', apiKey: API_KEY } } });
    await api('POST', '/connections', { body: { provider_config_key: 'luma', credentials: { type: 'API_KEY', apiKey: 'wrong-key' } } });
    await stack.waitForSync('user-1', 'list-events');
    await api('GET', '/connections');
    await api('GET', '/connections?connectionId=user-1');
    await api('GET', '/connections/user-1?provider_config_key=luma');
    await api('GET', '/connection/user-1?provider_config_key=luma');
    await api('GET', '/connections/nobody?provider_config_key=luma');
    await api('POST', '/connections/metadata', { body: { connection_id: 'user-1', provider_config_key: 'luma', metadata: { team: 'a' } } });
    await api('PATCH', '/connections/metadata', { body: { connection_id: ['user-1'], provider_config_key: 'luma', metadata: { plan: 'b' } } });
    await api('PATCH', '/connections/user-1?provider_config_key=luma', { body: { tags: { region: 'eu' } } });

    await api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } });
    await stack.waitForSync('user-1', 'list-events');
    await api('POST', '/sync/trigger', { body: { provider_config_key: 'luma', syncs: ['list-events'] } });
    await api('GET', '/sync/status?provider_config_key=luma&syncs=list-events');
    await api('GET', '/sync/status?provider_config_key=luma&syncs=no-such-sync');
    await api('PUT', '/sync/update-connection-frequency', {
      body: { provider_config_key: 'luma', connection_id: 'user-1', sync_name: 'list-events', frequency: 'every 2 hours' },
    });
    await api('POST', '/sync/pause', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } });
    await api('POST', '/sync/start', { body: { provider_config_key: 'luma', connection_id: 'user-1', syncs: ['list-events'] } });
    await api('POST', '/sync/list-events/variant/second', { body: { provider_config_key: 'luma', connection_id: 'user-1' } });
    await api('DELETE', '/sync/list-events/variant/second?provider_config_key=luma&connection_id=user-1');

    await api('GET', '/records?model=CalendarEvent&limit=5', { headers });
    await api('GET', '/records?model=UnifiedEvent&limit=5', { headers });
    await api('GET', '/records?model=CalendarEvent&limit=0', { headers });
    await api('GET', '/records?model=CalendarEvent', { headers: { 'connection-id': 'user-1' } });
    await api('GET', '/v1/luma/list-events?limit=3', { headers });
    await api('GET', '/v1/no-such-endpoint', { headers });
    // The typed client (cli/api-client/) reads the same records, typed as the model; its answers are seen and checked too.
    const typed = await listRecords(stack.client, {
      model: 'CalendarEvent',
      connectionId: 'user-1',
      providerConfigKey: 'luma',
      limit: 3,
    });
    expect(typed.records.map((r) => typeof r.name)).toEqual(['string', 'string', 'string']);
    // And so does `weft records` (the CLI on the same client): every record, one JSON line each, paged through.
    const cli = await weftCli(
      ['records', '--model', 'CalendarEvent', '--connection-id', 'user-1', '--integration', 'luma', '--url', stack.apiUrl, '--limit', '7'],
      {
        WEFT_KEY: stack.keys.dev,
      },
    );
    expect(cli.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    const lines = cli.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; name: string });
    expect(new Set(lines.map((l) => l.id)).size).toBe(stack.luma.events().length);
    expect(lines.every((l) => typeof l.name === 'string')).toBe(true);
    const page = await api('GET', '/records?model=CalendarEvent&limit=2', { headers });
    await api('PATCH', '/records/prune', { headers, body: { model: 'CalendarEvent', until_cursor: page.body.records[1]._weft_metadata.cursor } });
    await api('GET', '/records?model=CalendarEvent&limit=3', { headers });

    await api('POST', '/action/trigger', { headers, body: { action_name: 'no-such-action' } });
    // An action in both modes: its output (sync), then 202 and GET /action/{id} with the async_action webhook between.
    const input = { name: 'Documented event', start_at: '2031-05-01T18:00:00Z', timezone: 'UTC' };
    await api('POST', '/action/trigger', { headers, body: { action_name: 'create-event', input } });
    await api('POST', '/v1/luma/create-event', { headers, body: { ...input, name: 'Documented event 2' } });
    await api('POST', '/v1/luma/create-event', { headers, body: { name: '' } });
    const started = await api('POST', '/action/trigger', {
      headers: { ...headers, 'x-async': 'true' },
      body: { action_name: 'create-event', input: { ...input, name: 'Async' } },
    });
    await receiver.waitFor((w) => w.body?.type === 'async_action' && w.body.payload.id === started.body.id);
    await api('GET', `/action/${started.body.id}`);
    await api('GET', '/action/no-such-run');
    await api('GET', '/proxy/public/v1/user/get-self', { headers: { ...headers } });

    await api('POST', '/connect/sessions', { body: { end_user: { id: 'u-1' }, allowed_integrations: ['luma'] } });
    await api('POST', '/connect/sessions', { body: { allowed_integrations: ['nope'] } });

    await api('GET', '/logs?limit=5');
    await api('GET', '/logs?from=later&to=sooner');
    await api('GET', '/integrations/luma/status');
    await receiver.waitFor((w) => w.body?.type === 'sync');
    const events = await api('GET', '/webhooks/events?limit=5');
    const delivered = (events.body.events as Array<{ id: string; status: string }>).find((e) => e.status === 'delivered');
    expect(delivered).toBeDefined();
    await api('GET', `/webhooks/events/${encodeURIComponent(delivered!.id)}`);
    await api('POST', `/webhooks/events/${encodeURIComponent(delivered!.id)}/replay`);
    await api('GET', '/webhooks/events/no-such-event');
    await api('POST', '/webhooks/events/replay', { body: { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() } });

    await api('DELETE', '/connections/user-1?provider_config_key=luma');
    await api('DELETE', '/integrations/luma');

    const checker = new OpenApiResponseChecker(served);
    const statuses = new Set(seen.map((r) => r.status));
    // The walk saw successes and the error shapes, not just one kind of answer.
    for (const s of [200, 201, 202, 400, 401, 404, 409]) expect(statuses).toContain(s);
    expect(seen.length).toBeGreaterThan(50);
    expect(seen.map((r) => checker.check(r)).filter(Boolean)).toEqual([]);
  });

  test('an answer that drifts from the document is caught', () => {
    const checker = new OpenApiResponseChecker(served);
    const ok = seen.find((r) => r.path === '/environment' && r.method === 'GET')!;
    expect(checker.check(ok)).toBeNull();
    const drifted = { ...ok, body: { data: { ...(ok.body as { data: object }).data, send_auth_webhooks: 'yes' } } };
    expect(checker.check(drifted)?.problem).toMatch(/send_auth_webhooks/);
    // A record that is no model's: GET /records (any model) and the sync's own endpoint (CalendarEvent) refuse it.
    for (const path of ['/records?model=CalendarEvent&limit=5', '/v1/luma/list-events?limit=3']) {
      const records = seen.find((r) => r.path === path)!;
      expect(checker.check(records)).toBeNull();
      const [first, ...rest] = (records.body as { records: Array<Record<string, unknown>> }).records;
      const wrongRecord = { ...records, body: { ...(records.body as object), records: [{ ...first, start_at: 5 }, ...rest] } };
      expect(checker.check(wrongRecord)?.problem).toMatch(/^body does not fit/);
    }
    const lumaPage = seen.find((r) => r.path === '/v1/luma/list-events?limit=3')!;
    const [event] = (lumaPage.body as { records: Array<Record<string, unknown>> }).records;
    expect(checker.check({ ...lumaPage, body: { records: [{ ...event, start_at: 5 }], next_cursor: null } })?.problem).toMatch(/start_at/);
    expect(checker.check({ ...ok, status: 418 })?.problem).toMatch(/documents no 418/);
    expect(checker.check({ ...ok, path: '/not-documented' })?.problem).toBe('no operation in the document');
    expect(checker.check({ ...ok, path: '/not-documented', status: 404 })?.problem).toMatch(/does not fit the error body/);
    // The API's rate-limit headers are declared where it sends them; one sent where the document has none, or of the wrong type, is caught.
    expect(ok.headers?.['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(checker.check({ ...ok, headers: { ...ok.headers, 'retry-after': '3' } })?.problem).toMatch(/header retry-after is sent but not declared/);
    expect(checker.check({ ...ok, headers: { ...ok.headers, 'x-ratelimit-remaining': 'many' } })?.problem).toMatch(/x-ratelimit-remaining.*not an integer/);
    const unauthorized = seen.find((r) => r.status === 401)!;
    expect(unauthorized.headers?.['x-ratelimit-limit']).toBeUndefined();
    expect(checker.check({ ...unauthorized, headers: { ...unauthorized.headers, 'x-ratelimit-limit': '6000' } })?.problem).toMatch(
      /header x-ratelimit-limit is sent but not declared/,
    );
    // The typed client's answers were seen (and so checked) as `stack.api`'s are.
    expect(seen.some((r) => r.path.startsWith('/records?model=CalendarEvent&limit=3') && r.headers?.['x-ratelimit-remaining'])).toBe(true);
  });

  test('the webhooks Weft sent fit the document’s `webhooks`', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(served as object, 'doc');
    const types = new Set<string>();
    for (const hook of receiver.received) {
      const type = hook.body.type as string;
      types.add(type);
      const validate = ajv.compile({ $ref: `doc#/webhooks/${type}/post/requestBody/content/application~1json/schema` });
      expect({ type, valid: validate(hook.body), errors: validate.errors ?? null }).toEqual({ type, valid: true, errors: null });
      expect(hook.headers['webhook-signature']).toMatch(/^v1,/);
    }
    expect([...types].sort()).toEqual(['async_action', 'auth', 'sync']);
  });

  test('/docs renders Swagger UI from Weft’s own files, with no key and no outside URL', async () => {
    const page = await fetch(`${stack.apiUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const html = await page.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) {
      expect(url.startsWith('/')).toBe(true);
      const asset = await fetch(`${stack.apiUrl}${url}`);
      expect({ url, status: asset.status }).toEqual({ url, status: 200 });
      const text = await asset.text();
      expect(text.length).toBeGreaterThan(10);
      if (url.endsWith('init.js')) expect(text).toContain("url: '/openapi.json'");
    }
    expect(html).not.toMatch(/https?:\/\//);
    // Only the listed files of the package: no path of its folder beyond them.
    expect((await fetch(`${stack.apiUrl}/docs/index.html`)).status).toBe(404);
    expect((await fetch(`${stack.apiUrl}/docs/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${stack.apiUrl}/docs/__proto__`)).status).toBe(404);
  });
});
