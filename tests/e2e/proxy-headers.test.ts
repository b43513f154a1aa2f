import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startWeftStack, type WeftStack } from '../support/weft-stack';

const KEY = 'header-provider-key-0123456789abcdef';

/** What the app needs from a provider's answer: these pass. */
const PASSED = {
  'content-type': 'application/json; charset=utf-8',
  etag: 'W/"v42"',
  'last-modified': 'Tue, 01 Dec 2026 10:00:00 GMT',
  link: '<https://api.example.com/items?page=2>; rel="next"',
  location: 'https://api.example.com/items/7',
  'retry-after': '30',
  'x-ratelimit-remaining': '4999',
  'x-ratelimit-reset': '1795000000',
  'x-rate-limit-limit': '100',
  ratelimit: 'limit=100, remaining=99, reset=30',
  'ratelimit-policy': '100;w=60',
  'x-request-id': 'req-1',
  'x-github-request-id': 'ABCD:1234',
  'request-id': 'graph-req-1',
  'client-request-id': 'graph-client-1',
  deprecation: '@1795000000',
  sunset: 'Wed, 01 Dec 2027 00:00:00 GMT',
  'content-disposition': 'attachment; filename="report.csv"',
};

/** What a provider may send that the app must not get (or must get Weft's own value for). */
const PROVIDER_ONLY = {
  'cache-control': 'public, max-age=86400',
  expires: 'Thu, 01 Dec 2033 00:00:00 GMT',
  pragma: 'cache',
  age: '120',
  vary: 'Accept-Encoding, Cookie',
  'set-cookie': 'provider_session=s3cr3t; Path=/; HttpOnly',
  'x-internal-host': 'db-7.corp.internal',
  'x-debug-token': 'debug-echo-of-something',
  'access-control-allow-origin': '*',
  'x-luma-api-key': KEY,
  server: 'provider-gateway/9.9',
};

/**
 * The proxy's answer headers on the real stack: the provider's pass by allow-list, Weft's
 * `Cache-Control: no-store` stays whatever the provider says about caching, and every
 * answer varies on Connection-Id and Provider-Config-Key.
 */
describe('proxy answer headers', () => {
  let stack: WeftStack;
  let provider: http.Server;
  let providerUrl: string;

  beforeAll(async () => {
    provider = http.createServer((req, res) => {
      const status = req.url?.startsWith('/public/v1/user/get-self') ? 200 : req.url?.startsWith('/missing') ? 404 : 201;
      res.writeHead(status, { ...PASSED, ...PROVIDER_ONLY });
      res.end(JSON.stringify({ user: { api_id: 'usr-headers' }, path: req.url }));
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    stack = await startWeftStack({ worker: false, egressAllow: { providers: [providerUrl] } });
    const created = await stack.api('POST', '/integrations', {
      body: { unique_key: 'headers', provider: 'luma', provider_overrides: { base_url: providerUrl } },
    });
    expect(created.status).toBe(201);
    const connected = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'headers', connection_id: 'h-1', credentials: { type: 'API_KEY', apiKey: KEY } },
    });
    expect(connected.status).toBe(201);
  });

  afterAll(async () => {
    await stack?.shutdown();
    await new Promise((resolve) => provider?.close(resolve));
  });

  const proxy = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.apiUrl}/proxy${path}`, {
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'connection-id': 'h-1', 'provider-config-key': 'headers', ...headers },
    });

  function expectWeftRules(res: Response): void {
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('vary')).toBe('Connection-Id, Provider-Config-Key');
  }

  test.each([
    ['a success', '/items', 201],
    ['an error answer (its body scrubbed)', '/missing', 404],
  ])('%s: the allow-listed headers pass as sent, the others do not, and Weft keeps no-store and its Vary', async (_what, path, status) => {
    const res = await proxy(path);
    expect(res.status).toBe(status);
    for (const [name, value] of Object.entries(PASSED)) expect([name, res.headers.get(name)]).toEqual([name, value]);
    for (const name of ['expires', 'pragma', 'age', 'set-cookie', 'x-internal-host', 'x-debug-token', 'access-control-allow-origin', 'x-luma-api-key']) {
      expect([name, res.headers.get(name)]).toEqual([name, null]);
    }
    expect(res.headers.get('server')).not.toBe(PROVIDER_ONLY.server);
    expectWeftRules(res);
    const text = await res.text();
    expect(text).toContain(path);
    expect(text).not.toContain(KEY);
  });

  test('HEAD answers follow the same list', async () => {
    const res = await fetch(`${stack.apiUrl}/proxy/items`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'connection-id': 'h-1', 'provider-config-key': 'headers' },
    });
    expect(res.headers.get('etag')).toBe(PASSED.etag);
    expect(res.headers.get('x-internal-host')).toBeNull();
    expectWeftRules(res);
  });

  test("Weft's own answers on /proxy (an unknown connection) carry no-store and the same Vary", async () => {
    const res = await proxy('/items', { 'connection-id': 'nobody' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unknown_connection');
    expectWeftRules(res);
  });
});
