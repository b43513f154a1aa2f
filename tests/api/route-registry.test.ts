import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../api/app';
import type { ApiDeps } from '../../api/deps';
import { API_ROUTES } from '../../api/route-registry';
import { listRoutes } from '../../api/routing/route';

/**
 * What the registry says about who may call a route is what the mounting enforces: the app is
 * built from the registry with nothing behind it (no database, no Temporal, no environments),
 * and every route is called, at each of its mounts, without a key.
 */
describe('the route registry’s auth, as mounted', () => {
  let server: Server;
  let url: string;
  const routes = listRoutes(API_ROUTES);

  beforeAll(async () => {
    const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet };
    const deps = {
      stores: {},
      registry: { providers: () => [], get: () => undefined },
      logger: quiet,
      settings: { apiRateLimit: { limit: 0, windowMs: 60_000 } },
    } as unknown as ApiDeps;
    server = createApp(deps).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const call = async (method: string, path: string) => {
    const res = await fetch(`${url}${path.replace(/[:*]\w+/g, 'x')}`, { method: method === 'all' ? 'GET' : method.toUpperCase() });
    const text = await res.text();
    return { status: res.status, code: text.startsWith('{') ? (JSON.parse(text) as { error?: { code?: string } }).error?.code : undefined };
  };

  test('every secret-key route refuses a request without a key (401 unauthorized) before its handler runs', async () => {
    const keyed = routes.filter((r) => r.route.auth === 'secret-key');
    expect(keyed.length).toBeGreaterThan(20);
    for (const r of keyed) expect({ route: r.name, ...(await call(r.method, r.path)) }).toEqual({ route: r.name, status: 401, code: 'unauthorized' });
  });

  test('no other route asks for one', async () => {
    const open = routes.filter((r) => r.route.auth !== 'secret-key');
    expect(open.map((r) => r.name)).toEqual(expect.arrayContaining(['GET /health', 'GET /openapi.json', 'GET /connect', 'GET /oauth/callback']));
    for (const r of open) expect({ route: r.name, ...(await call(r.method, r.path)) }).not.toMatchObject({ status: 401, code: 'unauthorized' });
  });
});
