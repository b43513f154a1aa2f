/**
 * A deterministic simulator of the legacy Luma public API (`/public/v1/...`), the shape
 * Weft's `luma` integration syncs from.
 *
 * Routes:
 *   GET /public/v1/user/get-self         → { user: { api_id, name, email, avatar_url, first_name, last_name } }
 *   GET /public/v1/calendar/list-events  → { entries: [{ api_id, event, tags }], has_more, next_cursor? }
 *   GET /public/v1/event/get?api_id=     → { event, hosts: [{ api_id, name, email, avatar_url }] }
 *   POST /public/v1/event/create         JSON { name, start_at, timezone, end_at? | duration_interval?,
 *        description_md?, meeting_url?, geo_address_json?, visibility? } → { api_id } (400 { message }
 *        for a bad field); the event is then listed by list-events (no tags) and served by event/get.
 *   Webhooks (webhooks.ts), at the paths Luma's current API documents (and the same under /public):
 *   GET /v1/webhooks/list, GET /v2/webhooks/get?id=, POST /v2/webhooks/create { url, event_types },
 *   POST /v2/webhooks/update { id, event_types?, status? }, POST /v1/webhooks/delete { id }.
 *   Every active webhook subscribed to the type (or "*") is POSTed `{ type, data }` in the
 *   background with plain fetch: event.created (addEvents, event/create), event.updated
 *   (editEvents), event.canceled (deleteEvents). Unsigned: Luma documents no signature.
 *
 * Request pipeline (in this order):
 *   1. failNext() injections answer first (any path, any key).
 *   2. Unknown path or method → 404.
 *   3. Missing / unknown `x-luma-api-key` → 401.
 *   4. Rate limit per key (sliding window + lockout) → 429 with `Retry-After` (seconds to the
 *      lockout's end). Every answer past this step carries `X-RateLimit-Limit`,
 *      `X-RateLimit-Remaining` and `X-RateLimit-Reset` (epoch seconds: when the window frees a
 *      slot, or on a 429 when the lockout ends), as docs/providers/luma.md describes.
 *   5. The route: 400 for bad parameters, 404 for an unknown event, else 200.
 * The response is then delayed by the current latency.
 */
import type http from 'node:http';
import { z } from 'zod';
import { Rng } from '../shared/prng';
import { sendJson } from '../shared/http';
import { SimulatorHost } from '../shared/simulator-host';
import { maxInAnyWindow, monotonicNow } from '../shared/rate';
import type { WebhookDeliveryRecord } from '../shared/webhook-sender';
import { LumaWebhooks, WebhookRouteError, webhookEventData, type LumaWebhook } from './webhooks';
import {
  buildCreatedEvent,
  buildEntry,
  eventId,
  eventStartMs,
  makeDirectory,
  seedKey,
  type CreateEventFields,
  type Directory,
  type EventSkeleton,
  type LumaGeoAddress,
  type LumaCalendar,
  type LumaEventEntry,
  type LumaUser,
} from './data';

// ---------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------

export const LUMA_DEFAULT_API_KEY = 'sandbox-luma-api-key';

export const LumaSimulatorOptionsSchema = z
  .object({
    /** Seed for all generated data. Same seed + same operations ⇒ byte-identical responses. */
    seed: z.number().finite().default(1),
    /** Number of events generated at start. */
    eventCount: z.number().int().min(0).max(2_000_000).default(200),
    /** Accepted `x-luma-api-key` values. */
    apiKeys: z.array(z.string().min(1)).min(1).default([LUMA_DEFAULT_API_KEY]),
    /** Sliding window per API key across all endpoints; exceeding it locks the key out (a calendar key's limit by default). */
    rateLimit: z
      .object({
        limit: z.number().int().positive().default(200),
        windowMs: z.number().positive().default(60_000),
        lockoutMs: z.number().min(0).default(60_000),
      })
      .prefault({}),
    /** `pagination_limit` above this is clamped to it. */
    maxPageSize: z.number().int().positive().default(100),
    /** Page size when `pagination_limit` is absent. */
    defaultPageSize: z.number().int().positive().default(50),
    /** Artificial delay (ms) before every response; see also `setLatency`. */
    latencyMs: z.number().min(0).default(0),
    /** Calendar identity; defaults derive from the seed. */
    calendar: z.object({ api_id: z.string().min(1).optional(), name: z.string().min(1).optional() }).prefault({}),
    /** Overrides for the API key's own user (`get-self`); defaults derive from the seed. */
    user: z
      .object({
        api_id: z.string().min(1).optional(),
        name: z.string().optional(),
        email: z.string().optional(),
        avatar_url: z.string().optional(),
        first_name: z.string().optional(),
        last_name: z.string().optional(),
      })
      .prefault({}),
    /**
     * Clock (epoch ms) for rate limiting and the request log. Defaults to a monotonic clock.
     * Never used for event data.
     */
    now: z.custom<() => number>((v) => typeof v === 'function', { message: 'now must be a function' }).optional(),
  })
  .strict()
  .refine((o) => o.defaultPageSize <= o.maxPageSize, {
    message: 'defaultPageSize must not exceed maxPageSize',
    path: ['defaultPageSize'],
  });

export type LumaSimulatorOptions = z.input<typeof LumaSimulatorOptionsSchema>;
export type ResolvedLumaSimulatorOptions = z.output<typeof LumaSimulatorOptionsSchema>;

// ---------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------

export interface LumaRequestLogEntry {
  /** Arrival time, epoch ms from the simulator clock. */
  at: number;
  method: string;
  path: string;
  /** Query parameters (repeated ones as arrays); any value equal to an API key is redacted. */
  query: Record<string, string | string[]>;
  status: number;
}

export interface LumaSimulatorStats {
  /** All requests received (any status). */
  requests: number;
  byStatus: Record<number, number>;
  /**
   * The largest number of requests carrying one valid API key within any `windowMs` span
   * (accepted, rate-limited and injected failures alike), from the request timestamps.
   */
  maxRequestsInAnyWindow: number;
  /** Requests answered 429 by the rate limiter (not counting `failNext(n, 429)` injections). */
  rateLimited: number;
}

export interface LumaSimulator {
  /** Starts listening on 127.0.0.1 (port 0 = any free port); resolves with `http://127.0.0.1:PORT`. */
  start(port?: number): Promise<string>;
  stop(): Promise<void>;
  /** Base URL while started, else null. */
  readonly url: string | null;
  readonly options: Readonly<ResolvedLumaSimulatorOptions>;
  readonly calendar: Readonly<LumaCalendar>;
  /** The API key's own user, as `get-self` returns it (inside `{ user }`). */
  readonly user: Readonly<LumaUser>;

  // Injection
  /** Edits `count` seeded-random live events or the given ids; returns the edited ids. */
  editEvents(countOrIds: number | readonly string[]): string[];
  /** Deletes `count` seeded-random live events or the given ids; returns the deleted ids. */
  deleteEvents(countOrIds: number | readonly string[]): string[];
  /** Adds `n` new events (deterministic from seed and creation order); returns their ids. */
  addEvents(n: number): string[];
  /**
   * Serves one event with some of its `event` fields replaced, as real data sometimes is
   * (a malformed date, a broken URL), to test how clients handle bad records.
   */
  corruptEvent(id: string, fields: Record<string, unknown>): void;
  /** Clears every key's sliding window and lockout (stats are kept). */
  resetRateLimits(): void;
  setLatency(ms: number): void;
  /** The next `n` requests (any path, any key) answer `status` with `{ message }`. */
  failNext(n: number, status?: number): void;

  // Inspection
  stats(): LumaSimulatorStats;
  /** Clears the request log and the stats (not the rate-limit state). */
  resetStats(): void;
  requestLog(): LumaRequestLogEntry[];
  /** Current events (legacy entry shape), ascending by (start_at, api_id); fresh objects (~10 µs each). */
  events(): LumaEventEntry[];
  /** Current event ids in the same order as `events()`, without building the entries. */
  eventIds(): string[];
  /** One current event (fresh object), or undefined when it does not exist (or was deleted). */
  getEvent(id: string): LumaEventEntry | undefined;

  // Webhooks (created through the API)
  /** The calendar's webhooks as the API shows them. */
  webhooks(): LumaWebhook[];
  /** Every delivery attempt so far, oldest first. */
  webhookDeliveries(): WebhookDeliveryRecord[];
  /** Resolves when every delivery queued so far has been answered (or has failed). */
  flushWebhooks(): Promise<void>;
  /** Sends a delivery again with the same body (Luma documents no retries; this stands in for one). */
  redeliver(deliveryId: string): void;
}

// ---------------------------------------------------------------------------------------
// Event store
// ---------------------------------------------------------------------------------------

function compareKey(aStart: number, aId: string, bStart: number, bId: string): number {
  if (aStart !== bStart) return aStart < bStart ? -1 : 1;
  return aId < bId ? -1 : aId > bId ? 1 : 0;
}

class EventStore {
  /** Live events sorted ascending by (startMs, id). */
  private sorted: EventSkeleton[] = [];
  private readonly byId = new Map<string, EventSkeleton>();
  /** Every id ever issued (deleted ones too), so new ids never reuse an old one. */
  private readonly issued = new Set<string>();
  private readonly versions = new Map<number, number>();
  /** Field overrides of events served with bad data (see corruptEvent). */
  private readonly corruptions = new Map<string, Record<string, unknown>>();
  private nextIndex = 0;

  constructor(
    private readonly seedK: number,
    private readonly dir: Directory,
    initialCount: number,
  ) {
    this.createSkeletons(initialCount);
    this.sorted.sort((a, b) => compareKey(a.startMs, a.id, b.startMs, b.id));
  }

  private createSkeletons(n: number): EventSkeleton[] {
    const created: EventSkeleton[] = [];
    for (let k = 0; k < n; k++) {
      const index = this.nextIndex++;
      let attempt = 0;
      let id = eventId(this.seedK, index, attempt);
      while (this.issued.has(id)) id = eventId(this.seedK, index, ++attempt);
      const skel: EventSkeleton = { index, id, startMs: eventStartMs(this.seedK, index) };
      this.issued.add(id);
      this.byId.set(id, skel);
      this.sorted.push(skel);
      created.push(skel);
    }
    return created;
  }

  get size(): number {
    return this.sorted.length;
  }

  list(): readonly EventSkeleton[] {
    return this.sorted;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  skeleton(id: string): EventSkeleton | undefined {
    return this.byId.get(id);
  }

  /**
   * Builds the entry on demand (~10 µs): nothing is cached, so memory stays small for
   * 100,000 events and every call returns a fresh object the caller may keep or mutate.
   */
  entry(skel: EventSkeleton): LumaEventEntry {
    const entry = skel.created
      ? { api_id: skel.id, event: { ...skel.created, geo_address_json: skel.created.geo_address_json && { ...skel.created.geo_address_json } }, tags: [] }
      : buildEntry(this.seedK, this.dir, skel, this.versions.get(skel.index) ?? 0);
    const corrupt = this.corruptions.get(skel.id);
    if (corrupt) Object.assign(entry.event as unknown as Record<string, unknown>, corrupt);
    return entry;
  }

  corrupt(id: string, fields: Record<string, unknown>): void {
    this.corruptions.set(id, { ...this.corruptions.get(id), ...fields });
  }

  /** An event created through the API (stored as given; edits through `editEvents` leave it as it is). */
  create(fields: CreateEventFields, createdAtMs: number): string {
    const [skel] = this.createSkeletons(1);
    skel.startMs = fields.startMs;
    skel.created = buildCreatedEvent(this.seedK, this.dir, skel.index, skel.id, fields, createdAtMs);
    this.sorted.sort((a, b) => compareKey(a.startMs, a.id, b.startMs, b.id));
    return skel.id;
  }

  add(n: number): string[] {
    const created = this.createSkeletons(n);
    this.sorted.sort((a, b) => compareKey(a.startMs, a.id, b.startMs, b.id));
    return created.map((s) => s.id);
  }

  edit(ids: readonly string[]): void {
    for (const id of ids) {
      const skel = this.byId.get(id)!;
      this.versions.set(skel.index, (this.versions.get(skel.index) ?? 0) + 1);
    }
  }

  delete(ids: readonly string[]): void {
    if (ids.length === 0) return;
    for (const id of ids) {
      this.byId.delete(id);
    }
    this.sorted = this.sorted.filter((s) => this.byId.has(s.id));
  }

  /** First position whose key is >= (startMs, id). */
  lowerBound(startMs: number, id: string): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.sorted[mid];
      if (compareKey(s.startMs, s.id, startMs, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First position whose key is > (startMs, id). */
  upperBound(startMs: number, id: string): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.sorted[mid];
      if (compareKey(s.startMs, s.id, startMs, id) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First position whose start is >= startMs. */
  startLowerBound(startMs: number): number {
    return this.lowerBound(startMs, '');
  }
}

// ---------------------------------------------------------------------------------------
// Cursors: opaque, position-independent (they encode the sort key of the last entry sent)
// ---------------------------------------------------------------------------------------

const CURSOR_RE = /^v1:(\d{1,16}):(evt-[A-Za-z0-9]{1,64})$/;

export function encodeCursor(startMs: number, id: string): string {
  return Buffer.from(`v1:${startMs}:${id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { startMs: number; id: string } | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  const m = CURSOR_RE.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) return null;
  const startMs = Number(m[1]);
  if (!Number.isSafeInteger(startMs)) return null;
  return { startMs, id: m[2] };
}

// ---------------------------------------------------------------------------------------
// Simulator
// ---------------------------------------------------------------------------------------

type Reply = { status: number; body: unknown; headers?: Record<string, string> };

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const SORT_DIRECTIONS = new Set(['asc', 'desc', 'asc nulls last', 'desc nulls last']);

/** Request bodies above this are refused (413) without being parsed. */
const MAX_BODY_BYTES = 1024 * 1024;

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** An ISO 8601 date-time with an offset (or Z), as Luma's `start_at`/`end_at`; undefined when absent. */
function isoInstant(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new HttpError(400, `${name} must be an ISO 8601 date-time with an offset`);
  }
  return Date.parse(value);
}

/** `duration_interval` such as `PT2H`, `PT90M`, `P1DT2H`: whole minutes, at least one. */
function durationMinutes(value: unknown): number {
  const m = typeof value === 'string' ? /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?)?$/.exec(value) : null;
  const minutes = m ? Number(m[1] ?? 0) * 1440 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : 0;
  if (!m || minutes < 1) throw new HttpError(400, 'duration_interval must be an ISO 8601 duration such as PT2H');
  return minutes;
}

function ok(body: unknown): Reply {
  return { status: 200, body };
}

function single(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw new HttpError(400, `${name} must be given at most once`);
  const v = all[0];
  return v === undefined || v === '' ? undefined : v;
}

function parseIsoParam(query: URLSearchParams, name: string): number | undefined {
  const v = single(query, name);
  if (v === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(v)) {
    throw new HttpError(400, `${name} must be an ISO 8601 date-time`);
  }
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw new HttpError(400, `${name} must be an ISO 8601 date-time`);
  return ms;
}

export function createLumaSimulator(options: LumaSimulatorOptions = {}): LumaSimulator {
  const opts = LumaSimulatorOptionsSchema.parse(options);
  const clock = opts.now ?? monotonicNow;
  const seedK = seedKey(opts.seed);
  const dir = makeDirectory(seedK, {
    calendar: opts.calendar,
    user: Object.fromEntries(Object.entries(opts.user).filter(([, v]) => v !== undefined)) as Partial<LumaUser>,
  });
  Object.freeze(dir.calendar);
  Object.freeze(dir.self);
  const store = new EventStore(seedK, dir, opts.eventCount);
  const apiKeys = new Set(opts.apiKeys);

  let mutationCounter = 0;

  // Rate limiting: admitted-request timestamps per key + lockout deadline.
  const windows = new Map<string, number[]>();
  const lockedUntil = new Map<string, number>();
  // Stats.
  const keyTimestamps = new Map<string, number[]>();
  let log: LumaRequestLogEntry[] = [];
  let byStatus: Record<number, number> = {};
  let rateLimitedCount = 0;

  const simHost = new SimulatorHost('Luma', (req, res) => handle(req, res), opts.latencyMs);
  const webhooks = new LumaWebhooks({ seedK, wallClock: opts.now ?? Date.now, clock });
  /** event.* deliveries carry the event as the current API shows it. */
  const sendEvent = (type: 'event.created' | 'event.updated', id: string) => {
    const skel = store.skeleton(id);
    if (skel && webhooks.listening(type)) webhooks.send(type, webhookEventData(store.entry(skel)));
  };

  // ---- routes --------------------------------------------------------------------------

  function getSelf(): Reply {
    return ok({ user: { ...dir.self } });
  }

  function listEvents(query: URLSearchParams): Reply {
    const rawLimit = single(query, 'pagination_limit');
    let limit = opts.defaultPageSize;
    if (rawLimit !== undefined) {
      if (!/^\d+$/.test(rawLimit) || Number(rawLimit) < 1) {
        throw new HttpError(400, 'pagination_limit must be a positive integer');
      }
      limit = Math.min(Number(rawLimit), opts.maxPageSize);
    }
    const sortColumn = single(query, 'sort_column');
    if (sortColumn !== undefined && sortColumn !== 'start_at') {
      throw new HttpError(400, 'sort_column must be start_at');
    }
    const sortDirection = single(query, 'sort_direction') ?? 'asc';
    if (!SORT_DIRECTIONS.has(sortDirection)) {
      throw new HttpError(400, 'sort_direction must be one of asc, desc, asc nulls last, desc nulls last');
    }
    const desc = sortDirection.startsWith('desc');
    const after = parseIsoParam(query, 'after');
    const before = parseIsoParam(query, 'before');
    const rawCursor = single(query, 'pagination_cursor');
    const cursor = rawCursor === undefined ? undefined : decodeCursor(rawCursor);
    if (cursor === null) throw new HttpError(400, 'Invalid pagination_cursor');

    // Range [lo, hi) of the sorted list matching the filters: after ≤ start_at < before.
    const all = store.list();
    let lo = after === undefined ? 0 : store.startLowerBound(after);
    let hi = before === undefined ? all.length : store.startLowerBound(before);
    if (cursor) {
      if (desc) hi = Math.min(hi, store.lowerBound(cursor.startMs, cursor.id));
      else lo = Math.max(lo, store.upperBound(cursor.startMs, cursor.id));
    }
    const page: EventSkeleton[] = [];
    let hasMore = false;
    if (lo < hi) {
      if (desc) {
        const from = Math.max(lo, hi - limit);
        for (let i = hi - 1; i >= from; i--) page.push(all[i]);
        hasMore = from > lo;
      } else {
        const to = Math.min(hi, lo + limit);
        for (let i = lo; i < to; i++) page.push(all[i]);
        hasMore = to < hi;
      }
    }
    const body: { entries: LumaEventEntry[]; has_more: boolean; next_cursor?: string } = {
      entries: page.map((s) => store.entry(s)),
      has_more: hasMore,
    };
    if (hasMore) {
      const last = page[page.length - 1];
      body.next_cursor = encodeCursor(last.startMs, last.id);
    }
    return ok(body);
  }

  function getEventRoute(query: URLSearchParams): Reply {
    const id = single(query, 'api_id') ?? single(query, 'id') ?? single(query, 'event_api_id');
    if (id === undefined) throw new HttpError(400, 'api_id is required');
    const skel = store.skeleton(id);
    if (!skel) throw new HttpError(404, 'Event not found');
    const entry = store.entry(skel);
    const host = dir.hosts.find((h) => h.api_id === entry.event.user_api_id) ?? dir.self;
    return ok({
      event: entry.event,
      hosts: [{ api_id: host.api_id, name: host.name, email: host.email, avatar_url: host.avatar_url }],
    });
  }

  /** `POST /public/v1/event/create`: 400 `{ message }` names the first bad field. */
  function createEventRoute(body: string): Reply {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new HttpError(400, 'Request body must be valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new HttpError(400, 'Request body must be a JSON object');
    const req = parsed as Record<string, unknown>;
    if (typeof req.name !== 'string' || req.name.trim() === '') throw new HttpError(400, 'name is required');
    const startMs = isoInstant(req.start_at, 'start_at');
    if (startMs === undefined) throw new HttpError(400, 'start_at is required');
    if (typeof req.timezone !== 'string' || !isTimeZone(req.timezone)) throw new HttpError(400, 'timezone must be an IANA time zone, e.g. America/New_York');
    const endMs = isoInstant(req.end_at, 'end_at');
    const duration = req.duration_interval === undefined || req.duration_interval === null ? undefined : durationMinutes(req.duration_interval);
    if (endMs !== undefined && duration !== undefined) throw new HttpError(400, 'Give end_at or duration_interval, not both');
    if (endMs !== undefined && endMs <= startMs) throw new HttpError(400, 'end_at must be after start_at');
    const durationMin = duration ?? (endMs !== undefined ? Math.ceil((endMs - startMs) / 60_000) : 60);
    const optionalString = (name: string) => {
      const v = req[name];
      if (v === undefined || v === null) return null;
      if (typeof v !== 'string') throw new HttpError(400, `${name} must be a string`);
      return v;
    };
    const meetingUrl = optionalString('meeting_url');
    if (meetingUrl !== null && !/^https?:\/\/[^\s/]+/.test(meetingUrl)) throw new HttpError(400, 'meeting_url must be an http(s) URL');
    const visibility = req.visibility ?? 'public';
    if (visibility !== 'public' && visibility !== 'members-only' && visibility !== 'private') {
      throw new HttpError(400, 'visibility must be one of public, members-only, private');
    }
    let geo: LumaGeoAddress | null = null;
    if (req.geo_address_json !== undefined && req.geo_address_json !== null) {
      const g = req.geo_address_json as Record<string, unknown>;
      if (typeof g !== 'object' || Array.isArray(g) || !Object.values(g).every((v) => typeof v === 'string')) {
        throw new HttpError(400, 'geo_address_json must be an object of strings');
      }
      geo = { ...(g as Record<string, string>) } as unknown as LumaGeoAddress;
    }
    const id = store.create(
      {
        name: req.name,
        startMs,
        endMs: endMs ?? startMs + durationMin * 60_000,
        durationMin,
        timezone: req.timezone,
        description_md: optionalString('description_md'),
        meeting_url: meetingUrl,
        geo_address_json: geo,
        visibility,
      },
      (opts.now ?? Date.now)(),
    );
    sendEvent('event.created', id);
    return ok({ api_id: id });
  }

  const routes = new Map<string, (q: URLSearchParams, body: string) => Reply>([
    ['GET /public/v1/user/get-self', getSelf],
    ['GET /public/v1/calendar/list-events', listEvents],
    ['GET /public/v1/event/get', getEventRoute],
    ['POST /public/v1/event/create', (_q, body) => createEventRoute(body)],
    ...webhooks.routes(),
  ]);

  // ---- rate limiting -------------------------------------------------------------------

  /** True when the request is admitted; records it in the key's window. */
  function admit(key: string, now: number): boolean {
    const until = lockedUntil.get(key);
    if (until !== undefined) {
      if (now < until) return false;
      lockedUntil.delete(key);
    }
    let w = windows.get(key);
    if (!w) windows.set(key, (w = []));
    const cutoff = now - opts.rateLimit.windowMs;
    let drop = 0;
    while (drop < w.length && w[drop] <= cutoff) drop++;
    if (drop) w.splice(0, drop);
    if (w.length >= opts.rateLimit.limit) {
      lockedUntil.set(key, now + opts.rateLimit.lockoutMs);
      return false;
    }
    w.push(now);
    return true;
  }

  /** The key's rate-limit headers after `admit` decided (Luma sends them on authenticated answers). */
  function rateLimitHeaders(key: string, now: number, admitted: boolean): Record<string, string> {
    const w = windows.get(key) ?? [];
    const until = lockedUntil.get(key);
    const resetMs = !admitted && until !== undefined ? until : w.length > 0 ? w[0] + opts.rateLimit.windowMs : now + opts.rateLimit.windowMs;
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(opts.rateLimit.limit),
      'x-ratelimit-remaining': String(admitted ? Math.max(0, opts.rateLimit.limit - w.length) : 0),
      'x-ratelimit-reset': String(Math.ceil(resetMs / 1000)),
    };
    if (!admitted) headers['retry-after'] = String(Math.max(1, Math.ceil((resetMs - now) / 1000)));
    return headers;
  }

  // ---- request handling ----------------------------------------------------------------

  function redactedQuery(params: URLSearchParams, presentedKey: string | undefined): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    const redact = (v: string) => (apiKeys.has(v) || (presentedKey !== undefined && v === presentedKey) ? '[redacted]' : v);
    for (const name of new Set(params.keys())) {
      const values = params.getAll(name).map(redact);
      out[name] = values.length === 1 ? values[0] : values;
    }
    return out;
  }

  function decide(method: string, path: string, query: URLSearchParams, body: string, key: string | undefined, keyValid: boolean, now: number): Reply {
    const failStatus = simHost.takeFailure();
    if (failStatus !== null) return { status: failStatus, body: { message: `Simulated failure (HTTP ${failStatus})` } };
    const route = routes.get(`${method} ${path}`);
    if (!route) return { status: 404, body: { message: 'Not found' } };
    if (!keyValid || key === undefined) {
      return { status: 401, body: { message: 'Unauthorized: a valid x-luma-api-key header is required' } };
    }
    if (!admit(key, now)) {
      rateLimitedCount++;
      return { status: 429, body: { message: 'Too many requests. Please back off before retrying.' }, headers: rateLimitHeaders(key, now, false) };
    }
    const headers = rateLimitHeaders(key, now, true);
    try {
      return { ...route(query, body), headers };
    } catch (err) {
      if (err instanceof HttpError || err instanceof WebhookRouteError) return { status: err.status, body: { message: err.message }, headers };
      return { status: 500, body: { message: 'Internal server error' }, headers };
    }
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const now = clock();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => respond(req, res, size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8'), now));
    req.on('error', () => res.destroy());
  }

  function respond(req: http.IncomingMessage, res: http.ServerResponse, body: string | null, now: number): void {
    const method = (req.method ?? 'GET').toUpperCase();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://127.0.0.1');
    } catch {
      url = new URL('http://127.0.0.1/');
    }
    const header = req.headers['x-luma-api-key'];
    const key = typeof header === 'string' ? header : undefined;
    const keyValid = key !== undefined && apiKeys.has(key);
    if (keyValid) {
      let ts = keyTimestamps.get(key);
      if (!ts) keyTimestamps.set(key, (ts = []));
      ts.push(now);
    }

    const reply =
      body === null ? { status: 413, body: { message: 'Request body too large' } } : decide(method, url.pathname, url.searchParams, body, key, keyValid, now);

    log.push({ at: now, method, path: url.pathname, query: redactedQuery(url.searchParams, key), status: reply.status });
    byStatus[reply.status] = (byStatus[reply.status] ?? 0) + 1;

    const send = () => sendJson(res, reply.status, reply.body, reply.headers);
    simHost.respondAfter(send);
  }

  // ---- injection helpers ----------------------------------------------------------------

  function resolveTargets(countOrIds: number | readonly string[], op: string): string[] {
    const rng = Rng.from(seedK, 'mutation', mutationCounter++, op);
    if (typeof countOrIds === 'number') {
      if (!Number.isInteger(countOrIds) || countOrIds < 0) throw new Error(`${op}: count must be a non-negative integer`);
      return rng.sample(store.list(), countOrIds).map((s) => s.id);
    }
    const ids = [...new Set(countOrIds)];
    const unknown = ids.filter((id) => !store.has(id));
    if (unknown.length) throw new Error(`${op}: unknown or deleted event id(s): ${unknown.slice(0, 5).join(', ')}`);
    return ids;
  }

  const sim: LumaSimulator = {
    start: (port = 0) => simHost.start(port),
    stop: () => {
      // Deliveries under way end as errors ("aborted") rather than outlive the simulator.
      webhooks.abortAll();
      return simHost.stop();
    },
    get url() {
      return simHost.url;
    },
    options: opts,
    calendar: dir.calendar,
    user: dir.self,

    editEvents(countOrIds) {
      const ids = resolveTargets(countOrIds, 'editEvents');
      store.edit(ids);
      for (const id of ids) sendEvent('event.updated', id);
      return ids;
    },
    deleteEvents(countOrIds) {
      const ids = resolveTargets(countOrIds, 'deleteEvents');
      // A deleted event is a canceled one: the delivery carries it as it last was.
      const last = webhooks.listening('event.canceled') ? ids.map((id) => webhookEventData(store.entry(store.skeleton(id)!))) : [];
      store.delete(ids);
      for (const data of last) webhooks.send('event.canceled', data);
      return ids;
    },
    addEvents(n) {
      if (!Number.isInteger(n) || n < 0) throw new Error('addEvents: n must be a non-negative integer');
      mutationCounter++;
      const ids = store.add(n);
      for (const id of ids) sendEvent('event.created', id);
      return ids;
    },
    corruptEvent(id, fields) {
      if (!store.has(id)) throw new Error(`corruptEvent: no live event ${id}`);
      store.corrupt(id, fields);
    },
    resetRateLimits() {
      windows.clear();
      lockedUntil.clear();
    },
    setLatency: (ms) => simHost.setLatency(ms),
    failNext: (n, status = 503) => simHost.failNext(n, status),

    stats() {
      let max = 0;
      for (const ts of keyTimestamps.values()) {
        // The default clock is monotonic; a custom `now` might not be, so sort a copy.
        max = Math.max(
          max,
          maxInAnyWindow(
            [...ts].sort((a, b) => a - b),
            opts.rateLimit.windowMs,
          ),
        );
      }
      return {
        requests: log.length,
        byStatus: { ...byStatus },
        maxRequestsInAnyWindow: max,
        rateLimited: rateLimitedCount,
      };
    },
    resetStats() {
      log = [];
      byStatus = {};
      rateLimitedCount = 0;
      keyTimestamps.clear();
    },
    requestLog() {
      return log.map((e) => ({ ...e, query: structuredClone(e.query) }));
    },
    events() {
      return store.list().map((s) => store.entry(s));
    },
    eventIds() {
      return store.list().map((s) => s.id);
    },
    getEvent(id) {
      const skel = store.skeleton(id);
      return skel ? store.entry(skel) : undefined;
    },
    webhooks: () => webhooks.webhooks(),
    webhookDeliveries: () => webhooks.deliveries(),
    flushWebhooks: () => webhooks.flush(),
    redeliver(deliveryId) {
      webhooks.redeliver(deliveryId);
    },
  };
  return sim;
}
