import {
  createLumaSimulator,
  decodeCursor,
  encodeCursor,
  isoDuration,
  LUMA_DEFAULT_API_KEY,
  type LumaEventEntry,
  type LumaSimulator,
  type LumaSimulatorOptions,
} from '../../sandbox/luma';

const KEY = LUMA_DEFAULT_API_KEY;
const LIST = '/public/v1/calendar/list-events';

interface ListBody {
  entries: LumaEventEntry[];
  has_more: boolean;
  next_cursor?: string;
}

const running: LumaSimulator[] = [];

async function startSim(options: LumaSimulatorOptions = {}): Promise<{ sim: LumaSimulator; base: string }> {
  const sim = createLumaSimulator(options);
  running.push(sim);
  const base = await sim.start();
  return { sim, base };
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

function get(base: string, path: string, key: string | null = KEY): Promise<Response> {
  const headers: Record<string, string> = {};
  if (key !== null) headers['x-luma-api-key'] = key;
  return fetch(base + path, { headers });
}

async function list(base: string, params: Record<string, string | number> = {}, key: string | null = KEY) {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await get(base, qs ? `${LIST}?${qs}` : LIST, key);
  return { res, body: (await res.json()) as ListBody };
}

/** Follows next_cursor until has_more is false; `between` runs after each page. */
async function pageAll(
  base: string,
  params: Record<string, string | number> = {},
  between?: (page: number, body: ListBody) => void,
): Promise<{ entries: LumaEventEntry[]; pages: number }> {
  const entries: LumaEventEntry[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const { res, body } = await list(base, cursor ? { ...params, pagination_cursor: cursor } : params);
    expect(res.status).toBe(200);
    pages++;
    entries.push(...body.entries);
    if (!body.has_more) {
      expect(body.next_cursor).toBeUndefined();
      return { entries, pages };
    }
    expect(typeof body.next_cursor).toBe('string');
    cursor = body.next_cursor;
    between?.(pages, body);
    if (pages > 10_000) throw new Error('pagination does not terminate');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe('Luma simulator: data and determinism', () => {
  it('serves byte-identical pages for the same seed and different data for another seed', async () => {
    const a = await startSim({ seed: 42, eventCount: 500 });
    const b = await startSim({ seed: 42, eventCount: 500 });
    const c = await startSim({ seed: 43, eventCount: 500 });

    const pa1 = await (await get(a.base, `${LIST}?pagination_limit=20`)).text();
    const pb1 = await (await get(b.base, `${LIST}?pagination_limit=20`)).text();
    const pc1 = await (await get(c.base, `${LIST}?pagination_limit=20`)).text();
    expect(pa1).toBe(pb1);
    expect(pa1).not.toBe(pc1);

    const cursor = (JSON.parse(pa1) as ListBody).next_cursor!;
    const pa2 = await (await get(a.base, `${LIST}?pagination_limit=20&pagination_cursor=${cursor}`)).text();
    const pb2 = await (await get(b.base, `${LIST}?pagination_limit=20&pagination_cursor=${cursor}`)).text();
    expect(pa2).toBe(pb2);

    expect(JSON.stringify(a.sim.events())).toBe(JSON.stringify(b.sim.events()));
    expect(await (await get(a.base, '/public/v1/user/get-self')).text()).toBe(await (await get(b.base, '/public/v1/user/get-self')).text());

    // Same operations in the same order give the same results.
    expect(a.sim.editEvents(7)).toEqual(b.sim.editEvents(7));
    expect(a.sim.deleteEvents(9)).toEqual(b.sim.deleteEvents(9));
    expect(a.sim.addEvents(4)).toEqual(b.sim.addEvents(4));
    expect(JSON.stringify(a.sim.events())).toBe(JSON.stringify(b.sim.events()));
  });

  it('generates realistic, well-formed legacy entries', async () => {
    const { sim } = await startSim({ seed: 5, eventCount: 2_000 });
    const entries = sim.events();
    expect(entries).toHaveLength(2_000);
    const ids = new Set<string>();
    let online = 0;
    let offline = 0;
    const visibilities = new Set<string>();
    const tagCounts = new Set<number>();
    // Plain checks collected into one list: 2,000 × 30 `expect` calls would dominate the runtime.
    const problems: string[] = [];
    const check = (cond: boolean, what: string, e: LumaEventEntry) => {
      if (!cond && problems.length < 20) problems.push(`${e.api_id}: ${what}`);
    };
    for (const e of entries) {
      const ev = e.event;
      check(/^evt-[A-Za-z0-9]{14}$/.test(e.api_id), 'api_id format', e);
      check(ev.api_id === e.api_id, 'event.api_id', e);
      ids.add(e.api_id);
      check(ev.calendar_api_id === sim.calendar.api_id, 'calendar_api_id', e);
      check(/^usr-[A-Za-z0-9]{14}$/.test(ev.user_api_id), 'user_api_id', e);
      check(ev.name.length > 3, 'name', e);
      check(ev.description_md.length > 20 && ev.description.length > 20, 'description', e);
      const start = Date.parse(ev.start_at);
      const end = Date.parse(ev.end_at);
      check(new Date(start).toISOString() === ev.start_at, 'start_at ISO', e);
      check(end > start, 'end after start', e);
      check(isoDuration((end - start) / 60_000) === ev.duration_interval, 'duration_interval', e);
      check(Date.parse(ev.created_at) < start, 'created before start', e);
      let tzOk = true;
      try {
        new Intl.DateTimeFormat('en', { timeZone: ev.timezone });
      } catch {
        tzOk = false;
      }
      check(tzOk, `timezone ${ev.timezone}`, e);
      check(['public', 'members-only', 'private'].includes(ev.visibility), 'visibility', e);
      visibilities.add(ev.visibility);
      if (ev.geo_address_json) {
        offline++;
        check(ev.geo_address_json.city.length > 0, 'geo city', e);
        check(ev.geo_address_json.full_address.includes(ev.geo_address_json.address), 'geo full_address', e);
        check(Number.isFinite(Number(ev.geo_latitude)) && Number.isFinite(Number(ev.geo_longitude)), 'geo coordinates', e);
      } else {
        check(ev.geo_latitude === null && ev.geo_longitude === null, 'no coordinates without address', e);
      }
      if (ev.meeting_url) {
        online++;
        check(ev.meeting_url.startsWith('https://'), 'meeting_url', e);
      }
      if (ev.zoom_meeting_url) check(ev.zoom_meeting_url === ev.meeting_url, 'zoom_meeting_url', e);
      check(/^https:\/\/lu\.ma\/[a-z0-9]+$/.test(ev.url), 'url', e);
      check(e.tags.length <= 3, 'tag count', e);
      tagCounts.add(e.tags.length);
      for (const t of e.tags) check(/^tag-[A-Za-z0-9]{14}$/.test(t.api_id), 'tag id', e);
    }
    expect(problems).toEqual([]);
    expect(ids.size).toBe(2_000);
    expect(online).toBeGreaterThan(200);
    expect(offline).toBeGreaterThan(200);
    expect(visibilities.size).toBe(3);
    expect([...tagCounts].sort()).toEqual([0, 1, 2, 3]);
    const starts = entries.map((e) => Date.parse(e.event.start_at));
    expect(Math.max(...starts) - Math.min(...starts)).toBeGreaterThan(365 * 86_400_000);
  });

  it('answers get-self with the legacy { user } shape', async () => {
    const { base, sim } = await startSim({ seed: 3, calendar: { name: 'Test Cal' } });
    const res = await get(base, '/public/v1/user/get-self');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await res.json()) as { user: Record<string, unknown> };
    expect(Object.keys(body)).toEqual(['user']);
    expect(Object.keys(body.user).sort()).toEqual(['api_id', 'avatar_url', 'email', 'first_name', 'last_name', 'name']);
    expect(body.user.api_id).toMatch(/^usr-/);
    expect(body.user).toEqual({ ...sim.user });
    expect(sim.calendar.name).toBe('Test Cal');
  });

  it('serves event/get and 404s deleted events', async () => {
    const { base, sim } = await startSim({ seed: 8, eventCount: 50 });
    const [id] = sim.eventIds();
    const res = await get(base, `/public/v1/event/get?api_id=${id}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { event: { api_id: string }; hosts: unknown[] };
    expect(body.event).toEqual(sim.getEvent(id)!.event);
    expect(body.hosts).toHaveLength(1);
    sim.deleteEvents([id]);
    const gone = await get(base, `/public/v1/event/get?api_id=${id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toEqual({ message: expect.any(String) });
  });
});

describe('Luma simulator: pagination', () => {
  it('pages through 1,234 events exactly once each in start_at order', async () => {
    const { base, sim } = await startSim({ seed: 11, eventCount: 1_234 });
    const { entries, pages } = await pageAll(base, { pagination_limit: 100 });
    expect(pages).toBe(13);
    const ids = entries.map((e) => e.api_id);
    expect(new Set(ids).size).toBe(1_234);
    expect(ids).toEqual(sim.eventIds());
    for (let i = 1; i < entries.length; i++) {
      expect(entries[i].event.start_at >= entries[i - 1].event.start_at).toBe(true);
    }
    expect(JSON.stringify(entries)).toBe(JSON.stringify(sim.events()));
  });

  it('uses the default page size and supports descending order', async () => {
    const { base, sim } = await startSim({ seed: 12, eventCount: 321 });
    const first = await list(base);
    expect(first.body.entries).toHaveLength(50);
    const { entries, pages } = await pageAll(base, { sort_column: 'start_at', sort_direction: 'desc nulls last' });
    expect(pages).toBe(7);
    expect(entries.map((e) => e.api_id)).toEqual([...sim.eventIds()].reverse());
  });

  it('filters on start_at with after (inclusive) and before (exclusive)', async () => {
    const { base, sim } = await startSim({ seed: 13, eventCount: 800 });
    const all = sim.events();
    const after = all[200].event.start_at;
    const before = all[600].event.start_at;
    const { entries } = await pageAll(base, { after, before, pagination_limit: 37 });
    const expected = all.filter((e) => e.event.start_at >= after && e.event.start_at < before).map((e) => e.api_id);
    expect(entries.map((e) => e.api_id)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(300);
  });

  it('clamps pagination_limit to maxPageSize', async () => {
    const { base } = await startSim({ seed: 14, eventCount: 300 });
    const big = await list(base, { pagination_limit: 1_000 });
    expect(big.res.status).toBe(200);
    expect(big.body.entries).toHaveLength(100);
    expect(big.body.has_more).toBe(true);

    const small = await startSim({ seed: 14, eventCount: 300, maxPageSize: 20, defaultPageSize: 10 });
    expect((await list(small.base, { pagination_limit: 50 })).body.entries).toHaveLength(20);
    expect((await list(small.base)).body.entries).toHaveLength(10);
  });

  it('rejects invalid cursors and parameters with 400 { message }', async () => {
    const { base } = await startSim({ seed: 15, eventCount: 10 });
    const bad: Array<Record<string, string | number>> = [
      { pagination_cursor: 'not-a-cursor' },
      { pagination_cursor: Buffer.from('v1:abc:evt-x').toString('base64url') },
      { pagination_limit: 'ten' },
      { pagination_limit: 0 },
      { sort_column: 'name' },
      { sort_direction: 'sideways' },
      { after: 'yesterday' },
    ];
    for (const params of bad) {
      const { res, body } = await list(base, params);
      expect(res.status).toBe(400);
      expect(body).toEqual({ message: expect.any(String) });
    }
    expect(decodeCursor(encodeCursor(1_700_000_000_000, 'evt-abc'))).toEqual({ startMs: 1_700_000_000_000, id: 'evt-abc' });
  });

  it('returns an empty last page without next_cursor', async () => {
    const { base } = await startSim({ seed: 16, eventCount: 0 });
    const { res, body } = await list(base);
    expect(res.status).toBe(200);
    expect(body).toEqual({ entries: [], has_more: false });
  });

  it('skips nothing and repeats nothing when events are deleted between pages', async () => {
    const { base, sim } = await startSim({ seed: 17, eventCount: 1_000 });
    const original = sim.eventIds();
    const deletedUnseen = new Set<string>();
    const { entries } = await pageAll(base, { pagination_limit: 50 }, (page, body) => {
      if (page > 6) return;
      const seen = body.entries.map((e) => e.api_id);
      const lastSeen = seen[seen.length - 1];
      const pos = original.indexOf(lastSeen);
      // Delete the cursor's own entry, a few already-seen ones and a few not yet seen ones
      // (including the one right after the cursor).
      const unseen = [original[pos + 1], original[pos + 2], original[pos + 75]].filter((id): id is string => id !== undefined && sim.eventIds().includes(id));
      unseen.forEach((id) => deletedUnseen.add(id));
      sim.deleteEvents([lastSeen, seen[0], seen[10], ...unseen]);
    });
    const ids = entries.map((e) => e.api_id);
    expect(new Set(ids).size).toBe(ids.length);
    const expected = original.filter((id) => !deletedUnseen.has(id));
    expect(ids).toEqual(expected);
  });

  it('skips nothing and repeats nothing in descending order either', async () => {
    const { base, sim } = await startSim({ seed: 19, eventCount: 500 });
    const original = [...sim.eventIds()].reverse();
    const deletedUnseen = new Set<string>();
    const { entries } = await pageAll(base, { pagination_limit: 40, sort_direction: 'desc' }, (page, body) => {
      const last = body.entries[body.entries.length - 1].api_id;
      const next = original[original.indexOf(last) + 1];
      const toDelete = [last];
      if (next !== undefined && page % 2 === 0) {
        toDelete.push(next);
        deletedUnseen.add(next);
      }
      sim.deleteEvents(toDelete);
    });
    const ids = entries.map((e) => e.api_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(original.filter((id) => !deletedUnseen.has(id)));
  });

  it('shows events added after the cursor and keeps going', async () => {
    const { base, sim } = await startSim({ seed: 18, eventCount: 400 });
    const before = new Set(sim.eventIds());
    let added: string[] = [];
    const { entries } = await pageAll(base, { pagination_limit: 100 }, (page) => {
      if (page === 1) added = sim.addEvents(25);
    });
    const ids = entries.map((e) => e.api_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of before) expect(ids).toContain(id);
    expect(added).toHaveLength(25);
    expect(new Set([...before, ...added]).size).toBe(425);
    expect(sim.eventIds()).toHaveLength(425);
  });
});

describe('Luma simulator: injection', () => {
  it('editEvents changes exactly the given events', async () => {
    const { base, sim } = await startSim({ seed: 21, eventCount: 600 });
    const before = new Map(sim.events().map((e) => [e.api_id, e]));
    const chosen = sim.eventIds().filter((_, i) => i % 97 === 3);
    expect(sim.editEvents(chosen)).toEqual(chosen);
    const picked = sim.editEvents(5);
    expect(picked).toHaveLength(5);
    const edited = new Set([...chosen, ...picked]);

    const { entries } = await pageAll(base, { pagination_limit: 100 });
    expect(entries).toHaveLength(600);
    for (const e of entries) {
      const old = before.get(e.api_id)!;
      if (edited.has(e.api_id)) {
        expect(e.event.name).not.toBe(old.event.name);
        expect(e.event.description).not.toBe(old.event.description);
        expect(e.event.start_at).toBe(old.event.start_at);
        expect(e.tags).toEqual(old.tags);
      } else {
        expect(e).toEqual(old);
      }
    }
    // Editing the same event again changes it again.
    const [again] = chosen;
    const v1 = sim.getEvent(again)!;
    sim.editEvents([again]);
    expect(sim.getEvent(again)!.event.name).not.toBe(v1.event.name);
    expect(() => sim.editEvents(['evt-doesnotexist00'])).toThrow(/unknown/);
  });

  it('deleteEvents and addEvents change the listing', async () => {
    const { base, sim } = await startSim({ seed: 22, eventCount: 300 });
    const deleted = sim.deleteEvents(40);
    expect(deleted).toHaveLength(40);
    const added = sim.addEvents(15);
    expect(added).toHaveLength(15);
    const { entries } = await pageAll(base, { pagination_limit: 100 });
    const ids = new Set(entries.map((e) => e.api_id));
    expect(ids.size).toBe(275);
    for (const id of deleted) expect(ids.has(id)).toBe(false);
    for (const id of added) expect(ids.has(id)).toBe(true);
    expect(() => sim.deleteEvents([deleted[0]])).toThrow(/unknown or deleted/);
  });

  it('failNext answers the next n requests with the given status', async () => {
    const { base, sim } = await startSim({ seed: 23, eventCount: 10 });
    sim.failNext(2, 503);
    for (let i = 0; i < 2; i++) {
      const res = await get(base, LIST);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ message: expect.any(String) });
    }
    expect((await get(base, LIST)).status).toBe(200);
    sim.failNext(1, 500);
    expect((await get(base, '/public/v1/user/get-self')).status).toBe(500);
    expect((await get(base, '/public/v1/user/get-self')).status).toBe(200);
    expect(sim.stats().byStatus).toEqual({ 200: 2, 500: 1, 503: 2 });
  });

  it('setLatency delays responses', async () => {
    const { base, sim } = await startSim({ seed: 24, eventCount: 10 });
    sim.setLatency(150);
    const t0 = Date.now();
    expect((await get(base, LIST)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    sim.setLatency(0);
  });
});

describe('Luma simulator: auth and errors', () => {
  it('401s without or with a wrong key and never echoes or logs a key', async () => {
    const secret = 'super-secret-luma-key-123';
    const { base, sim } = await startSim({ seed: 31, eventCount: 10, apiKeys: [secret] });
    const wrong = 'wrong-key-456';
    for (const key of [null, wrong, '']) {
      const res = await get(base, LIST, key);
      expect(res.status).toBe(401);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ message: expect.any(String) });
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(secret);
    }
    const okRes = await get(base, `${LIST}?api_key=${secret}`, secret);
    expect(okRes.status).toBe(200);
    expect(await okRes.text()).not.toContain(secret);
    // A key carried in the query string by mistake is redacted from the log too.
    const log = sim.requestLog();
    expect(log.map((l) => l.status)).toEqual([401, 401, 401, 200]);
    const dump = JSON.stringify(log);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(wrong);
    expect(log[3]).toMatchObject({ method: 'GET', path: LIST, query: { api_key: '[redacted]' } });
    expect(typeof log[0].at).toBe('number');
  });

  it('404s unknown paths with JSON', async () => {
    const { base } = await startSim({ seed: 32, eventCount: 1 });
    for (const key of [KEY, null]) {
      const res = await get(base, '/public/v1/nope', key);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ message: expect.any(String) });
    }
  });

  it('validates options', () => {
    expect(() => createLumaSimulator({ eventCount: -1 })).toThrow();
    expect(() => createLumaSimulator({ defaultPageSize: 200 })).toThrow();
    expect(() => createLumaSimulator({ bogus: 1 } as unknown as LumaSimulatorOptions)).toThrow();
    const sim = createLumaSimulator({ rateLimit: { limit: 10 } });
    expect(sim.options.rateLimit).toEqual({ limit: 10, windowMs: 60_000, lockoutMs: 60_000 });
    expect(sim.options.apiKeys).toEqual([KEY]);
    expect(sim.options.maxPageSize).toBe(100);
    expect(sim.options.defaultPageSize).toBe(50);
  });
});

describe('Luma simulator: rate limiting', () => {
  it('locks a key out after the limit and lets it back in after the lockout (real time)', async () => {
    const { base, sim } = await startSim({
      seed: 41,
      eventCount: 20,
      rateLimit: { limit: 5, windowMs: 500, lockoutMs: 800 },
    });
    for (let i = 0; i < 5; i++) expect((await get(base, LIST)).status).toBe(200);
    const sixth = await get(base, LIST);
    const t6 = Date.now(); // the lockout started before this moment
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('retry-after')).toBe('1'); // the 800 ms lockout, in whole seconds
    expect(await sixth.json()).toEqual({ message: expect.any(String) });

    await sleep(250);
    expect((await get(base, '/public/v1/user/get-self')).status).toBe(429);
    await sleep(100);
    expect((await get(base, LIST)).status).toBe(429);

    await sleep(Math.max(0, t6 + 850 - Date.now()));
    expect((await get(base, LIST)).status).toBe(200);

    const stats = sim.stats();
    expect(stats.rateLimited).toBe(3);
    expect(stats.byStatus).toEqual({ 200: 6, 429: 3 });
    expect(stats.requests).toBe(9);
    expect(stats.maxRequestsInAnyWindow).toBeGreaterThanOrEqual(6);
  });

  it('tells the key its limit, what remains and when, and how long a 429 lasts (X-RateLimit-*, Retry-After)', async () => {
    let now = 2_000_000_000;
    const { base } = await startSim({ seed: 43, eventCount: 5, rateLimit: { limit: 2, windowMs: 60_000, lockoutMs: 60_000 }, now: () => now });
    const first = await get(base, LIST);
    expect(first.status).toBe(200);
    expect([first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining')]).toEqual(['2', '1']);
    // The window frees the first slot a minute after it was taken.
    expect(first.headers.get('x-ratelimit-reset')).toBe(String((2_000_000_000 + 60_000) / 1000));
    expect(first.headers.get('retry-after')).toBeNull();
    now += 1_000;
    expect((await get(base, LIST)).headers.get('x-ratelimit-remaining')).toBe('0');
    now += 1_000;
    const refused = await get(base, LIST);
    expect(refused.status).toBe(429);
    // Locked for the lockout from now: Retry-After in seconds, the reset at the block's end.
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(String((2_000_002_000 + 60_000) / 1000));
    now += 20_000;
    expect((await get(base, LIST)).headers.get('retry-after')).toBe('40');
    // Not for a request without a valid key.
    expect((await get(base, LIST, 'nope')).headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('uses a sliding window per key, counted across endpoints (manual clock)', async () => {
    let now = 1_000_000;
    const { base, sim } = await startSim({
      seed: 42,
      eventCount: 5,
      apiKeys: ['key-a', 'key-b'],
      rateLimit: { limit: 3, windowMs: 1_000, lockoutMs: 2_000 },
      now: () => now,
    });
    const at = async (t: number, key = 'key-a', path = LIST) => {
      now = 1_000_000 + t;
      return (await get(base, path, key)).status;
    };
    expect(await at(0)).toBe(200);
    expect(await at(600, 'key-a', '/public/v1/user/get-self')).toBe(200);
    expect(await at(700)).toBe(200);
    expect(await at(800, 'key-b')).toBe(200); // other key unaffected
    expect(await at(1_001)).toBe(200); // request at t=0 slid out of the window
    expect(await at(1_002)).toBe(429); // 600, 700, 1001 in window → locked until 3002
    expect(await at(1_003, 'key-b')).toBe(200);
    expect(await at(3_001)).toBe(429);
    expect(await at(3_002)).toBe(200);
    expect(sim.stats().maxRequestsInAnyWindow).toBe(4); // 600, 700, 1001, 1002 for key-a
    expect(sim.stats().rateLimited).toBe(2);

    // resetRateLimits clears windows and lockouts.
    expect(await at(3_003)).toBe(200);
    expect(await at(3_004)).toBe(200);
    expect(await at(3_005)).toBe(429);
    sim.resetRateLimits();
    expect(await at(3_006)).toBe(200);

    // Invalid keys never count.
    sim.resetStats();
    for (let i = 0; i < 5; i++) expect(await at(3_100 + i, 'nope')).toBe(401);
    expect(sim.stats()).toEqual({ requests: 5, byStatus: { 401: 5 }, maxRequestsInAnyWindow: 0, rateLimited: 0 });
  });
});

describe('Luma simulator: scale', () => {
  // How fast it serves them is the bench's business (a timing here fails on a busy machine).
  it('generates 100,000 events and pages, filters and edits them', async () => {
    const { base, sim } = await startSim({ seed: 51, eventCount: 100_000 });
    const first = await list(base, { pagination_limit: 100 });
    expect(first.body.entries).toHaveLength(100);
    const second = await list(base, { pagination_limit: 100, pagination_cursor: first.body.next_cursor! });
    expect(second.body.entries).toHaveLength(100);
    const late = await list(base, { pagination_limit: 100, after: '2025-12-01T00:00:00Z' });
    expect(late.body.entries.length).toBeGreaterThan(0);
    sim.deleteEvents(500);
    sim.editEvents(500);
    sim.addEvents(500);
    const third = await list(base, { pagination_limit: 100, pagination_cursor: second.body.next_cursor! });
    expect(third.body.entries).toHaveLength(100);
    expect(sim.eventIds()).toHaveLength(100_000);
  });
});

describe('Luma simulator: creating an event (POST /public/v1/event/create)', () => {
  const create = (base: string, body: unknown, key: string | null = KEY) =>
    fetch(`${base}/public/v1/event/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-luma-api-key': key } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  test('answers { api_id }; the event is listed (no tags) and served by event/get as it was created', async () => {
    const { sim, base } = await startSim({ eventCount: 20 });
    const res = await create(base, {
      name: 'Launch',
      start_at: '2027-01-10T18:00:00+01:00',
      timezone: 'Europe/Berlin',
      duration_interval: 'PT1H30M',
      description_md: '**Hi**',
      meeting_url: 'https://us02web.zoom.us/j/123',
      visibility: 'private',
    });
    expect(res.status).toBe(200);
    const { api_id } = (await res.json()) as { api_id: string };
    expect(api_id).toMatch(/^evt-/);
    const { entries } = await pageAll(base);
    const entry = entries.find((e) => e.api_id === api_id)!;
    expect(entry.tags).toEqual([]);
    expect(entry.event).toMatchObject({
      name: 'Launch',
      start_at: '2027-01-10T17:00:00.000Z',
      end_at: '2027-01-10T18:30:00.000Z',
      duration_interval: 'PT1H30M',
      timezone: 'Europe/Berlin',
      description: 'Hi',
      description_md: '**Hi**',
      zoom_meeting_url: 'https://us02web.zoom.us/j/123',
      visibility: 'private',
      calendar_api_id: sim.calendar.api_id,
      user_api_id: sim.user.api_id,
    });
    expect(entries).toHaveLength(21);
    const got = (await (await get(base, `/public/v1/event/get?api_id=${api_id}`)).json()) as { event: unknown };
    expect(got.event).toEqual(entry.event);
  });

  test('refuses bad fields with 400 { message } and creates nothing; needs the key', async () => {
    const { sim, base } = await startSim({ eventCount: 5 });
    const ok = { name: 'x', start_at: '2027-01-10T18:00:00Z', timezone: 'UTC' };
    const cases: Array<[unknown, RegExp]> = [
      ['{nope', /JSON/],
      [{ ...ok, name: '' }, /name/],
      [{ ...ok, start_at: '10 January' }, /start_at/],
      [{ ...ok, timezone: 'Mars/Base' }, /timezone/],
      [{ ...ok, end_at: '2027-01-10T17:00:00Z' }, /end_at must be after/],
      [{ ...ok, end_at: '2027-01-10T19:00:00Z', duration_interval: 'PT1H' }, /not both/],
      [{ ...ok, duration_interval: 'PT0M' }, /duration_interval/],
      [{ ...ok, visibility: 'secret' }, /visibility/],
      [{ ...ok, meeting_url: 'zoom' }, /meeting_url/],
    ];
    for (const [body, message] of cases) {
      const res = await create(base, body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(message);
    }
    expect((await create(base, ok, null)).status).toBe(401);
    expect(sim.eventIds()).toHaveLength(5);
    expect((await create(base, ok)).status).toBe(200);
    expect(sim.eventIds()).toHaveLength(6);
  });
});
