import { GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';
import { connectOneDrive, createOneDriveIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * The proxy reads the integration and connection through caches of a few seconds
 * (store/read-cache.ts); a change made through the same API process is honoured at once.
 * (Changes by another process: tests/store/read-cache.test.ts, within READ_CACHE_TTL_MS.)
 */
describe('proxy lookups cached, own changes seen at once', () => {
  let stack: WeftStack;
  beforeAll(async () => {
    stack = await startWeftStack({ worker: false, graph: { seed: 3 }, temporalCallTimeoutMs: 10_000 });
    await createOneDriveIntegration(stack);
  }, 120_000);
  afterAll(async () => {
    await stack?.shutdown();
  });

  const proxyMe = async () => {
    const res = await fetch(`${stack.apiUrl}/proxy/v1.0/me`, {
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'connection-id': 'cached-user', 'provider-config-key': 'one-drive' },
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  test('a deleted connection is refused at once; one created again with other credentials is proxied with those at once', async () => {
    expect((await connectOneDrive(stack, 'cached-user')).status).toBe(201);
    expect((await proxyMe()).status).toBe(200);
    expect((await proxyMe()).status).toBe(200); // served from the cache

    expect((await stack.api('DELETE', '/connections/cached-user?provider_config_key=one-drive')).status).toBe(200);
    expect(await proxyMe()).toMatchObject({ status: 404, body: { error: { code: 'unknown_connection' } } });

    // Created again with another token, the first one then revoked: the proxy sends the new one, not a cached old one.
    stack.graph.addAccessToken('second-graph-token');
    expect((await connectOneDrive(stack, 'cached-user', 'second-graph-token')).status).toBe(201);
    stack.graph.revokeAccessToken(GRAPH_DEFAULT_ACCESS_TOKEN);
    expect((await proxyMe()).status).toBe(200);
  });
});
