import { startWebhookReceiver } from '../support/webhook-receiver';
import { startWeftStack, createLumaIntegration, type WeftStack } from '../support/weft-stack';
import { waitFor } from '../support/wait';

const API_KEY = 'sandbox-luma-api-key';

/** `PATCH /connections/:connectionId` (Nango's `patchConnection`): tags and the connection's own webhook URL. */
describe('PATCH /connections/:connectionId', () => {
  let stack: WeftStack;
  let envHooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let connectionHooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let connectionRef: string;

  const stored = async () => stack.core.stores.connections.getById(connectionRef);
  const patch = (body: unknown, query = 'provider_config_key=luma', connectionId = 'patch-user') =>
    stack.api('PATCH', `/connections/${connectionId}${query ? `?${query}` : ''}`, { body });

  beforeAll(async () => {
    envHooks = await startWebhookReceiver();
    connectionHooks = await startWebhookReceiver();
    // With its worker: webhook events are delivered by their workflows.
    stack = await startWeftStack({ egressAllow: { webhooks: [envHooks.url, connectionHooks.url] } });
    await createLumaIntegration(stack);
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: envHooks.url } })).status).toBe(200);
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'patch-user', credentials: { type: 'API_KEY', apiKey: API_KEY }, tags: { team: 'a' } },
    });
    expect(created.status).toBe(201);
    connectionRef = created.body.id;
    // The creation event went to the environment's URL (no override yet).
    await envHooks.waitFor((w) => w.body?.type === 'auth' && w.body.operation === 'creation');
  });
  afterAll(async () => {
    await stack?.shutdown();
    await envHooks?.close();
    await connectionHooks?.close();
  });

  test('refused input: a 4xx with a stable code, and the stored connection is unchanged', async () => {
    const before = await stored();
    const cases: Array<[unknown, string, string, number, string]> = [
      [{ tags: { team: 'b' } }, '', 'patch-user', 400, 'invalid_query_params'],
      [{ tags: { team: 'b' } }, 'provider_config_key=luma&extra=1', 'patch-user', 400, 'invalid_query_params'],
      [{}, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ tags: { team: 'b' }, metadata: { x: 1 } }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ tags: { team: 7 } }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ tags: { 'a.b': 'x' } }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ tags: { $where: 'x' } }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ tags: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ tags: { team: 'x'.repeat(256) } }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ tags: ['team'] }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ webhook_url_override: 'not a url' }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ webhook_url_override: 'ftp://example.com/hook' }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      [{ webhook_url_override: `https://example.com/${'x'.repeat(2048)}` }, 'provider_config_key=luma', 'patch-user', 400, 'invalid_body'],
      // Tags valid, URL refused: neither is stored.
      [{ tags: { team: 'b' }, webhook_url_override: 'http://169.254.169.254/latest' }, 'provider_config_key=luma', 'patch-user', 400, 'egress_refused'],
      [{ webhook_url_override: 'http://10.1.2.3/hook' }, 'provider_config_key=luma', 'patch-user', 400, 'egress_refused'],
      [{ webhook_url_override: 'http://[::1]:9/hook' }, 'provider_config_key=luma', 'patch-user', 400, 'egress_refused'],
      [{ tags: { team: 'b' } }, 'provider_config_key=luma', 'nobody', 404, 'unknown_connection'],
      [{ tags: { team: 'b' } }, 'provider_config_key=no-such-integration', 'patch-user', 404, 'unknown_provider_config'],
    ];
    for (const [body, query, id, status, code] of cases) {
      const res = await patch(body, query, id);
      expect({ body, query, id, status: res.status, code: res.body.error?.code }).toEqual({ body, query, id, status, code });
    }
    expect(await stored()).toEqual(before);
  });

  test('tags are replaced as a whole and shown by GET; other fields stay', async () => {
    const before = (await stored())!;
    const res = await patch({ tags: { team: 'b', plan: 'pro' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    const after = (await stored())!;
    expect(after.tags).toEqual({ team: 'b', plan: 'pro' });
    const { tags: _t, updated_at: _u, ...rest } = after;
    const { tags: _t0, updated_at: _u0, ...restBefore } = before;
    expect(rest).toEqual(restBefore);
    const got = await stack.api('GET', '/connections/patch-user?provider_config_key=luma');
    expect(got.body.tags).toEqual({ team: 'b', plan: 'pro' });
    const listed = await stack.api('GET', '/connections?connectionId=patch-user');
    expect(listed.body.connections[0].tags).toEqual({ team: 'b', plan: 'pro' });
  });

  test("with webhook_url_override set, the connection's auth webhook goes there (signed) and not to the environment's URL", async () => {
    expect((await patch({ webhook_url_override: connectionHooks.url })).status).toBe(200);
    expect((await stored())!.webhook_url_override).toBe(connectionHooks.url);
    expect((await stack.api('GET', '/connections/patch-user?provider_config_key=luma')).body.webhook_url_override).toBe(connectionHooks.url);

    const envCount = envHooks.received.length;
    await reconnect();
    const hook = await connectionHooks.waitFor((w) => w.body?.type === 'auth' && w.body.operation === 'override');
    expect(hook.body).toMatchObject({ connectionId: 'patch-user', providerConfigKey: 'luma', success: true });
    expect(String(hook.headers['webhook-signature'])).toMatch(/^v1,/);
    // Give a stray delivery to the environment's URL time to show up. Only this reconnect's
    // event counts: delivery is at least once, and on a loaded machine an earlier event may
    // arrive there again (a CI run saw one more delivery than counted).
    await new Promise((r) => setTimeout(r, 300));
    expect(envHooks.received.slice(envCount).filter((w) => w.body?.type === 'auth' && w.body.operation === 'override')).toEqual([]);
  });

  test("null clears the override: the connection's webhooks go to the environment's URL again", async () => {
    expect((await patch({ webhook_url_override: null })).status).toBe(200);
    expect((await stored())!.webhook_url_override).toBeNull();
    const overrideCount = connectionHooks.received.length;
    const envCount = envHooks.received.length;
    await reconnect();
    await envHooks.waitFor((w) => envHooks.received.indexOf(w) >= envCount && w.body?.type === 'auth' && w.body.operation === 'override');
    expect(connectionHooks.received.length).toBe(overrideCount);
  });

  test("a replay goes where the connection's webhooks go now, not where they went then", async () => {
    // The reconnect event sent to the override above; the override has been cleared since.
    const earlier = connectionHooks.received.find((w) => w.body?.type === 'auth' && w.body.operation === 'override');
    const id = String(earlier!.headers['webhook-id']);
    await settled(id, 'delivered');
    const overrideCount = connectionHooks.received.length;
    expect((await stack.api('POST', `/webhooks/events/${id}/replay`)).status).toBe(202);
    await envHooks.waitFor((w) => w.headers['webhook-id'] === id);
    await settled(id, 'delivered');
    expect(connectionHooks.received.length).toBe(overrideCount);
  });

  test("a deleted connection's events are not sent to the override it had, not even by a replay", async () => {
    const created = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'gone-user', credentials: { type: 'API_KEY', apiKey: API_KEY } },
    });
    expect(created.status).toBe(201);
    expect((await patch({ webhook_url_override: connectionHooks.url }, 'provider_config_key=luma', 'gone-user')).status).toBe(200);
    await reconnect('gone-user');
    const hook = await connectionHooks.waitFor((w) => w.body?.connectionId === 'gone-user' && w.body.operation === 'override');
    const id = String(hook.headers['webhook-id']);
    await settled(id, 'delivered');

    expect((await stack.api('DELETE', '/connections/gone-user?provider_config_key=luma')).status).toBe(200);
    const overrideCount = connectionHooks.received.length;
    const envCount = envHooks.received.length;
    expect((await stack.api('POST', `/webhooks/events/${id}/replay`)).status).toBe(202);
    await settled(id, 'failed');
    expect(connectionHooks.received.length).toBe(overrideCount);
    expect(envHooks.received.slice(envCount).filter((w) => w.headers['webhook-id'] === id)).toEqual([]);
  });

  /** Waits for the stored event to reach `status` (a replay is refused while it is pending). */
  async function settled(id: string, status: 'delivered' | 'failed') {
    await waitFor(async () => (await stack.core.stores.webhookOutbox.get(id))?.status === status, 60_000, `event ${id} ${status}`);
  }

  /** The end user re-authorizes through a reconnect session: an `auth` webhook with operation `override`. */
  async function reconnect(connectionId = 'patch-user') {
    const session = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: ['luma'], connection_id: connectionId } });
    expect(session.status).toBe(201);
    const res = await stack.api('POST', `/api-auth/api-key/luma?connect_session_token=${encodeURIComponent(session.body.data.token)}`, {
      key: null,
      body: { apiKey: API_KEY },
    });
    expect(res.status).toBeLessThan(300);
  }
});
