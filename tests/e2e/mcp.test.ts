import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { connectOneDrive, createLumaIntegration, createOneDriveIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * `/mcp` driven by the official MCP client SDK against a running Weft: each connection's
 * actions as tools (schemas, hints), calls that run the action as POST /action/trigger does
 * (request log included), a bad input as a tool error naming the field, and the refusals:
 * a wrong key, another environment's connection, an environment with MCP off.
 */
describe('actions as MCP tools, per connection', () => {
  let stack: WeftStack;
  const open: Client[] = [];

  beforeAll(async () => {
    stack = await startWeftStack({ graph: { seed: 31, drives: [{ fileCount: 5 }, { fileCount: 2 }] } });
    await createLumaIntegration(stack);
    await createOneDriveIntegration(stack);
    const luma = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'agent-luma', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
    });
    expect(luma.status).toBe(201);
    expect((await connectOneDrive(stack, 'agent-drive')).status).toBe(201);
    // A connection of the prod environment, same id.
    await createLumaIntegration(stack, { key: stack.keys.prod });
    const prod = await stack.api('POST', '/connections', {
      key: stack.keys.prod,
      body: { provider_config_key: 'luma', connection_id: 'prod-only', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
    });
    expect(prod.status).toBe(201);
  });

  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await stack?.shutdown();
  });

  async function agent(connectionId: string, providerConfigKey: string, opts: { key?: string; headers?: Record<string, string> } = {}): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.apiUrl}/mcp`), {
      requestInit: {
        headers: {
          authorization: `Bearer ${opts.key ?? stack.keys.dev}`,
          'connection-id': connectionId,
          'provider-config-key': providerConfigKey,
          ...opts.headers,
        },
      },
    });
    const client = new Client({ name: 'weft-test-agent', version: '1.0.0' });
    await client.connect(transport);
    open.push(client);
    return client;
  }

  test('tools/list: a Luma connection’s write action, destructive, with its input and output schemas', async () => {
    const client = await agent('agent-luma', 'luma');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['create-event']);
    const [createEvent] = tools;
    expect(createEvent.description).toMatch(/Creates an event/);
    expect(createEvent.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    expect(createEvent.inputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['name', 'start_at', 'timezone']) });
    expect(Object.keys(createEvent.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['name', 'start_at', 'timezone', 'end_at']));
    expect(createEvent.outputSchema).toMatchObject({ type: 'object' });
  });

  test('tools/list: a OneDrive connection’s reads are read-only, its writes destructive, and the team-site token is no tool', async () => {
    const client = await agent('agent-drive', 'one-drive');
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(['create-folder', 'fetch-file', 'list-drives', 'upload-file']);
    expect(byName['list-drives'].annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName['upload-file'].annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  test('tools/call of a read action: its output as structured content, the same as POST /action/trigger gives', async () => {
    const client = await agent('agent-drive', 'one-drive');
    const result = await client.callTool({ name: 'list-drives', arguments: {} });
    expect(result.isError).toBeFalsy();
    const direct = await stack.api('POST', '/action/trigger', {
      headers: { 'connection-id': 'agent-drive', 'provider-config-key': 'one-drive' },
      body: { action_name: 'list-drives', input: {} },
    });
    expect(direct.status).toBe(200);
    expect(result.structuredContent).toEqual(direct.body);
    expect((result.structuredContent as { drives: unknown[] }).drives.length).toBeGreaterThan(0);
  });

  test('tools/call of a write action: Luma has the event, and the call is in the request log as the action’s', async () => {
    const client = await agent('agent-luma', 'luma');
    const before = stack.luma.eventIds().length;
    const result = await client.callTool({
      name: 'create-event',
      arguments: { name: 'Agent planning session', start_at: '2027-01-15T10:00:00Z', timezone: 'Europe/Berlin', duration_interval: 'PT1H' },
    });
    expect(result.isError).toBeFalsy();
    const created = result.structuredContent as { id: string; name: string };
    expect(created.name).toBe('Agent planning session');
    expect(stack.luma.eventIds()).toHaveLength(before + 1);
    expect(stack.luma.eventIds()).toContain(created.id);
    const logs = await stack.api('GET', '/logs?connection_id=agent-luma&operation=action%3Acreate-event');
    expect(logs.status).toBe(200);
    expect(logs.body.logs.some((e: { method: string; status: number }) => e.method === 'POST' && e.status === 200)).toBe(true);
  });

  test('a bad input is a tool error naming the field, and nothing is sent to Luma', async () => {
    const client = await agent('agent-luma', 'luma');
    const before = stack.luma.eventIds().length;
    const callsBefore = stack.luma.stats().requests;
    const result = await client.callTool({ name: 'create-event', arguments: { name: 'No start', timezone: 'Europe/Berlin' } });
    expect(result.isError).toBe(true);
    const text = (result.content as Array<{ type: string; text: string }>)[0].text;
    expect(text).toContain('invalid_action_input');
    expect(text).toContain('start_at');
    expect(result.structuredContent).toMatchObject({
      error: { code: 'invalid_action_input', detail: expect.arrayContaining([expect.objectContaining({ path: 'start_at' })]) },
    });
    expect(stack.luma.eventIds()).toHaveLength(before);
    expect(stack.luma.stats().requests).toBe(callsBefore);
    // A tool the connection does not have is an error of the same kind.
    const unknown = await client.callTool({ name: 'delete-everything', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toMatchObject({ error: { code: 'unknown_tool' } });
  });

  test('tools narrowed by the connection’s mcp_tools tag, and further by the client’s Weft-Mcp-Tools header', async () => {
    const patched = await stack.api('PATCH', '/connections/agent-drive?provider_config_key=one-drive', {
      body: { tags: { mcp_tools: 'list-drives, fetch-file' } },
    });
    expect(patched.status).toBe(200);
    try {
      const tagged = await agent('agent-drive', 'one-drive');
      expect((await tagged.listTools()).tools.map((t) => t.name).sort()).toEqual(['fetch-file', 'list-drives']);
      const refused = await tagged.callTool({ name: 'upload-file', arguments: {} });
      expect(refused.structuredContent).toMatchObject({ error: { code: 'unknown_tool' } });
      const narrower = await agent('agent-drive', 'one-drive', { headers: { 'weft-mcp-tools': 'list-drives,upload-file' } });
      expect((await narrower.listTools()).tools.map((t) => t.name)).toEqual(['list-drives']);
    } finally {
      expect((await stack.api('PATCH', '/connections/agent-drive?provider_config_key=one-drive', { body: { tags: {} } })).status).toBe(200);
    }
  });

  test('resources: each synced model of the connection, read a page at a time by its next_uri, as GET /records pages them', async () => {
    await stack.waitForSync('agent-luma', 'list-events', { providerConfigKey: 'luma' });
    const client = await agent('agent-luma', 'luma');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['weft://luma/CalendarEvent', 'weft://luma/UnifiedEvent']);

    const first = await client.readResource({ uri: 'weft://luma/CalendarEvent?limit=10' });
    const page1 = JSON.parse((first.contents[0] as { text: string }).text) as { records: Array<{ id: string }>; next_uri: string };
    const api = await stack.api('GET', '/records?model=CalendarEvent&limit=10', { headers: { 'connection-id': 'agent-luma', 'provider-config-key': 'luma' } });
    expect(page1.records.map((r) => r.id)).toEqual(api.body.records.map((r: { id: string }) => r.id));
    const text = (read: { contents: Array<object> }) => JSON.parse(String((read.contents[0] as { text?: unknown }).text));
    const second = text(await client.readResource({ uri: page1.next_uri })) as { records: Array<{ id: string }> };
    expect(second.records).toHaveLength(10);
    expect(second.records.filter((r) => page1.records.some((p) => p.id === r.id))).toEqual([]);
    // The unified shape where the integration has one.
    const unified = text(await client.readResource({ uri: 'weft://luma/UnifiedEvent?limit=2' }));
    expect(unified.records).toHaveLength(2);

    await expect(client.readResource({ uri: 'weft://luma/Nothing' })).rejects.toThrow(/No resource/);
    await expect(client.readResource({ uri: 'weft://one-drive/File' })).rejects.toThrow(/No resource/);
    await expect(client.readResource({ uri: 'weft://luma/CalendarEvent?cursor=not-a-cursor' })).rejects.toThrow(/invalid_cursor/);
  });

  /** A raw MCP initialize request, for the refusals (the client SDK's errors carry only the status). */
  async function initialize(headers: Record<string, string>): Promise<{ status: number; body: any }> {
    const res = await fetch(`${stack.apiUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  test('refused: a wrong key, another environment’s connection, an environment with MCP off (prod by default)', async () => {
    await expect(agent('agent-luma', 'luma', { key: 'weft_sk_dev_not-a-real-key-0000' })).rejects.toThrow(/"unauthorized"/);
    const wrongKey = await initialize({
      authorization: 'Bearer weft_sk_dev_not-a-real-key-0000',
      'connection-id': 'agent-luma',
      'provider-config-key': 'luma',
    });
    expect(wrongKey.status).toBe(401);

    // The dev key cannot reach a prod connection: it is not in dev.
    const otherEnv = await initialize({ authorization: `Bearer ${stack.keys.dev}`, 'connection-id': 'prod-only', 'provider-config-key': 'luma' });
    expect(otherEnv).toMatchObject({ status: 404, body: { error: { code: 'unknown_connection' } } });

    // prod: off until an operator turns it on.
    const prodKey = { authorization: `Bearer ${stack.keys.prod}`, 'connection-id': 'prod-only', 'provider-config-key': 'luma' };
    expect(await initialize(prodKey)).toMatchObject({ status: 404, body: { error: { code: 'mcp_disabled' } } });
    expect((await stack.api('GET', '/environment', { key: stack.keys.prod })).body.data.mcp_enabled).toBe(false);
    expect((await stack.api('PATCH', '/environment', { key: stack.keys.prod, body: { mcp_enabled: true } })).status).toBe(200);
    const prodAgent = await agent('prod-only', 'luma', { key: stack.keys.prod });
    expect((await prodAgent.listTools()).tools.map((t) => t.name)).toEqual(['create-event']);

    // And dev can be turned off.
    expect((await stack.api('PATCH', '/environment', { body: { mcp_enabled: false } })).status).toBe(200);
    try {
      expect(await initialize({ authorization: `Bearer ${stack.keys.dev}`, 'connection-id': 'agent-luma', 'provider-config-key': 'luma' })).toMatchObject({
        status: 404,
        body: { error: { code: 'mcp_disabled' } },
      });
    } finally {
      expect((await stack.api('PATCH', '/environment', { body: { mcp_enabled: null } })).status).toBe(200);
    }
  });

  test('no stream and no session: GET and DELETE answer 405; a body that is no JSON-RPC message is refused with a code', async () => {
    const headers = { authorization: `Bearer ${stack.keys.dev}`, 'connection-id': 'agent-luma', 'provider-config-key': 'luma' };
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${stack.apiUrl}/mcp`, { method, headers: { ...headers, accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
    const bad = await fetch(`${stack.apiUrl}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_mcp_message');
  });
});
