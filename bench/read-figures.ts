import os from 'node:os';
import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import type { ConnectionDoc } from '../store/connections';
import type { WeftStack } from '../tests/support/weft-stack';
import { databaseCpuClock } from './database-cpu';
import { seedOtherConnections } from './other-connections';
import { now, percentile, round1, round3, sampleConcurrent, sampleSequential } from './timing';
import type { Figure } from './figure';

/**
 * The sizes: 10,000 other connections with a few records each. Another shape (e.g.
 * 1,000 connections of 200 records: ten times a 20,000-file drive's records, seeded in
 * minutes) through WEFT_BENCH_OTHER_CONNECTIONS and WEFT_BENCH_OTHER_RECORDS_EACH.
 */
const OTHER_CONNECTIONS = Number(process.env.WEFT_BENCH_OTHER_CONNECTIONS ?? 10_000);
const OTHER_RECORDS_EACH = Number(process.env.WEFT_BENCH_OTHER_RECORDS_EACH ?? 3);
const MODEL = 'File';

/**
 * Repetitions and time budgets. Where a read costs seconds (a store that scans), the budget
 * ends a figure early; each figure says how many requests it is made of.
 */
const PAGE_C1 = { max: 200, min: 3, budgetMs: 60_000 };
/** The same walk before the other connections are seeded: the reference of "cost follows the work, not the data". */
const PAGE_ALONE = { max: 150, min: 3, budgetMs: 30_000 };
const PAGE_C8 = { concurrency: 8, durationMs: 20_000 };
const READ_ALL_BUDGET_MS = 180_000;
const BY_IDS = { max: 100, min: 3, budgetMs: 45_000, ids: 100 };
const CONNECTION_LOOKUP = { max: 300, min: 20, budgetMs: 30_000 };
/** Pages whose database commands are counted (after the timed figures: counting costs a little). */
const COMMANDS_PAGES = 20;

export interface SyncedDrive {
  stack: WeftStack;
  connectionId: string;
  providerConfigKey: string;
}

type Page = { records: Array<{ id: string }>; next_cursor: string | null };

class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly body: any,
  ) {
    super(`GET /records answered ${status} ${JSON.stringify(body)}`);
  }
}

/**
 * The read figures, on a drive a sync just wrote: `GET /records` pages by
 * cursor (one client, then eight), the whole drive read by cursor against the raw driver
 * reading the same documents, `GET /records?ids=` of 100 ids, and `GET /connections/:id`,
 * with 10,000 other connections and their records in the same database. Each figure is
 * emitted when measured; one that fails is emitted with its error and the others go on.
 */
export async function readFigures(drive: SyncedDrive, emit: (figure: Figure) => void): Promise<void> {
  const { stack, connectionId, providerConfigKey } = drive;
  const db = stack.core.stores.db;
  const like = (await db
    .collection<ConnectionDoc>('connections')
    .findOne({ connection_id: connectionId, provider_config_key: providerConfigKey })) as ConnectionDoc;
  const driveFilter = { connection: like._id, model: MODEL, variant: 'base' };
  const recordsHeaders = { 'connection-id': connectionId, 'provider-config-key': providerConfigKey };
  const getPage = async (query: Record<string, string | string[]>): Promise<Page> => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) for (const one of ([] as string[]).concat(v)) qs.append(k, one);
    const res = await stack.api('GET', `/records?${qs}`, { headers: recordsHeaders });
    if (res.status !== 200) throw new ApiRefusal(res.status, res.body);
    return res.body as Page;
  };
  const dbClock = databaseCpuClock(stack.env.MONGODB_URI);
  /** The database server's CPU over a measurement, in percent of one core (absent for an external server). */
  const withDatabaseCpu = async <T extends object>(run: () => Promise<T>): Promise<T & { database_cpu_percent?: number }> => {
    const c0 = dbClock?.() ?? 0;
    const t0 = now();
    const result = await run();
    return dbClock ? { ...result, database_cpu_percent: Math.round(((dbClock() - c0) / ((now() - t0) / 1000)) * 100) } : result;
  };
  const measure = async (figure: string, run: () => Promise<Figure>) => {
    try {
      emit({ ...(await run()), load_1m: load() });
    } catch (err) {
      emit({ figure, error: String(err), pass: false, load_1m: load() });
    }
  };
  /** Pages of 100, one client walking the cursor from the start (and around again at the end); CPU per page of both sides. */
  const walkPages = async (limits: { max: number; min: number; budgetMs: number }) => {
    let walk: string | null = null;
    const s = await withDatabaseCpu(() =>
      sampleSequential(async () => {
        const page = await getPage({ model: MODEL, limit: '100', ...(walk ? { cursor: walk } : {}) });
        if (page.records.length !== 100 && page.next_cursor !== null) throw new Error(`a page of ${page.records.length} records before the end`);
        walk = page.next_cursor;
      }, limits),
    );
    const perPage = (percent: number | undefined) => (percent === undefined ? undefined : round1((percent / 100) * (s.elapsedMs / s.ms.length)));
    return {
      requests: s.ms.length,
      p50_ms: percentile(s.ms, 50),
      p99_ms: percentile(s.ms, 99),
      node_cpu_percent: s.nodeCpuPercent,
      database_cpu_percent: s.database_cpu_percent,
      // CPU time per page: what the page costs, less swayed than wall time by other work on a shared machine.
      node_cpu_ms_per_page: perPage(s.nodeCpuPercent),
      database_cpu_ms_per_page: perPage(s.database_cpu_percent),
    };
  };

  // The drive alone in the database first (besides the integration's own documents).
  const alone = await walkPages(PAGE_ALONE).catch((err: unknown) => ({ error: String(err) }) as const);
  emit({
    figure: 'records_page_alone',
    limit: 100,
    concurrency: 1,
    records_in_db: await db.collection('records').estimatedDocumentCount(),
    ...alone,
    load_1m: load(),
  });

  const loadBefore = load();
  const others = await seedOtherConnections(stack, like, MODEL, OTHER_CONNECTIONS, OTHER_RECORDS_EACH);
  const connectionsInDb = await db.collection('connections').estimatedDocumentCount();

  // The raw driver: every document of the drive's scope, streamed.
  const ids: string[] = [];
  const tRaw = now();
  for await (const doc of db.collection('records').find(driveFilter)) ids.push(doc.id as string);
  const rawMs = now() - tRaw;
  emit({
    figure: 'read_setup',
    drive_records: ids.length,
    other_connections: OTHER_CONNECTIONS,
    other_records: others.records,
    seed_ms: Math.round(others.ms),
    records_in_db: await db.collection('records').estimatedDocumentCount(),
    connections_in_db: connectionsInDb,
    load_1m: loadBefore,
  });

  // The API: the same documents by cursor, 1,000 a page (within the budget).
  const pageStarts: string[] = [];
  await measure('records_read_all', async () => {
    let read = 0;
    let pages = 0;
    let cursor: string | null = null;
    const tApi = now();
    do {
      const page = await getPage({ model: MODEL, limit: '1000', ...(cursor ? { cursor } : {}) });
      read += page.records.length;
      pages += 1;
      cursor = page.next_cursor;
      if (cursor) pageStarts.push(cursor);
    } while (cursor && now() - tApi < READ_ALL_BUDGET_MS);
    const apiMeasuredMs = now() - tApi;
    const complete = cursor === null;
    if (complete && read !== ids.length) throw new Error(`the API read ${read} records, the driver ${ids.length}`);
    // Cut short: every page costs about the same, so the whole read is estimated linearly.
    const apiMs = complete ? apiMeasuredMs : (apiMeasuredMs * ids.length) / read;
    const ratio = rawMs / apiMs;
    return {
      figure: 'records_read_all',
      limit: 1000,
      records: ids.length,
      api_ms: Math.round(apiMs),
      ...(complete ? {} : { estimated: true, api_records_read: read, api_pages_read: pages, api_ms_measured: Math.round(apiMeasuredMs) }),
      raw_driver_ms: Math.round(rawMs),
      ratio_raw_to_api: round3(ratio),
      target: '>= 0.5',
      pass: ratio >= 0.5,
    };
  });

  // Pages of 100 again, with the other connections' records in the same collections.
  await measure('records_page', async () => {
    const c1 = await walkPages(PAGE_C1);
    const ratio = 'p50_ms' in alone ? round3(c1.p50_ms / alone.p50_ms) : undefined;
    const cpuRatio =
      'p50_ms' in alone && alone.database_cpu_ms_per_page && c1.database_cpu_ms_per_page
        ? round3((c1.database_cpu_ms_per_page + (c1.node_cpu_ms_per_page ?? 0)) / (alone.database_cpu_ms_per_page + (alone.node_cpu_ms_per_page ?? 0)))
        : undefined;
    return {
      figure: 'records_page',
      limit: 100,
      concurrency: 1,
      other_records: others.records,
      ...c1,
      target: 'p50 <= 15 ms',
      pass: c1.p50_ms <= 15,
      p50_ratio_to_alone: ratio,
      cpu_per_page_ratio_to_alone: cpuRatio,
      alone_target: 'within 20 %',
      alone_pass: ratio !== undefined && ratio <= 1.2,
    };
  });

  // Eight clients, each walking from a different place of the drive.
  await measure('records_page_throughput', async () => {
    const walks: Array<string | null> = Array.from({ length: PAGE_C8.concurrency }, (_, i) =>
      pageStarts.length ? pageStarts[Math.floor((i * pageStarts.length) / PAGE_C8.concurrency)] : null,
    );
    const c8 = await withDatabaseCpu(() =>
      sampleConcurrent(
        async (loop) => {
          const at = walks[loop];
          walks[loop] = (await getPage({ model: MODEL, limit: '100', ...(at ? { cursor: at } : {}) })).next_cursor;
        },
        PAGE_C8.concurrency,
        PAGE_C8.durationMs,
      ),
    );
    return {
      figure: 'records_page_throughput',
      limit: 100,
      concurrency: PAGE_C8.concurrency,
      requests: c8.ms.length,
      requests_per_s: round3(c8.requestsPerS),
      p50_ms: percentile(c8.ms, 50),
      p99_ms: percentile(c8.ms, 99),
      node_cpu_percent: c8.nodeCpuPercent,
      database_cpu_percent: c8.database_cpu_percent,
      target: '>= 300 requests/s',
      pass: c8.requestsPerS >= 300,
    };
  });

  // Random ids of the drive per request: 100, as the issue asks. The API's query parser
  // (qs) turns more than 20 repeated keys into an object, so it may refuse 100; then the
  // refusal is part of the figure and it is measured with the 20 the API takes.
  await measure('records_by_ids', async () => {
    const byIds = async (count: number) =>
      sampleSequential(async () => {
        const pick = [...new Set(Array.from({ length: count }, () => ids[Math.floor(Math.random() * ids.length)]))];
        const page = await getPage({ model: MODEL, limit: '1000', ids: pick });
        if (page.records.length !== pick.length) throw new Error(`GET /records?ids= of ${pick.length} ids answered ${page.records.length} records`);
      }, BY_IDS);
    try {
      const s = await byIds(BY_IDS.ids);
      return { figure: 'records_by_ids', ids: BY_IDS.ids, requests: s.ms.length, p50_ms: percentile(s.ms, 50), p99_ms: percentile(s.ms, 99) };
    } catch (err) {
      if (!(err instanceof ApiRefusal) || err.status !== 400) throw err;
      const s = await byIds(20);
      return {
        figure: 'records_by_ids',
        ids: 20,
        refused_with_100: `${err.status} ${err.body?.error?.code}`,
        requests: s.ms.length,
        p50_ms: percentile(s.ms, 50),
        p99_ms: percentile(s.ms, 99),
      };
    }
  });

  // A random one of the other connections each time, as an app fetching a token.
  await measure('connection_lookup', async () => {
    const lookups = await withDatabaseCpu(() =>
      sampleSequential(async () => {
        // (With no other connections seeded, the drive's own.)
        const pool = others.connectionIds.length ? others.connectionIds : [connectionId];
        const id = pool[Math.floor(Math.random() * pool.length)];
        const res = await stack.api('GET', `/connections/${encodeURIComponent(id)}?provider_config_key=${encodeURIComponent(providerConfigKey)}`);
        if (res.status !== 200 || res.body.connection_id !== id) throw new Error(`GET /connections/${id} failed: ${res.status} ${JSON.stringify(res.body)}`);
      }, CONNECTION_LOOKUP),
    );
    const p50 = percentile(lookups.ms, 50);
    return {
      figure: 'connection_lookup',
      connections: connectionsInDb,
      requests: lookups.ms.length,
      p50_ms: p50,
      p99_ms: percentile(lookups.ms, 99),
      node_cpu_percent: lookups.nodeCpuPercent,
      database_cpu_percent: lookups.database_cpu_percent,
      target: 'p50 <= 10 ms',
      pass: p50 <= 10,
    };
  });

  await measure('records_page_commands', () => pageCommands(stack, (cursor) => getPage({ model: MODEL, limit: '100', ...(cursor ? { cursor } : {}) })));
}

/**
 * What one page costs the database: the commands sent while pages are read one at a time,
 * per page, by command and collection (count and mean server round trip). Needs the stack's
 * client to monitor commands; background writes of a request (its log) fall in whichever
 * page's window they happen.
 */
async function pageCommands(stack: WeftStack, readPage: (cursor: string | null) => Promise<Page>): Promise<Figure> {
  const client = stack.core.mongo;
  const started = new Map<number, string>();
  const totals = new Map<string, { count: number; ms: number }>();
  // A getMore names its collection in `collection` (its own field holds the cursor id).
  const collectionOf = (e: CommandStartedEvent) => String((e.commandName === 'getMore' ? e.command.collection : e.command[e.commandName]) ?? '');
  const onStart = (e: CommandStartedEvent) => started.set(e.requestId, `${e.commandName} ${collectionOf(e)}`.trim());
  const onEnd = (e: CommandSucceededEvent | CommandFailedEvent) => {
    const key = started.get(e.requestId);
    if (!key) return;
    started.delete(e.requestId);
    const t = totals.get(key) ?? { count: 0, ms: 0 };
    t.count += 1;
    t.ms += e.duration;
    totals.set(key, t);
  };
  client.on('commandStarted', onStart);
  client.on('commandSucceeded', onEnd);
  client.on('commandFailed', onEnd);
  try {
    let cursor: string | null = null;
    for (let i = 0; i < COMMANDS_PAGES; i++) cursor = (await readPage(cursor)).next_cursor;
  } finally {
    client.off('commandStarted', onStart);
    client.off('commandSucceeded', onEnd);
    client.off('commandFailed', onEnd);
  }
  if (totals.size === 0) return { figure: 'records_page_commands', note: 'the client does not monitor commands' };
  const perPage = [...totals]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([command, t]) => ({ command, per_page: round1(t.count / COMMANDS_PAGES), mean_ms: round1(t.ms / t.count) }));
  return { figure: 'records_page_commands', pages: COMMANDS_PAGES, limit: 100, commands: perPage };
}

function load(): number {
  return Math.round(os.loadavg()[0] * 100) / 100;
}
