import { API_ROUTES } from '../../api/route-registry';
import { listRoutes } from '../../api/routing/route';
import type { FuzzFixture } from './fixture';

/**
 * The fuzz's targets: every route of the route registry (api/route-registry.ts), at each of
 * its mounts, plus two unknown paths. Each starts from a request that is valid or nearly so
 * against the fixture, which the fuzz breaks: the route's sample below, or, for a route
 * without one, its path with `fz` for each parameter and no query or body. The fuzz reports
 * how many requests each route received.
 */
export type Auth = 'secret-key' | 'session' | 'none';

export interface RouteSpec {
  /** `METHOD /template`, as reports and secret rules name it. */
  name: string;
  method: string;
  /** Express path template; `:name` and `*path` are filled from `params`. */
  template: string;
  params?: (f: FuzzFixture) => Record<string, string>;
  auth: Auth;
  body?: 'json' | 'form';
  query?: (f: FuzzFixture) => Record<string, string>;
  headers?: (f: FuzzFixture) => Record<string, string>;
  json?: (f: FuzzFixture, n: number) => unknown;
  form?: (f: FuzzFixture) => Record<string, string>;
  /** Answering it successfully never writes (so a batch of such answers must leave the database as it was). */
  readOnly: boolean;
}

/** A near-valid request for a registry route; `label` names one of several (`GET /v1/*path (sync)`). */
type Sample = Partial<Omit<RouteSpec, 'name' | 'method' | 'auth'>> & { label?: string; readOnly: boolean };

const lumaHeaders = (f: FuzzFixture) => ({ 'connection-id': f.ids.luma, 'provider-config-key': 'luma' });
const driveHeaders = (f: FuzzFixture) => ({ 'connection-id': f.ids.oneDrive, 'provider-config-key': 'one-drive' });

/** By the route's name at its own mount (`GET /connections/:connectionId`); an alias's mount takes the same sample. */
const SAMPLES: Record<string, Sample | Sample[]> = {
  'GET /health': { readOnly: true },
  'GET /ready': { readOnly: true },
  'GET /openapi.json': { readOnly: true },
  'GET /docs': { readOnly: true },
  'GET /docs/init.js': { readOnly: true },
  'GET /docs/:asset': { params: () => ({ asset: 'swagger-ui.css' }), readOnly: true },

  'GET /integrations': { readOnly: true },
  'POST /integrations': {
    json: (_f, n) => ({
      unique_key: `fz-int-${n}`,
      provider: 'luma',
      display_name: 'Fuzz',
      provider_overrides: { rate_limit: { requests: 10, window_ms: 1000 } },
    }),
    readOnly: false,
  },
  'GET /integrations/:key': { params: () => ({ key: 'luma' }), query: () => ({ 'include[]': 'credentials' }), readOnly: true },
  'GET /integrations/:key/status': { params: () => ({ key: 'luma' }), readOnly: true },
  'GET /providers': { query: () => ({ search: 'lu' }), readOnly: true },
  'GET /providers/:provider': { params: () => ({ provider: 'luma' }), readOnly: true },
  'GET /integrations/:key/webhook-deliveries': { params: () => ({ key: 'luma' }), query: () => ({ status: 'unmatched', limit: '5' }), readOnly: true },
  // Unsigned, so refused: nothing it answers writes.
  'POST /webhooks/providers/:environment/:integration': {
    params: () => ({ environment: 'dev', integration: 'luma' }),
    headers: () => ({ 'x-github-event': 'pull_request', 'x-github-delivery': 'fz' }),
    json: () => ({ action: 'opened', installation: { id: 1 } }),
    readOnly: true,
  },
  // No live webhook has this URL: refused, nothing written.
  'POST /webhooks/providers/:environment/:integration/:secret': {
    params: () => ({ environment: 'dev', integration: 'luma', secret: 'fz' }),
    json: () => ({ type: 'event.created', data: { id: 'evt-fz' } }),
    readOnly: true,
  },
  'PATCH /integrations/:key': { params: () => ({ key: 'luma' }), json: () => ({ display_name: 'Luma' }), readOnly: false },
  // luma has connections: refused with 400, so the integration survives the run.
  'DELETE /integrations/:key': { params: () => ({ key: 'luma' }), readOnly: false },

  'POST /connections': {
    // A key Luma refuses: the route runs to the provider check, and nothing is created.
    json: () => ({
      provider_config_key: 'luma',
      connection_id: 'fz-new',
      credentials: { type: 'API_KEY', apiKey: 'fz-refused-key' },
      metadata: { a: 1 },
      connection_config: { b: 'c' },
      tags: { t: 'v' },
    }),
    readOnly: false,
  },
  'GET /connections': [
    { query: () => ({ search: 'fz', limit: '10', page: '0' }), readOnly: true },
    // Nango's filters, as its SDK sends them: an `_id` range per tag or integration.
    {
      label: 'filtered',
      query: () => ({ 'tags[t]': 'v', endUserId: 'fz-user', endUserOrganizationId: 'fz-org', integrationId: 'luma,one-drive', limit: '5', page: '1' }),
      readOnly: true,
    },
  ],
  'GET /connections/:connectionId': {
    params: (f) => ({ connectionId: f.ids.luma }),
    query: () => ({ provider_config_key: 'luma' }),
    // Mints a GitHub installation token or refreshes an OAuth token when due: it may write.
    readOnly: false,
  },
  'DELETE /connections/:connectionId': {
    // A connection that does not exist: the seeded ones must survive the run.
    params: () => ({ connectionId: 'fz-missing' }),
    query: () => ({ provider_config_key: 'luma' }),
    readOnly: false,
  },
  'POST /connections/metadata': {
    json: (f) => ({ connection_id: f.ids.luma, provider_config_key: 'luma', metadata: { plan: 'fz' } }),
    readOnly: false,
  },
  'PATCH /connections/metadata': {
    json: (f) => ({ connection_id: [f.ids.luma], provider_config_key: 'luma', metadata: { plan: 'fz' } }),
    readOnly: false,
  },

  'POST /sync/trigger': {
    // A sync the integration does not have: a real trigger would start a run mid-fuzz.
    json: (f) => ({ provider_config_key: 'luma', connection_id: f.ids.luma, syncs: ['fz-no-such-sync'], opts: { reset: false } }),
    readOnly: false,
  },
  // A sync the integration does not have: nothing to change, as for the trigger.
  'POST /sync/start': { json: (f) => ({ provider_config_key: 'luma', connection_id: f.ids.luma, syncs: ['fz-no-such-sync'] }), readOnly: false },
  'POST /sync/pause': { json: (f) => ({ provider_config_key: 'luma', connection_id: f.ids.luma, syncs: ['fz-no-such-sync'] }), readOnly: false },
  'PUT /sync/update-connection-frequency': {
    // Under the 30 s minimum: refused before anything changes.
    json: (f) => ({ provider_config_key: 'luma', connection_id: f.ids.luma, sync_name: 'list-events', frequency: 'every 5s' }),
    readOnly: false,
  },
  'POST /sync/:name/variant/:variant': { ...baseVariant(), readOnly: false },
  'DELETE /sync/:name/variant/:variant': { ...baseVariant(), readOnly: false },
  'GET /sync/status': { query: (f) => ({ provider_config_key: 'luma', syncs: 'list-events', connection_id: f.ids.luma }), readOnly: true },

  'GET /records': { headers: lumaHeaders, query: () => ({ model: 'CalendarEvent', limit: '5' }), readOnly: true },
  'PATCH /records/prune': {
    // A cursor no record has: the decode refuses it, nothing is pruned.
    headers: lumaHeaders,
    json: () => ({ model: 'CalendarEvent', until_cursor: 'fz-cursor' }),
    readOnly: false,
  },

  'POST /action/trigger': { headers: driveHeaders, json: () => ({ action_name: 'list-drives', input: {} }), readOnly: false },
  'GET /action/:id': { params: () => ({ id: 'fz-no-such-run' }), readOnly: true },
  // MCP: a tools/call of a read action (list-drives runs an actionRun, which writes its request log only).
  'POST /mcp': [
    {
      label: 'initialize',
      headers: (f) => ({ ...driveHeaders(f), accept: 'application/json, text/event-stream' }),
      json: () => ({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fz', version: '1' } },
      }),
      readOnly: true,
    },
    {
      label: 'tools/call',
      headers: (f) => ({ ...driveHeaders(f), accept: 'application/json, text/event-stream' }),
      json: (_f, n) => ({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'list-drives', arguments: {} } }),
      readOnly: false,
    },
  ],
  'GET /mcp': { headers: lumaHeaders, readOnly: true },
  'DELETE /mcp': { headers: lumaHeaders, readOnly: true },

  'GET /v1/*path': [
    { label: 'action', params: () => ({ path: 'list-drives' }), headers: driveHeaders, readOnly: false },
    { label: 'sync', params: () => ({ path: 'luma/list-events' }), headers: lumaHeaders, query: () => ({ limit: '3' }), readOnly: true },
  ],
  'POST /v1/*path': [
    {
      // An action's own POST endpoint: its JSON body is the action's input, validated by the action's schema.
      label: 'luma create-event',
      params: () => ({ path: 'luma/create-event' }),
      headers: lumaHeaders,
      body: 'json',
      json: (_f, n) => ({
        name: `Fuzz event ${n}`,
        start_at: '2031-05-01T18:00:00Z',
        timezone: 'Europe/Berlin',
        duration_interval: 'PT2H',
        visibility: 'private',
        geo_address_json: { city: 'Berlin', country: 'DE' },
      }),
      readOnly: false,
    },
    {
      label: 'one-drive create-folder',
      params: () => ({ path: 'create-folder' }),
      headers: driveHeaders,
      body: 'json',
      json: (f, n) => ({ driveId: f.stack.graph.drives()[0].id, name: `fz-folder-${n}`, conflictBehavior: 'fail' }),
      readOnly: false,
    },
  ],

  // The proxy hands the provider's own answers back; Graph's errors carry `error.code`.
  'ANY /proxy/*path': { template: '/proxy/v1.0/me', params: () => ({}), headers: driveHeaders, query: () => ({ $select: 'id,displayName' }), readOnly: true },
  'GET /logs': {
    query: (f) => ({ connection_id: f.ids.luma, integration: 'luma', status: '2xx', from: '2020-01-01T00:00:00Z', limit: '5' }),
    readOnly: true,
  },
  'GET /webhooks/events': {
    query: (f) => ({ connection_id: f.ids.luma, type: 'auth', status: 'failed', from: '2020-01-01T00:00:00Z', limit: '5' }),
    readOnly: true,
  },
  'GET /webhooks/events/:id': { params: () => ({ id: 'msg_fzMissing' }), readOnly: true },
  'POST /webhooks/events/:id/replay': { params: () => ({ id: 'msg_fzMissing' }), body: 'json', json: () => ({}), readOnly: false },
  'POST /webhooks/events/replay': { json: () => ({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', type: 'auth' }), readOnly: false },
  'GET /environment': { readOnly: true },
  'PATCH /environment': { json: () => ({ send_sync_completion_always: false }), readOnly: false },
  'POST /environment/webhook-signing-key/rotate': { readOnly: false },

  'POST /connect/sessions': {
    json: () => ({
      end_user: { id: 'fz-user' },
      allowed_integrations: ['luma'],
      integrations_config_defaults: { luma: { connection_config: { a: 1 } } },
      tags: { user: 'fz' },
    }),
    readOnly: false,
  },
  'POST /connect/sessions/reconnect': {
    json: (f) => ({
      connection_id: f.ids.luma,
      integration_id: 'luma',
      end_user: { id: 'fz-user', email: 'fz@example.com' },
      organization: { id: 'fz-org' },
      integrations_config_defaults: { luma: { connection_config: { a: 1 } } },
      tags: { user: 'fz' },
    }),
    readOnly: false,
  },
  'GET /connect': { query: (f) => ({ session_token: f.sessionToken }), readOnly: true },
  'POST /connect/api-key/:key': {
    params: () => ({ key: 'luma' }),
    form: (f) => ({ connect_session_token: f.sessionToken, apiKey: 'fz-refused-key' }),
    readOnly: false,
  },
  'POST /api-auth/api-key/:key': {
    params: () => ({ key: 'luma' }),
    query: (f) => ({ connect_session_token: f.sessionToken }),
    json: () => ({ apiKey: 'fz-refused-key' }),
    readOnly: false,
  },
  'GET /oauth/connect/:key': { params: () => ({ key: 'one-drive' }), query: (f) => ({ connect_session_token: f.sessionToken }), readOnly: false },
  'GET /oauth/callback': { query: () => ({ code: 'fz-code', state: 'fz-unknown-state' }), readOnly: true },
  'GET /app-auth/connect': {
    query: () => ({ installation_id: '1001', setup_action: 'install', state: 'fz-unknown-state', code: 'fz-code' }),
    readOnly: true,
  },
};

/**
 * The base variant: refused both ways, so the sample itself creates or deletes nothing; a
 * sync that is not auto-start, so a variant a mutation creates is paused and starts no run.
 */
function baseVariant(): Sample {
  return {
    params: () => ({ name: 'user-files/selected', variant: 'base' }),
    json: (f) => ({ provider_config_key: 'one-drive', connection_id: f.ids.oneDrive }),
    body: 'json',
    readOnly: false,
  };
}

const registryRoutes = listRoutes(API_ROUTES).map((r) => ({
  name: r.name,
  sampleKey: `${r.method === 'all' ? 'ANY' : r.method.toUpperCase()} ${r.route.path}`,
  method: r.method === 'all' ? 'GET' : r.method.toUpperCase(),
  path: r.path,
  auth: r.route.auth,
  body: r.route.request?.body ? (r.route.request.bodyType ?? 'json') : undefined,
}));
const named = new Set(registryRoutes.map((r) => r.sampleKey));
const stale = Object.keys(SAMPLES).filter((key) => !named.has(key));
if (stale.length) throw new Error(`fuzz samples for routes the registry does not have: ${stale.join(', ')}`);

/** Every route with its samples (a route without one: `fz` for each parameter, no query or body), and two unknown paths. */
export const ROUTES: RouteSpec[] = [
  ...registryRoutes.flatMap((r) =>
    ([] as Sample[]).concat(SAMPLES[r.sampleKey] ?? { readOnly: false }).map(({ label, ...sample }): RouteSpec => ({
      name: label ? `${r.name} (${label})` : r.name,
      method: r.method,
      template: r.path,
      auth: r.auth,
      body: r.body,
      params: () => Object.fromEntries([...r.path.matchAll(/[:*](\w+)/g)].map((m) => [m[1], 'fz'])),
      ...sample,
    })),
  ),

  { name: 'GET (unknown path)', method: 'GET', template: '/:path', params: () => ({ path: 'fz-unknown' }), auth: 'secret-key', readOnly: true },
  {
    name: 'POST (unknown path)',
    method: 'POST',
    template: '/integrations/:key/:more',
    params: () => ({ key: 'luma', more: 'fz-unknown' }),
    auth: 'secret-key',
    body: 'json',
    json: () => ({}),
    readOnly: true,
  },
];

/** Fills a template's parameters (already encoded, or deliberately not). */
export function fillTemplate(template: string, params: Record<string, string>): string {
  return template.replace(/[:*]([A-Za-z]+)/g, (_m, name: string) => params[name] ?? '');
}
