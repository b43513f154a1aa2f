import { startWebhookReceiver } from '../support/webhook-receiver';
import { createLumaIntegration, readAllRecords, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitUntil } from '../support/wait';

/**
 * Luma signs nothing: each connection's webhook is made with a URL of its own, the intake's
 * with a random secret as its last segment, and only deliveries to a live webhook's URL are
 * taken in. An event created at Luma reaches the app (`forward`) and the events sync.
 */
describe('Luma webhooks at a secret URL per connection', () => {
  let stack: WeftStack;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let intake: string;

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    stack = await startWeftStack({ publicUrl: true, luma: { seed: 3, eventCount: 6 }, egressAllow: { webhooks: [hooks.url] } });
    await createLumaIntegration(stack);
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: hooks.url } })).status).toBe(200);
    intake = (await stack.api('GET', '/integrations/luma?include=webhook')).body.data.webhook_url;
    const made = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'lu-a', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(made.status).toBe(201);
    await stack.waitForSync('lu-a', 'list-events');
    await waitUntil(() => stack.luma.webhooks().length === 1, 30_000);
  });

  afterAll(async () => {
    await stack?.shutdown();
    await hooks?.close();
  });

  test('the connection has a webhook at its own URL under the intake, for the events the sync holds', () => {
    const [webhook] = stack.luma.webhooks();
    expect(webhook.url.startsWith(`${intake}/`)).toBe(true);
    const secret = webhook.url.slice(intake.length + 1);
    expect(secret).toMatch(/^[\w-]{32}$/);
    expect([...webhook.event_types].sort()).toEqual(['event.canceled', 'event.created', 'event.updated']);
    expect(stack.logs.join('\n')).not.toContain(secret);
  });

  test('an event created at Luma: forwarded to the app, and the events sync brings it in', async () => {
    const [id] = stack.luma.addEvents(1);
    await stack.luma.flushWebhooks();
    expect(stack.luma.webhookDeliveries().at(-1)).toMatchObject({ status: 'answered', statusCode: 202 });
    const forwarded = await hooks.waitFor((w) => w.body?.type === 'forward' && w.body.payload?.type === 'event.created', 30_000);
    expect(forwarded.body).toMatchObject({ from: 'luma', connectionId: 'lu-a', providerConfigKey: 'luma' });
    await waitUntil(async () => (await readAllRecords(stack, 'lu-a', 'CalendarEvent')).some((r: { id: string }) => r.id === id), 30_000);
  });

  test('a delivery to any other URL under the intake is unknown and stored nowhere', async () => {
    const before = await stack.core.stores.db.collection('provider_deliveries').countDocuments({});
    const body = JSON.stringify({ type: 'event.created', data: { id: 'evt-forged' } });
    for (const at of [intake, `${intake}/guessed-secret-0000000000000000000`]) {
      const res = await fetch(at, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unknown_webhook');
    }
    const malformed = await fetch(stack.luma.webhooks()[0].url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"data":{}}' });
    expect(malformed.status).toBe(400);
    expect(await stack.core.stores.db.collection('provider_deliveries').countDocuments({})).toBe(before);
  });

  test('deleting the connection deletes its webhook at Luma', async () => {
    expect((await stack.api('DELETE', '/connections/lu-a?provider_config_key=luma')).status).toBe(200);
    expect(stack.luma.webhooks()).toEqual([]);
  });
});
