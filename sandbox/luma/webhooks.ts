/**
 * Luma's webhooks, as its API reference describes them (the "Webhooks" and "Webhook Types"
 * sections of the OpenAPI description behind https://docs.luma.com/reference, host
 * public-api.luma.com) and its help page (https://help.luma.com/p/webhooks):
 *
 *   GET  /v1/webhooks/list[?pagination_cursor&pagination_limit]  → { entries: [webhook], has_more, next_cursor? }
 *   GET  /v2/webhooks/get?id=                                    → webhook
 *   POST /v2/webhooks/create  { url, event_types: [...] (≥ 1) }   → webhook
 *   POST /v2/webhooks/update  { id, event_types?, status? }       → webhook
 *   POST /v1/webhooks/delete  { id }                             → {}
 *   webhook = { id, url, event_types, status: "active" | "paused", secret, created_at }
 *   event_types: "*" or any of event.created, event.updated, event.canceled, guest.registered,
 *   guest.updated, ticket.registered, calendar.event.added, calendar.person.subscribed.
 *
 * The same routes are also served under `/public` (`/public/v1/webhooks/list`, …), the prefix
 * of the legacy host the rest of this simulator stands in for; that alias is this simulator's
 * assumption, not documented. So are the shapes of a webhook's `id` (`whk-…`) and `secret`,
 * and the `{ message }` errors (as the other routes answer).
 *
 * A delivery is a POST of `{ type, data }` with `Content-Type: application/json`, `data` the
 * event as the current API's Get Event shows it (`platform: "luma"`, `id`, `user_id`,
 * `calendar_id`, …), to every active webhook subscribed to the type (or to "*"). Luma's
 * documentation describes no signature header and no retries (a webhook object carries a
 * `secret`, but nothing says how it signs), so none is sent and nothing is retried; failures
 * are recorded. Of the event types the simulator sends event.created (addEvents, POST
 * /public/v1/event/create), event.updated (editEvents) and event.canceled (deleteEvents).
 */
import { Rng } from '../shared/prng';
import { WebhookSender, WebhookSource } from '../shared/webhook-sender';
import type { LumaEventEntry } from './data';

const LUMA_WEBHOOK_EVENT_TYPES = [
  'calendar.event.added',
  'calendar.person.subscribed',
  'event.canceled',
  'event.created',
  'event.updated',
  'guest.registered',
  'guest.updated',
  'ticket.registered',
] as const;
export type LumaWebhookEventType = (typeof LUMA_WEBHOOK_EVENT_TYPES)[number];

/** A webhook as the API answers it. */
export interface LumaWebhook {
  id: string;
  url: string;
  event_types: string[];
  status: 'active' | 'paused';
  secret: string;
  created_at: string;
}

/** What a route throws: its status and `{ message }`. */
export class WebhookRouteError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const DELIVERY_TIMEOUT_MS = 10_000;
const KNOWN_TYPES = new Set<string>(['*', ...LUMA_WEBHOOK_EVENT_TYPES]);

/**
 * An event in the current API's shape (Get Event; the `data` of event.* webhooks), from the
 * legacy entry the simulator stores.
 */
export function webhookEventData(entry: LumaEventEntry): Record<string, unknown> {
  const e = entry.event;
  const geo = e.geo_address_json;
  const meeting = e.meeting_url ?? e.zoom_meeting_url;
  let locationType = 'missing';
  if (geo) locationType = 'offline';
  else if (meeting) {
    const host = new URL(meeting).hostname;
    locationType = /(^|\.)zoom\.us$/.test(host) ? 'zoom' : host === 'meet.google.com' ? 'meet' : 'unknown';
  }
  const lat = e.geo_latitude === null ? NaN : Number(e.geo_latitude);
  const lng = e.geo_longitude === null ? NaN : Number(e.geo_longitude);
  return {
    platform: 'luma',
    id: e.api_id,
    user_id: e.user_api_id,
    calendar_id: e.calendar_api_id,
    start_at: e.start_at,
    duration_interval: e.duration_interval,
    end_at: e.end_at,
    created_at: e.created_at,
    timezone: e.timezone,
    name: e.name,
    description: e.description,
    description_md: e.description_md,
    geo_address_json: geo
      ? {
          address: geo.address,
          city: geo.city,
          region: geo.region,
          country: geo.country,
          city_state: geo.city_state,
          full_address: geo.full_address,
          google_maps_place_id: geo.place_id ?? null,
          apple_maps_place_id: null,
          description: geo.description,
        }
      : null,
    coordinate: Number.isFinite(lat) && Number.isFinite(lng) ? { longitude: lng, latitude: lat } : null,
    meeting_url: meeting,
    location_type: locationType,
    location_visibility: 'public',
    cover_url: e.cover_url,
    url: e.url,
    visibility: e.visibility,
    waitlist_status: 'disabled',
    feedback_email: { enabled: false },
    geo_latitude: e.geo_latitude,
    geo_longitude: e.geo_longitude,
    tags: entry.tags.map((t) => ({ id: t.api_id, name: t.name })),
  };
}

export class LumaWebhooks extends WebhookSource {
  private readonly hooks = new Map<string, LumaWebhook>();
  protected readonly sender: WebhookSender;
  private counter = 0;
  private deliveryCounter = 0;

  constructor(
    private readonly deps: {
      seedK: number;
      /** Wall-clock time for `created_at` (the simulator's clock may be monotonic). */
      wallClock: () => number;
      clock: () => number;
    },
  ) {
    super();
    this.sender = new WebhookSender({ timeoutMs: DELIVERY_TIMEOUT_MS, clock: deps.clock });
  }

  /** The route handlers by `METHOD path`, each taking the query and the raw body. */
  routes(): Array<[string, (q: URLSearchParams, body: string) => { status: number; body: unknown }]> {
    const ok = (body: unknown) => ({ status: 200, body });
    const table: Array<[string, (q: URLSearchParams, body: string) => { status: number; body: unknown }]> = [
      ['GET /v1/webhooks/list', (q) => ok(this.list(q))],
      ['GET /v2/webhooks/get', (q) => ok({ ...this.require(q.get('id') ?? undefined) })],
      ['POST /v2/webhooks/create', (_q, body) => ok(this.create(parseObject(body)))],
      ['POST /v2/webhooks/update', (_q, body) => ok(this.update(parseObject(body)))],
      ['POST /v1/webhooks/delete', (_q, body) => ok(this.delete(parseObject(body)))],
    ];
    return [
      ...table,
      ...table.map(([k, f]): [string, (q: URLSearchParams, body: string) => { status: number; body: unknown }] => [k.replace(' /', ' /public/'), f]),
    ];
  }

  private list(q: URLSearchParams): { entries: LumaWebhook[]; has_more: boolean; next_cursor?: string } {
    const all = [...this.hooks.values()];
    const rawLimit = q.get('pagination_limit');
    const limit = rawLimit === null ? 50 : Number(rawLimit);
    if (!Number.isInteger(limit) || limit < 1) throw new WebhookRouteError(400, 'pagination_limit must be a positive integer');
    const cursor = q.get('pagination_cursor');
    let start = 0;
    if (cursor !== null && cursor !== '') {
      const i = all.findIndex((h) => h.id === cursor);
      if (i < 0) throw new WebhookRouteError(400, 'Invalid pagination_cursor');
      start = i + 1;
    }
    const page = all.slice(start, start + Math.min(limit, 100));
    const hasMore = start + page.length < all.length;
    return {
      entries: page.map((h) => ({ ...h, event_types: [...h.event_types] })),
      has_more: hasMore,
      ...(hasMore ? { next_cursor: page[page.length - 1].id } : {}),
    };
  }

  private require(id: unknown): LumaWebhook {
    if (typeof id !== 'string' || id === '') throw new WebhookRouteError(400, 'id is required');
    const h = this.hooks.get(id);
    if (!h) throw new WebhookRouteError(404, 'Webhook not found');
    return h;
  }

  private eventTypes(value: unknown): string[] {
    if (!Array.isArray(value) || value.length === 0) throw new WebhookRouteError(400, 'event_types must be a non-empty array');
    for (const t of value) {
      if (typeof t !== 'string' || !KNOWN_TYPES.has(t)) throw new WebhookRouteError(400, `event_types: unknown event type ${JSON.stringify(t)}`);
    }
    return [...new Set(value as string[])];
  }

  private create(b: Record<string, unknown>): LumaWebhook {
    let url: URL | null = null;
    try {
      url = typeof b.url === 'string' ? new URL(b.url) : null;
    } catch {
      url = null;
    }
    if (!url || !/^https?:$/.test(url.protocol)) throw new WebhookRouteError(400, 'url must be an http(s) URL');
    const rng = Rng.from(this.deps.seedK, 'webhook', this.counter++);
    const hook: LumaWebhook = {
      id: 'whk-' + rng.alnum(14),
      url: b.url as string,
      event_types: this.eventTypes(b.event_types),
      status: 'active',
      secret: rng.alnum(32),
      created_at: new Date(this.deps.wallClock()).toISOString(),
    };
    this.hooks.set(hook.id, hook);
    return { ...hook, event_types: [...hook.event_types] };
  }

  private update(b: Record<string, unknown>): LumaWebhook {
    const hook = this.require(b.id);
    const types = b.event_types === undefined ? undefined : this.eventTypes(b.event_types);
    if (b.status !== undefined && b.status !== 'active' && b.status !== 'paused') throw new WebhookRouteError(400, 'status must be active or paused');
    if (types) hook.event_types = types;
    if (b.status !== undefined) hook.status = b.status as 'active' | 'paused';
    return { ...hook, event_types: [...hook.event_types] };
  }

  private delete(b: Record<string, unknown>): Record<string, never> {
    this.hooks.delete(this.require(b.id).id);
    return {};
  }

  // ---- deliveries ----------------------------------------------------------------------

  /** Whether any active webhook takes this type (building an event's data costs a little). */
  listening(type: LumaWebhookEventType): boolean {
    for (const h of this.hooks.values()) if (h.status === 'active' && (h.event_types.includes('*') || h.event_types.includes(type))) return true;
    return false;
  }

  /** POSTs `{ type, data }` to every active webhook subscribed to the type (or to "*"). */
  send(type: LumaWebhookEventType, data: Record<string, unknown>): void {
    const body = JSON.stringify({ type, data });
    for (const h of this.hooks.values()) {
      if (h.status !== 'active' || !(h.event_types.includes('*') || h.event_types.includes(type))) continue;
      this.sender.enqueue({
        id: Rng.from(this.deps.seedK, 'webhook-delivery', this.deliveryCounter++).uuid(),
        lane: h.id,
        url: h.url,
        event: type,
        action: null,
        headers: { 'content-type': 'application/json' },
        body,
      });
    }
  }

  webhooks(): LumaWebhook[] {
    return [...this.hooks.values()].map((h) => ({ ...h, event_types: [...h.event_types] }));
  }
}

function parseObject(body: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new WebhookRouteError(400, 'Request body must be valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new WebhookRouteError(400, 'Request body must be a JSON object');
  return parsed as Record<string, unknown>;
}
