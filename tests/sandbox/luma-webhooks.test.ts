import { z } from 'zod';
import { createLumaSimulator, LUMA_DEFAULT_API_KEY, type LumaSimulator } from '../../sandbox/luma';
import { WebhookReceiver } from './webhook-receiver';

type Json = Record<string, any>;

// The shapes Luma's API reference documents (https://docs.luma.com/reference: "Webhooks" and
// "Webhook Types"), as strict zod schemas: a field the documentation does not name fails.
const dateTime = z.iso.datetime({ offset: true });
const EVENT_TYPES = [
  'calendar.event.added',
  'calendar.person.subscribed',
  'event.canceled',
  'event.created',
  'event.updated',
  'guest.registered',
  'guest.updated',
  'ticket.registered',
] as const;
const Webhook = z.strictObject({
  id: z.string(),
  url: z.string(),
  event_types: z.array(z.enum(['*', ...EVENT_TYPES])),
  status: z.enum(['active', 'paused']),
  secret: z.string(),
  created_at: dateTime,
});
const nullableString = z.string().nullable();
/** The `data` of event.created / event.updated / event.canceled: the event as Get Event shows it. */
const EventData = z.strictObject({
  platform: z.literal('luma'),
  id: z.string().startsWith('evt-'),
  user_id: z.string(),
  calendar_id: z.string(),
  start_at: dateTime,
  duration_interval: z.string(),
  end_at: dateTime,
  created_at: dateTime,
  timezone: z.string(),
  name: z.string(),
  description: z.string(),
  description_md: z.string(),
  geo_address_json: z
    .strictObject({
      address: z.string(),
      city: nullableString,
      region: nullableString,
      country: nullableString,
      city_state: nullableString,
      full_address: nullableString,
      google_maps_place_id: nullableString,
      apple_maps_place_id: nullableString,
      description: nullableString,
    })
    .nullable(),
  coordinate: z.strictObject({ longitude: z.number(), latitude: z.number() }).nullable(),
  meeting_url: nullableString,
  location_type: z.enum(['discord', 'meet', 'twitch', 'twitter', 'youtube', 'zoom', 'offline', 'missing', 'unknown']),
  location_visibility: z.enum(['public', 'guests-only']),
  cover_url: z.string(),
  url: z.string(),
  visibility: z.enum(['public', 'members-only', 'private']),
  waitlist_status: z.enum(['disabled', 'enabled']),
  feedback_email: z.strictObject({ enabled: z.boolean(), delay: z.string().optional() }),
  geo_latitude: nullableString,
  geo_longitude: nullableString,
  tags: z.array(z.strictObject({ id: z.string(), name: z.string() })),
});
const Delivery = z.strictObject({ type: z.enum(['event.created', 'event.updated', 'event.canceled']), data: EventData });

let sim: LumaSimulator;
let base: string;
let receiver: WebhookReceiver;

beforeEach(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  sim = createLumaSimulator({ seed: 7, eventCount: 20 });
  base = await sim.start();
});

afterEach(async () => {
  await sim.stop();
  await receiver.close();
});

async function call(method: 'GET' | 'POST', path: string, body?: unknown, key: string | null = LUMA_DEFAULT_API_KEY) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers['x-luma-api-key'] = key;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
}

async function createWebhook(path: string, event_types: string[]): Promise<Json> {
  const res = await call('POST', '/v2/webhooks/create', { url: `${receiver.url}${path}`, event_types });
  expect(res.status).toBe(200);
  return Webhook.parse(res.body);
}

/** The deliveries a path received, checked against the documented payload, in arrival order. */
function received(path: string): Array<z.infer<typeof Delivery>> {
  return receiver.requests.filter((r) => r.url.pathname === path).map((r) => Delivery.parse(JSON.parse(r.body)));
}

describe('Luma simulator: webhooks', () => {
  it('creates, lists, gets, updates and deletes webhooks at the documented paths (and under /public)', async () => {
    const hook = await createWebhook('/all', ['*']);
    expect(hook).toMatchObject({ url: `${receiver.url}/all`, event_types: ['*'], status: 'active' });
    expect(hook.secret.length).toBeGreaterThanOrEqual(16);
    const second = await createWebhook('/some', ['event.created', 'event.canceled']);
    expect(second.id).not.toBe(hook.id);

    const list = await call('GET', '/v1/webhooks/list');
    expect(list.status).toBe(200);
    expect(z.strictObject({ entries: z.array(Webhook), has_more: z.boolean(), next_cursor: z.string().optional() }).parse(list.body)).toEqual({
      entries: [hook, second],
      has_more: false,
    });
    const paged = await call('GET', '/v1/webhooks/list?pagination_limit=1');
    expect(paged.body).toEqual({ entries: [hook], has_more: true, next_cursor: expect.any(String) });
    expect((await call('GET', `/v1/webhooks/list?pagination_limit=1&pagination_cursor=${paged.body.next_cursor}`)).body).toEqual({
      entries: [second],
      has_more: false,
    });
    expect(await call('GET', `/v2/webhooks/get?id=${hook.id}`)).toEqual({ status: 200, body: hook });
    expect(await call('GET', `/public/v2/webhooks/get?id=${hook.id}`)).toEqual({ status: 200, body: hook });

    const updated = await call('POST', '/v2/webhooks/update', { id: second.id, event_types: ['event.updated'], status: 'paused' });
    expect(updated).toEqual({ status: 200, body: { ...second, event_types: ['event.updated'], status: 'paused' } });
    expect(sim.webhooks()).toEqual([hook, updated.body]);

    expect(await call('POST', '/v1/webhooks/delete', { id: second.id })).toEqual({ status: 200, body: {} });
    expect((await call('GET', `/v2/webhooks/get?id=${second.id}`)).status).toBe(404);
    expect((await call('POST', '/public/v1/webhooks/delete', { id: hook.id })).status).toBe(200);
    expect(sim.webhooks()).toEqual([]);

    // Refused: no key, no event types, an unknown type, a URL that is not http(s), an unknown id.
    expect((await call('GET', '/v1/webhooks/list', undefined, null)).status).toBe(401);
    for (const body of [
      { url: receiver.url, event_types: [] },
      { url: receiver.url, event_types: ['event.deleted'] },
      { url: 'ftp://example.com/hook', event_types: ['*'] },
      { event_types: ['*'] },
    ]) {
      const res = await call('POST', '/v2/webhooks/create', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
    expect((await call('POST', '/v2/webhooks/update', { id: 'whk-nope', status: 'paused' })).status).toBe(404);
    expect((await call('POST', '/v2/webhooks/update', { id: hook.id })).status).toBe(404);
    expect(sim.webhooks()).toEqual([]);
  });

  it('posts event.created, event.updated and event.canceled to the webhooks subscribed to them, unsigned', async () => {
    await createWebhook('/all', ['*']);
    await createWebhook('/updates', ['event.updated']);
    const paused = await createWebhook('/paused', ['event.created']);
    await call('POST', '/v2/webhooks/update', { id: paused.id, status: 'paused' });

    const added = sim.addEvents(2);
    const [edited] = sim.editEvents(1);
    const before = sim.getEvent(added[0])!;
    sim.deleteEvents([added[0]]);
    const created = await call('POST', '/public/v1/event/create', { name: 'Webhook launch', start_at: '2026-09-01T18:00:00Z', timezone: 'Europe/Paris' });
    expect(created.status).toBe(200);
    await sim.flushWebhooks();

    const all = received('/all');
    expect(all.map((d) => [d.type, d.data.id])).toEqual([
      ['event.created', added[0]],
      ['event.created', added[1]],
      ['event.updated', edited],
      ['event.canceled', added[0]],
      ['event.created', created.body.api_id],
    ]);
    expect(received('/updates').map((d) => [d.type, d.data.id])).toEqual([['event.updated', edited]]);
    expect(receiver.requests.filter((r) => r.url.pathname === '/paused')).toEqual([]);

    // The data is the event as it is (or, canceled, as it last was).
    const now = sim.getEvent(edited)!.event;
    expect(all[2].data).toMatchObject({ name: now.name, start_at: now.start_at, url: now.url, calendar_id: sim.calendar.api_id });
    expect(all[3].data).toMatchObject({ id: before.api_id, name: before.event.name, start_at: before.event.start_at });
    expect(all[4].data).toMatchObject({ name: 'Webhook launch', timezone: 'Europe/Paris', start_at: '2026-09-01T18:00:00.000Z' });

    for (const r of receiver.requests) {
      expect(r.method).toBe('POST');
      expect(r.headers['content-type']).toBe('application/json');
      // Luma documents no signature: none is sent.
      expect(Object.keys(r.headers).filter((h) => /signature|hmac/i.test(h))).toEqual([]);
    }
    expect(sim.webhookDeliveries().every((d) => d.status === 'answered' && d.ok && d.statusCode === 200)).toBe(true);
  });

  it('delivers in the background, one at a time per webhook, and records a failure without retrying it', async () => {
    await createWebhook('/hook', ['event.created']);
    receiver.hold();
    const ids = sim.addEvents(3);
    await receiver.waitFor(1);
    expect(sim.webhookDeliveries().map((d) => d.status)).toEqual(['pending', 'pending', 'pending']);
    receiver.release();
    await sim.flushWebhooks();
    expect(received('/hook').map((d) => d.data.id)).toEqual(ids);
    expect(receiver.maxConcurrent).toBe(1);

    receiver.answer = () => ({ status: 500 });
    sim.addEvents(1);
    await sim.flushWebhooks();
    const failed = sim.webhookDeliveries().at(-1)!;
    expect(failed).toMatchObject({ event: 'event.created', status: 'answered', statusCode: 500, ok: false, attempt: 1 });
    expect(received('/hook')).toHaveLength(4);
    receiver.answer = () => ({ status: 204 });
    sim.redeliver(failed.id);
    await sim.flushWebhooks();
    expect(received('/hook')).toHaveLength(5);
    expect(receiver.requests[4].body).toBe(receiver.requests[3].body);
    expect(sim.webhookDeliveries().at(-1)).toMatchObject({ id: failed.id, attempt: 2, redelivery: true, statusCode: 204, ok: true });
  });
});
