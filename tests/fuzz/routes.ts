import type { FuzzFixture } from './fixture';

/**
 * Every route of the API (from api/app.ts and api/routers/*), each with a request that is
 * valid or nearly so against the fixture: the fuzz starts from it and breaks it. Keep this
 * list in step with the routers; the fuzz reports how many requests each route received.
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

const lumaHeaders = (f: FuzzFixture) => ({ 'connection-id': f.ids.luma, 'provider-config-key': 'luma' });
const driveHeaders = (f: FuzzFixture) => ({ 'connection-id': f.ids.oneDrive, 'provider-config-key': 'one-drive' });

const connectionRoutes = (base: '/connections' | '/connection'): RouteSpec[] => [
  {
    name: `POST ${base}`,
    method: 'POST',
    template: base,
    auth: 'secret-key',
    body: 'json',
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
  { name: `GET ${base}`, method: 'GET', template: base, auth: 'secret-key', query: () => ({ search: 'fz', limit: '10', page: '0' }), readOnly: true },
  {
    name: `GET ${base}/:connectionId`,
    method: 'GET',
    template: `${base}/:connectionId`,
    params: (f) => ({ connectionId: f.ids.luma }),
    auth: 'secret-key',
    query: () => ({ provider_config_key: 'luma' }),
    // Mints a GitHub installation token or refreshes an OAuth token when due: it may write.
    readOnly: false,
  },
  {
    name: `DELETE ${base}/:connectionId`,
    method: 'DELETE',
    template: `${base}/:connectionId`,
    // A connection that does not exist: the seeded ones must survive the run.
    params: () => ({ connectionId: 'fz-missing' }),
    auth: 'secret-key',
    query: () => ({ provider_config_key: 'luma' }),
    readOnly: false,
  },
  {
    name: `POST ${base}/metadata`,
    method: 'POST',
    template: `${base}/metadata`,
    auth: 'secret-key',
    body: 'json',
    json: (f) => ({ connection_id: f.ids.luma, provider_config_key: 'luma', metadata: { plan: 'fz' } }),
    readOnly: false,
  },
  {
    name: `PATCH ${base}/metadata`,
    method: 'PATCH',
    template: `${base}/metadata`,
    auth: 'secret-key',
    body: 'json',
    json: (f) => ({ connection_id: [f.ids.luma], provider_config_key: 'luma', metadata: { plan: 'fz' } }),
    readOnly: false,
  },
];

export const ROUTES: RouteSpec[] = [
  { name: 'GET /health', method: 'GET', template: '/health', auth: 'none', readOnly: true },
  { name: 'GET /ready', method: 'GET', template: '/ready', auth: 'none', readOnly: true },
  { name: 'GET /openapi.json', method: 'GET', template: '/openapi.json', auth: 'none', readOnly: true },
  { name: 'GET /docs', method: 'GET', template: '/docs', auth: 'none', readOnly: true },

  { name: 'GET /integrations', method: 'GET', template: '/integrations', auth: 'secret-key', readOnly: true },
  {
    name: 'POST /integrations',
    method: 'POST',
    template: '/integrations',
    auth: 'secret-key',
    body: 'json',
    json: (_f, n) => ({
      unique_key: `fz-int-${n}`,
      provider: 'luma',
      display_name: 'Fuzz',
      provider_overrides: { rate_limit: { requests: 10, window_ms: 1000 } },
    }),
    readOnly: false,
  },
  {
    name: 'GET /integrations/:key',
    method: 'GET',
    template: '/integrations/:key',
    params: () => ({ key: 'luma' }),
    auth: 'secret-key',
    query: () => ({ 'include[]': 'credentials' }),
    readOnly: true,
  },
  {
    name: 'PATCH /integrations/:key',
    method: 'PATCH',
    template: '/integrations/:key',
    params: () => ({ key: 'luma' }),
    auth: 'secret-key',
    body: 'json',
    json: () => ({ display_name: 'Luma' }),
    readOnly: false,
  },
  // luma has connections: refused with 400, so the integration survives the run.
  { name: 'DELETE /integrations/:key', method: 'DELETE', template: '/integrations/:key', params: () => ({ key: 'luma' }), auth: 'secret-key', readOnly: false },

  ...connectionRoutes('/connections'),
  ...connectionRoutes('/connection'),

  {
    name: 'POST /sync/trigger',
    method: 'POST',
    template: '/sync/trigger',
    auth: 'secret-key',
    body: 'json',
    // A sync the integration does not have: a real trigger would start a run mid-fuzz.
    json: (f) => ({ provider_config_key: 'luma', connection_id: f.ids.luma, syncs: ['fz-no-such-sync'], opts: { reset: false } }),
    readOnly: false,
  },
  ...(['start', 'pause'] as const).map((verb): RouteSpec => ({
    name: `POST /sync/${verb}`,
    method: 'POST',
    template: `/sync/${verb}`,
    auth: 'secret-key',
    body: 'json',
    // A sync the integration does not have: nothing to change, as for the trigger.
    json: (f) => ({ provider_config_key: 'luma', connection_id: f.ids.luma, syncs: ['fz-no-such-sync'] }),
    readOnly: false,
  })),
  {
    name: 'PUT /sync/update-connection-frequency',
    method: 'PUT',
    template: '/sync/update-connection-frequency',
    auth: 'secret-key',
    body: 'json',
    // Under the 30 s minimum: refused before anything changes.
    json: (f) => ({ provider_config_key: 'luma', connection_id: f.ids.luma, sync_name: 'list-events', frequency: 'every 5s' }),
    readOnly: false,
  },
  ...(['POST', 'DELETE'] as const).map((method): RouteSpec => ({
    name: `${method} /sync/:name/variant/:variant`,
    method,
    template: '/sync/:name/variant/:variant',
    // The base variant: refused both ways, so the template itself creates or deletes nothing; a
    // sync that is not auto-start, so a variant a mutation creates is paused and starts no run.
    params: () => ({ name: 'user-files/selected', variant: 'base' }),
    auth: 'secret-key',
    body: 'json',
    json: (f) => ({ provider_config_key: 'one-drive', connection_id: f.ids.oneDrive }),
    readOnly: false,
  })),
  {
    name: 'GET /sync/status',
    method: 'GET',
    template: '/sync/status',
    auth: 'secret-key',
    query: (f) => ({ provider_config_key: 'luma', syncs: 'list-events', connection_id: f.ids.luma }),
    readOnly: true,
  },

  {
    name: 'GET /records',
    method: 'GET',
    template: '/records',
    auth: 'secret-key',
    headers: lumaHeaders,
    query: () => ({ model: 'CalendarEvent', limit: '5' }),
    readOnly: true,
  },

  {
    name: 'POST /action/trigger',
    method: 'POST',
    template: '/action/trigger',
    auth: 'secret-key',
    headers: driveHeaders,
    body: 'json',
    json: () => ({ action_name: 'list-drives', input: {} }),
    readOnly: false,
  },
  { name: 'GET /action/:id', method: 'GET', template: '/action/:id', params: () => ({ id: 'fz-no-such-run' }), auth: 'secret-key', readOnly: true },

  {
    name: 'GET /v1/*path (action)',
    method: 'GET',
    template: '/v1/*path',
    params: () => ({ path: 'list-drives' }),
    auth: 'secret-key',
    headers: driveHeaders,
    readOnly: false,
  },
  {
    // An action's own POST endpoint: its JSON body is the action's input, validated by the action's schema.
    name: 'POST /v1/*path (luma create-event)',
    method: 'POST',
    template: '/v1/*path',
    params: () => ({ path: 'luma/create-event' }),
    auth: 'secret-key',
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
    name: 'POST /v1/*path (one-drive create-folder)',
    method: 'POST',
    template: '/v1/*path',
    params: () => ({ path: 'create-folder' }),
    auth: 'secret-key',
    headers: driveHeaders,
    body: 'json',
    json: (f, n) => ({ driveId: f.stack.graph.drives()[0].id, name: `fz-folder-${n}`, conflictBehavior: 'fail' }),
    readOnly: false,
  },
  {
    name: 'GET /v1/*path (sync)',
    method: 'GET',
    template: '/v1/*path',
    params: () => ({ path: 'luma/list-events' }),
    auth: 'secret-key',
    headers: lumaHeaders,
    query: () => ({ limit: '3' }),
    readOnly: true,
  },

  {
    // The proxy hands the provider's own answers back; Graph's errors carry `error.code`.
    name: 'ANY /proxy/*path',
    method: 'GET',
    template: '/proxy/v1.0/me',
    auth: 'secret-key',
    headers: driveHeaders,
    query: () => ({ $select: 'id,displayName' }),
    readOnly: true,
  },
  {
    name: 'GET /logs',
    method: 'GET',
    template: '/logs',
    auth: 'secret-key',
    query: (f) => ({ connection_id: f.ids.luma, integration: 'luma', status: '2xx', from: '2020-01-01T00:00:00Z', limit: '5' }),
    readOnly: true,
  },
  {
    name: 'GET /webhooks/events',
    method: 'GET',
    template: '/webhooks/events',
    auth: 'secret-key',
    query: (f) => ({ connection_id: f.ids.luma, type: 'auth', status: 'failed', from: '2020-01-01T00:00:00Z', limit: '5' }),
    readOnly: true,
  },
  {
    name: 'GET /webhooks/events/:id',
    method: 'GET',
    template: '/webhooks/events/:id',
    params: () => ({ id: 'msg_fzMissing' }),
    auth: 'secret-key',
    readOnly: true,
  },
  {
    name: 'POST /webhooks/events/:id/replay',
    method: 'POST',
    template: '/webhooks/events/:id/replay',
    params: () => ({ id: 'msg_fzMissing' }),
    auth: 'secret-key',
    body: 'json',
    json: () => ({}),
    readOnly: false,
  },
  {
    name: 'POST /webhooks/events/replay',
    method: 'POST',
    template: '/webhooks/events/replay',
    auth: 'secret-key',
    body: 'json',
    json: () => ({ from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', type: 'auth' }),
    readOnly: false,
  },
  { name: 'GET /environment', method: 'GET', template: '/environment', auth: 'secret-key', readOnly: true },
  {
    name: 'PATCH /environment',
    method: 'PATCH',
    template: '/environment',
    auth: 'secret-key',
    body: 'json',
    json: () => ({ send_sync_completion_always: false }),
    readOnly: false,
  },
  {
    name: 'POST /environment/webhook-signing-key/rotate',
    method: 'POST',
    template: '/environment/webhook-signing-key/rotate',
    auth: 'secret-key',
    readOnly: false,
  },

  {
    name: 'POST /connect/sessions',
    method: 'POST',
    template: '/connect/sessions',
    auth: 'secret-key',
    body: 'json',
    json: () => ({
      end_user: { id: 'fz-user' },
      allowed_integrations: ['luma'],
      integrations_config_defaults: { luma: { connection_config: { a: 1 } } },
      tags: { user: 'fz' },
    }),
    readOnly: false,
  },
  { name: 'GET /connect', method: 'GET', template: '/connect', auth: 'session', query: (f) => ({ session_token: f.sessionToken }), readOnly: true },
  {
    name: 'POST /connect/api-key/:key',
    method: 'POST',
    template: '/connect/api-key/:key',
    params: () => ({ key: 'luma' }),
    auth: 'session',
    body: 'form',
    form: (f) => ({ connect_session_token: f.sessionToken, apiKey: 'fz-refused-key' }),
    readOnly: false,
  },
  {
    name: 'POST /api-auth/api-key/:key',
    method: 'POST',
    template: '/api-auth/api-key/:key',
    params: () => ({ key: 'luma' }),
    auth: 'session',
    body: 'json',
    query: (f) => ({ connect_session_token: f.sessionToken }),
    json: () => ({ apiKey: 'fz-refused-key' }),
    readOnly: false,
  },
  {
    name: 'GET /oauth/connect/:key',
    method: 'GET',
    template: '/oauth/connect/:key',
    params: () => ({ key: 'one-drive' }),
    auth: 'session',
    query: (f) => ({ connect_session_token: f.sessionToken }),
    readOnly: false,
  },
  {
    name: 'GET /oauth/callback',
    method: 'GET',
    template: '/oauth/callback',
    auth: 'none',
    query: () => ({ code: 'fz-code', state: 'fz-unknown-state' }),
    readOnly: true,
  },
  {
    name: 'GET /app-auth/connect',
    method: 'GET',
    template: '/app-auth/connect',
    auth: 'none',
    query: () => ({ installation_id: '1001', setup_action: 'install', state: 'fz-unknown-state', code: 'fz-code' }),
    readOnly: true,
  },

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
