import { createOneDriveIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';

/** GET /connections/:id returns the credentials an app needs, and the refresh token only when asked (Nango's `refresh_token`). */
describe('GET /connections/:connectionId credentials', () => {
  let stack: WeftStack;
  const REFRESH_TOKEN = 'rt-only-on-request-0123456789';

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false, graph: { seed: 1, drives: [{ fileCount: 1 }] } });
    await createOneDriveIntegration(stack);
    const expiresAt = new Date(Date.now() + 2 * 3600_000).toISOString();
    const res = await stack.api('POST', '/connections', {
      body: {
        provider_config_key: 'one-drive',
        connection_id: 'u1',
        credentials: { type: 'OAUTH2', access_token: GRAPH_DEFAULT_ACCESS_TOKEN, refresh_token: REFRESH_TOKEN, expires_at: expiresAt },
      },
    });
    expect(res.status).toBe(201);
  });
  afterAll(async () => stack?.shutdown());

  test('without refresh_token=true the refresh token is left out (also from raw)', async () => {
    for (const query of ['', '&refresh_token=false']) {
      const res = await stack.api('GET', `/connections/u1?provider_config_key=one-drive${query}`);
      expect(res.status).toBe(200);
      expect(res.body.credentials.access_token).toBe(GRAPH_DEFAULT_ACCESS_TOKEN);
      expect(res.body.credentials.refresh_token).toBeUndefined();
      expect(JSON.stringify(res.body)).not.toContain(REFRESH_TOKEN);
    }
  });

  test('with refresh_token=true it is included', async () => {
    const res = await stack.api('GET', '/connections/u1?provider_config_key=one-drive&refresh_token=true');
    expect(res.status).toBe(200);
    expect(res.body.credentials.refresh_token).toBe(REFRESH_TOKEN);
  });

  test('refresh_token must be true or false', async () => {
    const res = await stack.api('GET', '/connections/u1?provider_config_key=one-drive&refresh_token=yes');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_query_params');
  });
});
