import { randomUUID } from 'node:crypto';
import { sealedAt } from '../auth/credential-cipher';
import { recordFilters } from '../tests/support/command-filters';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../tests/support/weft-stack';
import type { Figure } from './figure';
import { percentile, round1 } from './timing';

/** Requests timed per page, one after the other (an operator clicking). */
const SAMPLES = 20;
/** Pages followed from the first for the deep page figure (fewer when there are not that many). */
const DEEP_PAGES = 100;
const PAGE_SIZE = 50;

/**
 * The console's pages at `connections` connections (`npm run bench -- console [connections]`):
 * a second integration holds them, each tagged `team=t<i % 100>`, written through the stores
 * (no schedules, no runs); two live Luma connections have synced. Each page's latency and
 * database commands per request, the connections list also 100 pages deep (by its cursor).
 */
export async function consolePageFigures(connections: number): Promise<Figure[]> {
  const stack = await startWeftStack({ monitorCommands: true, apiRateLimit: { limit: 10_000_000, windowMs: 60_000 } });
  try {
    await createLumaIntegration(stack);
    for (const id of ['live-a', 'live-b']) {
      const made = await stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      });
      if (made.status !== 201) throw new Error(`POST /connections: ${made.status} ${JSON.stringify(made.body)}`);
      await stack.waitForSync(id, 'list-events', { providerConfigKey: 'luma' });
    }
    const started = Date.now();
    await addTaggedConnections(stack, 'luma-many', connections);
    const seedS = round1((Date.now() - started) / 1000);
    const cookie = await signIn(stack);
    const get = async (path: string) => {
      const res = await fetch(`${stack.apiUrl}${path}`, { headers: { cookie }, redirect: 'manual' });
      const text = await res.text();
      return { status: res.status, text };
    };
    // The cursor 100 pages in, followed as an operator would.
    const deepPages = Math.max(1, Math.min(DEEP_PAGES, Math.floor(connections / PAGE_SIZE) - 1));
    let deep = '/console/connections';
    for (let i = 0; i < deepPages; i++) {
      const next = /href="(\/console\/connections\?cursor=[^"]+)" rel="next"/.exec((await get(deep)).text)?.[1];
      if (!next) throw new Error(`no next page after ${i} pages`);
      deep = next.replace(/&amp;/g, '&');
    }
    const pages: Record<string, string> = {
      integrations: '/console/integrations',
      integration_24h: '/console/integrations/luma-many',
      connections_first_page: '/console/connections',
      [`connections_page_${deepPages + 1}`]: deep,
      connections_search_by_id: `/console/connections?search=many-${connections - 7}`,
      connections_by_tag: '/console/connections?tag=team%3Dt7',
      connections_by_integration_and_tag: '/console/connections?integration=luma-many&tag=team%3Dt7',
      connection: '/console/connections/luma/live-a',
      records: '/console/connections/luma/live-a/records?model=CalendarEvent',
      request_log: '/console/logs',
      webhook_events: '/console/webhooks',
    };
    const figures: Record<string, unknown> = {};
    for (const [name, path] of Object.entries(pages)) figures[name] = await measure(stack, get, path);
    return [{ figure: 'console_pages', connections: connections + 2, seed_s: seedS, samples_per_page: SAMPLES, pages: figures }];
  } finally {
    await stack.shutdown();
  }
}

async function measure(stack: WeftStack, get: (path: string) => Promise<{ status: number; text: string }>, path: string) {
  const first = await get(path);
  if (first.status !== 200) throw new Error(`GET ${path}: ${first.status} ${first.text.slice(0, 300)}`);
  const ms: number[] = [];
  const db = recordFilters(stack.core.mongo);
  try {
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      await get(path);
      ms.push(performance.now() - t);
    }
  } finally {
    db.stop();
  }
  return { p50_ms: round1(percentile(ms, 50)), p99_ms: round1(percentile(ms, 99)), db_commands_per_request: round1(db.commands.length / SAMPLES) };
}

/** The console's sign-in as a browser does it: the form (its token and cookie), then the key. */
async function signIn(stack: WeftStack): Promise<string> {
  const form = await fetch(`${stack.apiUrl}/console/sign-in`);
  const formCookie = (form.headers.get('set-cookie') ?? '').split(';')[0];
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const res = await fetch(`${stack.apiUrl}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: formCookie },
    body: new URLSearchParams({ _csrf: token, method: 'key', secret_key: stack.keys.dev }).toString(),
  });
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .find((c) => c.startsWith('weft_console='));
  if (res.status !== 303 || !session) throw new Error(`console sign-in: ${res.status}`);
  return session;
}

/** `count` connections of a second Luma integration, tagged, through the stores (16 at a time). */
async function addTaggedConnections(stack: WeftStack, integration: string, count: number): Promise<void> {
  const created = await stack.api('POST', '/integrations', {
    body: { unique_key: integration, provider: 'luma', provider_overrides: { base_url: stack.luma.url } },
  });
  if (created.status !== 201) throw new Error(`POST /integrations: ${created.status} ${JSON.stringify(created.body)}`);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        const i = next++;
        const _id = randomUUID();
        await stack.core.stores.connections.create({
          _id,
          environment: 'dev',
          provider_config_key: integration,
          provider: 'luma',
          connection_id: `many-${i}`,
          auth_mode: 'API_KEY',
          credentials_encrypted: stack.core.cipher.seal({ type: 'API_KEY', apiKey: `key-${i}` }, sealedAt.connectionCredentials({ _id, environment: 'dev' })),
          connection_config: {},
          metadata: {},
          tags: { team: `t${i % 100}` },
        });
      }
    }),
  );
}
