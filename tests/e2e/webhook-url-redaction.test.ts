import dns from 'node:dns';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitFor } from '../support/wait';

/**
 * A Slack incoming-webhook URL as the environment's webhook target, on the real stack: the
 * URL's last path segment is its credential. The delivery is attempted and recorded; the
 * record, the events API and the logs show the URL with that segment redacted, while the
 * attempt itself went to the real URL. Slack is a third party: the name hooks.slack.com is
 * answered "not found" here (the egress resolves through node's dns.lookup), so nothing is
 * ever sent to it, with or without a network.
 */

const SLACK_SECRET = 'xoxSlackHookSecret0123456789';
const SLACK_URL = `https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/${SLACK_SECRET}`;
const SHOWN_URL = 'https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/REDACTED';

describe('a Slack webhook URL is kept and shown redacted', () => {
  let stack: WeftStack;
  const realLookup = dns.lookup;
  /** The names the egress asked for (only hooks.slack.com is recorded). */
  const looked: string[] = [];

  beforeAll(async () => {
    (dns as { lookup: unknown }).lookup = (hostname: string, options: unknown, callback?: unknown) => {
      if (hostname !== 'hooks.slack.com') return (realLookup as (...args: unknown[]) => unknown)(hostname, options, callback);
      looked.push(hostname);
      const done = (typeof options === 'function' ? options : callback) as (err: Error) => void;
      process.nextTick(() => done(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname })));
    };
    stack = await startWeftStack({ egressTimeouts: { connectTimeoutMs: 2_000 } });
    await createLumaIntegration(stack);
  }, 120_000);

  afterAll(async () => {
    await stack?.shutdown();
    (dns as { lookup: unknown }).lookup = realLookup;
  });

  test('webhook_deliveries, GET /webhooks/events/:id and the warn log hold no secret of the URL', async () => {
    expect((await stack.client.PATCH('/environment', { body: { webhook_url: SLACK_URL } })).response.status).toBe(200);
    const created = await stack.client.POST('/connections', {
      body: { provider_config_key: 'luma', connection_id: 'slack-target', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
    });
    expect(created.response.status).toBe(201);
    const listed = await stack.client.GET('/webhooks/events', { params: { query: { type: 'auth', connection_id: 'slack-target' } } });
    const id = listed.data!.events[0].id;

    let attempts: Array<{ url: string; error: string | null; target: string }> = [];
    await waitFor(
      async () => {
        const res = await stack.client.GET('/webhooks/events/{id}', { params: { path: { id } } });
        attempts = (res.data?.delivery_attempts ?? []) as typeof attempts;
        return attempts.length > 0;
      },
      60_000,
      'a delivery attempt recorded',
    );
    const shown = await stack.api('GET', `/webhooks/events/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.delivery_attempts[0]).toMatchObject({ target: 'primary', url: SHOWN_URL });
    // It was attempted at the real address (its host looked up), and failed there.
    expect(looked).toContain('hooks.slack.com');
    expect(shown.body.delivery_attempts[0].error).toEqual(expect.any(String));
    expect(JSON.stringify(shown.body)).not.toContain(SLACK_SECRET);

    const stored = await stack.core.stores.db.collection('webhook_deliveries').find({ event_id: id }).toArray();
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.map((d) => d.url)).toEqual(stored.map(() => SHOWN_URL));
    expect(JSON.stringify(stored)).not.toContain(SLACK_SECRET);

    await waitFor(async () => stack.logs.some((l) => l.includes('webhook attempt failed')), 30_000, 'the failed attempt logged');
    const warned = stack.logs.filter((l) => l.includes('webhook attempt failed'));
    expect(warned.join('\n')).toContain(SHOWN_URL);
    expect(stack.logs.filter((l) => l.includes(SLACK_SECRET))).toEqual([]);
  });

  test('an attempt recorded with the URL in plaintext (before the rule existed) is listed redacted', async () => {
    const stores = stack.core.stores;
    await stores.webhookDeliveries.record({
      event_id: 'msg_legacy',
      type: 'auth',
      environment: 'dev',
      target: 'alert',
      url: SLACK_URL,
      attempt: 1,
      status: null,
      error: `fetch failed for ${SLACK_URL}`,
      duration_ms: 3,
      created_at: new Date(),
    });
    // As an earlier version wrote it: straight into the collection.
    await stores.db.collection('webhook_deliveries').insertOne({
      _id: `msg_legacy|0000000000000|raw` as never,
      event_id: 'msg_legacy',
      type: 'auth',
      environment: 'dev',
      target: 'alert',
      url: SLACK_URL,
      attempt: 2,
      status: 500,
      error: 'HTTP 500',
      duration_ms: 3,
      created_at: new Date(),
    });
    const raw = await stores.db.collection('webhook_deliveries').find({ event_id: 'msg_legacy', attempt: 1 }).toArray();
    expect(JSON.stringify(raw)).not.toContain(SLACK_SECRET);
    const listed = await stores.webhookDeliveries.listForEvent('dev', 'msg_legacy');
    expect(listed.map((a) => a.url)).toEqual([SHOWN_URL, SHOWN_URL]);
    expect(JSON.stringify(listed)).not.toContain(SLACK_SECRET);
  });
});
