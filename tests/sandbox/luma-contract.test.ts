import { z } from 'zod';
import { luma } from '../../integrations/luma';
import type { ConnectionInfo } from '../../runtime/types';
import { createLumaSimulator, LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { liveContext } from '../mocks-runtime/live-recording';

// The Luma simulator stands in for Luma's public API in every test. Luma publishes no
// machine-readable description on npm or PyPI, and the description on its site covers the
// current `/v1` routes only, not the `/public/v1` ones the integration calls. The answers are
// checked here against the fields Luma's API reference documents for those routes
// (https://docs.luma.com/reference), written as strict zod schemas: a field the documentation
// does not name, or one of another type, fails.

const dateTime = z.iso.datetime({ offset: true });

/** A place, as Luma's event answers carry it (`geo_address_json`). */
const GeoAddress = z.strictObject({
  address: z.string(),
  city: z.string(),
  region: z.string(),
  country: z.string(),
  city_state: z.string(),
  full_address: z.string(),
  description: z.string(),
  place_id: z.string(),
  type: z.string(),
});

/** An event (https://docs.luma.com/reference/get_v1-calendar-list-events, the `event` of each entry). */
const Event = z.strictObject({
  api_id: z.string().startsWith('evt-'),
  calendar_api_id: z.string(),
  user_api_id: z.string(),
  name: z.string(),
  description: z.string(),
  description_md: z.string(),
  start_at: dateTime,
  end_at: dateTime,
  duration_interval: z.string().regex(/^P/, 'an ISO 8601 duration'),
  timezone: z.string(),
  created_at: dateTime,
  geo_address_json: GeoAddress.nullable(),
  geo_latitude: z.string().nullable(),
  geo_longitude: z.string().nullable(),
  meeting_url: z.string().nullable(),
  zoom_meeting_url: z.string().nullable(),
  url: z.url(),
  cover_url: z.url(),
  visibility: z.enum(['public', 'members-only', 'private']),
});

/** The answer of each route the integration and Weft call, by method and path. */
const ANSWERS: Record<string, z.ZodType> = {
  // https://docs.luma.com/reference/get_v1-calendar-list-events
  'GET /public/v1/calendar/list-events': z.strictObject({
    entries: z.array(z.strictObject({ api_id: z.string(), event: Event, tags: z.array(z.strictObject({ api_id: z.string(), name: z.string() })) })),
    has_more: z.boolean(),
    next_cursor: z.string().optional(),
  }),
  // https://docs.luma.com/reference/get_v1-event-get
  'GET /public/v1/event/get': z.strictObject({
    event: Event,
    hosts: z.array(z.strictObject({ api_id: z.string(), name: z.string(), email: z.string(), avatar_url: z.string() })),
  }),
  // https://docs.luma.com/reference/post_v1-event-create
  'POST /public/v1/event/create': z.strictObject({ api_id: z.string().startsWith('evt-') }),
  // https://docs.luma.com/reference/get_v1-user-get-self
  'GET /public/v1/user/get-self': z.strictObject({
    user: z.strictObject({ api_id: z.string(), name: z.string(), email: z.string(), avatar_url: z.string(), first_name: z.string(), last_name: z.string() }),
  }),
};
/** A refused request: clients read a `message`. */
const ErrorAnswer = z.object({ message: z.string() });

describe("the Luma simulator answers with the fields Luma's API reference documents", () => {
  it('for every call of the Luma integration and of Weft on its behalf', async () => {
    const sim = createLumaSimulator({ seed: 26, eventCount: 60, maxPageSize: 25, defaultPageSize: 25 });
    const base = await sim.start();
    const connection: ConnectionInfo = {
      connection_id: 'contract-luma',
      provider_config_key: 'luma',
      provider: 'luma',
      auth_mode: 'API_KEY',
      connection_config: {},
      metadata: {},
    };
    const live = liveContext({ integration: luma, simulatorUrl: base, headers: { [luma.provider.apiKey!.header]: LUMA_DEFAULT_API_KEY }, connection });
    try {
      await live.ctx.get({ endpoint: luma.provider.verify!.endpoint });
      for (const sync of luma.syncs) await sync.exec(live.ctx);
      const create = luma.actions.find((a) => a.name === 'create-event')!;
      await create.exec(live.ctx, {
        name: 'Checked against the reference',
        start_at: '2027-03-01T17:00:00.000Z',
        timezone: 'Europe/Berlin',
        duration_interval: 'PT2H',
      });
      // A refusal the action reports with Luma's message.
      await expect(create.exec(live.ctx, { name: 'Bad zone', start_at: '2027-03-01T17:00:00.000Z', timezone: 'Not/AZone' })).rejects.toMatchObject({
        code: 'event_rejected',
      });
    } finally {
      await sim.stop();
    }

    const checked = live.run.exchanges.map((x) => {
      const route = `${x.request.method} ${new URL(x.request.endpoint, base).pathname}`;
      const schema = x.response.status >= 400 ? ErrorAnswer : ANSWERS[route];
      const answer = `${route} → ${x.response.status}`;
      if (!schema) return { answer, problem: 'no documented answer is known for this route' };
      const parsed = schema.safeParse(x.response.data);
      return { answer, problem: parsed.success ? null : z.prettifyError(parsed.error) };
    });
    expect(checked.filter((c) => c.problem !== null)).toEqual([]);
    expect([...new Set(checked.map((c) => c.answer))].sort()).toEqual([
      'GET /public/v1/calendar/list-events → 200',
      'GET /public/v1/event/get → 200',
      'GET /public/v1/user/get-self → 200',
      'POST /public/v1/event/create → 200',
      'POST /public/v1/event/create → 400',
    ]);
  });
});
