import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderHttpError, isProviderStatus } from '../../runtime/errors';
import { createProxyTransport } from '../../runtime/dryrun/proxy-transport';
import type { RecordedExchange } from '../../runtime/mocks/fixture-files';

/**
 * The dry run's transport against a stand-in for Weft's `/proxy` that records what it is
 * sent and answers as scripted: how calls are addressed to the proxy and how its answers
 * (the provider's, or Weft's own refusals) come back. tests/cli/dryrun.test.ts runs it
 * against a real Weft.
 */
describe('the dry run proxy transport', () => {
  let server: Server;
  let host: string;
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  let answers: Array<{ status: number; headers?: Record<string, string>; body: unknown }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
        const next = answers.shift() ?? { status: 200, body: {} };
        res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
        res.end(JSON.stringify(next.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
    answers = [];
  });

  const transport = (record: RecordedExchange[] = [], waits: number[] = []) =>
    createProxyTransport({
      weftHost: `${host}/`,
      secretKey: 'weft_sk_dev_test-secret-key',
      connectionId: 'c-1',
      providerConfigKey: 'one-drive',
      defaultRetries: 3,
      defaultHeaders: { accept: 'application/json', 'x-both': 'default' },
      onExchange: (e) => record.push(e),
      onWait: (ms) => waits.push(ms),
    });

  test('a relative call: its path and query under /proxy, the ids and key as headers, its own headers as Weft-Proxy-*', async () => {
    answers = [{ status: 201, body: { id: 'x' } }];
    const record: RecordedExchange[] = [];
    const res = await transport(record).request({
      method: 'POST',
      endpoint: '/v1.0/me/drive/items/a b:/new.txt:/content',
      params: { '@microsoft.graph.conflictBehavior': 'rename', ids: ['1', '2'], skip: undefined },
      headers: { 'If-Match': 'etag-1', 'x-both': 'mine' },
      data: { name: 'x' },
      retries: 0,
    });
    expect(res).toEqual({ status: 201, headers: expect.objectContaining({ 'content-type': 'application/json' }), data: { id: 'x' } });
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: '/proxy/v1.0/me/drive/items/a%20b:/new.txt:/content?%40microsoft.graph.conflictBehavior=rename&ids=1&ids=2',
      body: '{"name":"x"}',
      headers: expect.objectContaining({
        authorization: 'Bearer weft_sk_dev_test-secret-key',
        'connection-id': 'c-1',
        'provider-config-key': 'one-drive',
        retries: '0',
        'weft-proxy-if-match': 'etag-1',
        'weft-proxy-accept': 'application/json',
        'weft-proxy-x-both': 'mine',
        'content-type': 'application/json',
      }),
    });
    expect(seen[0].headers['base-url-override']).toBeUndefined();
    expect(record).toEqual([{ request: expect.objectContaining({ method: 'POST', endpoint: '/v1.0/me/drive/items/a b:/new.txt:/content' }), response: res }]);
  });

  test("a full URL (a next-page link): its path under /proxy, its origin as Base-Url-Override, the provider's retries by default", async () => {
    await transport().request({ endpoint: 'https://graph.microsoft.com/v1.0/me/drive/root/delta?token=abc&$top=2' });
    expect(seen[0].url).toBe('/proxy/v1.0/me/drive/root/delta?token=abc&$top=2');
    expect(seen[0].headers).toMatchObject({ 'base-url-override': 'https://graph.microsoft.com', retries: '3' });
  });

  test("the provider's error is the worker's ProviderHttpError (a Graph body has error.code too); Weft's own refusal is not", async () => {
    answers = [
      { status: 404, body: { error: { code: 'itemNotFound', message: 'The resource could not be found.' } } },
      { status: 404, body: { error: { code: 'unknown_connection', message: 'No connection "c-1" for integration "one-drive".' } } },
    ];
    const record: RecordedExchange[] = [];
    const t = transport(record);
    const provider = await t.request({ endpoint: '/v1.0/me/drive/items/nope' }).catch((e: unknown) => e);
    expect(provider).toBeInstanceOf(ProviderHttpError);
    expect(isProviderStatus(provider, 404)).toBe(true);
    expect(record).toHaveLength(1);
    const weft = await t.request({ endpoint: '/v1.0/me' }).catch((e: unknown) => e);
    expect(weft).toMatchObject({ code: 'unknown_connection', status: 404, message: 'No connection "c-1" for integration "one-drive".' });
    expect(weft).not.toBeInstanceOf(ProviderHttpError);
    expect(record).toHaveLength(1);
  });

  test("Weft's rate_limited is waited out (Retry-After) and the call sent again", async () => {
    answers = [
      { status: 429, headers: { 'retry-after': '1' }, body: { error: { code: 'rate_limited', message: 'Luma throttled; retry in 1 s' } } },
      { status: 200, body: { entries: [] } },
    ];
    const waits: number[] = [];
    const started = Date.now();
    const res = await transport([], waits).request({ endpoint: '/public/v1/calendar/list-events' });
    expect(res.data).toEqual({ entries: [] });
    expect(waits).toEqual([1000]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(seen).toHaveLength(2);
  });

  test('a pre-authenticated URL: its origin as Base-Url-Override and Weft-Pre-Authenticated, so the proxy adds no credentials; a relative one is refused', async () => {
    answers = [{ status: 202, body: { nextExpectedRanges: ['1-'] } }];
    const res = await transport().request({
      method: 'PUT',
      endpoint: 'https://tenant.sharepoint.com/upload/session?guid=g&tempauth=x',
      preAuthenticated: true,
      headers: { 'content-range': 'bytes 0-0/2' },
      data: new Uint8Array([1]),
    });
    expect(res.status).toBe(202);
    expect(seen[0]).toMatchObject({ method: 'PUT', url: '/proxy/upload/session?guid=g&tempauth=x', body: '\u0001' });
    expect(seen[0].headers).toMatchObject({
      'base-url-override': 'https://tenant.sharepoint.com',
      'weft-pre-authenticated': 'true',
      'weft-proxy-content-range': 'bytes 0-0/2',
      'content-type': 'application/octet-stream',
    });

    const relative = await transport()
      .request({ method: 'PUT', endpoint: '/upload/session?tempauth=x', preAuthenticated: true, data: new Uint8Array([1]) })
      .catch((e: unknown) => e);
    expect(relative).toMatchObject({ code: 'dryrun_pre_authenticated_relative' });
    expect(seen).toHaveLength(1);
  });

  test('an unreachable Weft says where it looked', async () => {
    const t = createProxyTransport({ weftHost: 'http://127.0.0.1:9', secretKey: 'k', connectionId: 'c', providerConfigKey: 'p', defaultRetries: 0 });
    await expect(t.request({ endpoint: '/x' })).rejects.toMatchObject({ code: 'weft_unreachable', message: expect.stringContaining('http://127.0.0.1:9') });
  });
});
