import { loadConfig } from '../../common/config';
import { createEgress, type Egress } from '../../egress/egress';
import { EgressRefusedError, EgressTimeoutError } from '../../egress/errors';
import { egressSettings, validateAllowLists } from '../../egress/settings';
import { startRecordingServer, type RecordingServer } from './recording-server';

/** The egress layer on real sockets: what is refused never gets a connection. */
describe('egress', () => {
  let allowed: RecordingServer;
  let forbidden: RecordingServer;
  let hanging: RecordingServer;
  let dripping: RecordingServer;
  let egress: Egress<'providers'>;

  beforeAll(async () => {
    allowed = await startRecordingServer((req, res) => {
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `${forbidden.url}/followed` }).end();
        return;
      }
      if (req.url === '/metadata-redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    forbidden = await startRecordingServer();
    // Accepts the connection, reads the request, never answers.
    hanging = await startRecordingServer(() => undefined);
    // Sends headers and a first chunk, then keeps the body open for ever (one byte every 100 ms).
    dripping = await startRecordingServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'), 100);
      res.on('close', () => clearInterval(timer));
    });
    const config = loadConfig({
      WEFT_EGRESS_ALLOW_PROVIDERS: [allowed.hostPort, hanging.hostPort, dripping.hostPort].join(','),
      WEFT_EGRESS_HEADERS_TIMEOUT_MS: '400',
      WEFT_EGRESS_BODY_TIMEOUT_MS: '600',
    });
    egress = createEgress(egressSettings(config, 'providers'));
  });

  afterAll(async () => {
    await egress.close();
    for (const s of [allowed, forbidden, hanging, dripping]) await s.close();
  });

  test('an allowed host:port is called', async () => {
    const res = await egress.request(`${allowed.url}/hello`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ ok: true });
  });

  test('a name that resolves to loopback, on a port not on the allow-list, is refused before connecting', async () => {
    const err = await egress.request(`http://localhost:${forbidden.port}/x`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EgressRefusedError);
    const refused = err as EgressRefusedError;
    expect(refused.code).toBe('egress_refused');
    expect(refused.status).toBe(424);
    expect(refused.message).toMatch(/localhost \((127\.0\.0\.1|::1)\) port \d+ refused by the "loopback" rule/);
    expect(refused.message).toContain('to WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(forbidden.connections).toBe(0);
  });

  test.each([
    ['loopback literal', (p: number) => `http://127.0.0.1:${p}/x`, 'loopback'],
    ['IPv4-mapped loopback', (p: number) => `http://[::ffff:127.0.0.1]:${p}/x`, 'loopback'],
    ['shorthand loopback', (p: number) => `http://0x7f.1:${p}/x`, 'loopback'],
    ['decimal loopback', (p: number) => `http://2130706433:${p}/x`, 'loopback'],
    ['unspecified 0.0.0.0 (reaches this host on Linux)', (p: number) => `http://0.0.0.0:${p}/x`, 'unspecified'],
    ['IPv6 loopback', (p: number) => `http://[::1]:${p}/x`, 'loopback'],
  ])('%s is refused before connecting', async (_name, url, rule) => {
    const err = await egress.request(url(forbidden.port)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EgressRefusedError);
    expect((err as EgressRefusedError).refusal.range.rule).toBe(rule);
    expect(forbidden.connections).toBe(0);
  });

  test('the same address on an allowed port passes, on another port it does not', async () => {
    expect((await egress.request(`${allowed.url}/`)).status).toBe(200);
    await expect(egress.request(`http://127.0.0.1:${forbidden.port}/`)).rejects.toMatchObject({ code: 'egress_refused' });
  });

  test('metadata, link-local and private literals are refused', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:169.254.169.254]/',
      'http://10.0.0.1/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://224.0.0.1/',
    ]) {
      await expect(egress.request(url)).rejects.toBeInstanceOf(EgressRefusedError);
    }
  });

  test('a redirect is handed back, not followed', async () => {
    const res = await egress.request(`${allowed.url}/redirect`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${forbidden.url}/followed`);
    // fetch() too, although fetch follows redirects by default.
    const viaFetch = await egress.fetch(`${allowed.url}/redirect`, { redirect: 'follow' });
    expect(viaFetch.status).toBe(302);
    expect(forbidden.connections).toBe(0);
    expect((await egress.request(`${allowed.url}/metadata-redirect`)).status).toBe(302);
  });

  test('a server that accepts but never answers times out at the headers timeout', async () => {
    const started = Date.now();
    const err = await egress.request(`${hanging.url}/`).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(EgressTimeoutError);
    expect((err as EgressTimeoutError).phase).toBe('headers');
    expect((err as EgressTimeoutError).message).toContain('WEFT_EGRESS_HEADERS_TIMEOUT_MS');
    expect(hanging.requests).toHaveLength(1);
    expect(took).toBeGreaterThanOrEqual(350);
    expect(took).toBeLessThan(2_000);
  });

  test('a body that never ends times out at the body timeout, although bytes keep coming', async () => {
    const started = Date.now();
    const err = await egress.request(`${dripping.url}/`).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(EgressTimeoutError);
    expect((err as EgressTimeoutError).phase).toBe('body');
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(2_500);
  });

  test('fetch() goes through the same policy', async () => {
    await expect(egress.fetch(`http://localhost:${forbidden.port}/`)).rejects.toMatchObject({ code: 'egress_refused' });
    const ok = await egress.fetch(`${allowed.url}/`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect(await ok.json()).toEqual({ ok: true });
    expect(allowed.requests.at(-1)?.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(forbidden.connections).toBe(0);
  });

  test('registration check: literal refused addresses are refused with 400, names and allowed literals pass', () => {
    for (const url of [
      'http://10.0.0.5/hook',
      'http://[::ffff:169.254.169.254]/',
      'http://0.0.0.0:8080/',
      'https://[fd00::1]/',
      `http://127.0.0.1:${forbidden.port}/`,
    ]) {
      let thrown: unknown;
      try {
        egress.checkUrl(url, 'webhook_url');
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(EgressRefusedError);
      expect((thrown as EgressRefusedError).status).toBe(400);
      expect((thrown as EgressRefusedError).message).toMatch(/^webhook_url: egress to /);
    }
    expect(() => egress.checkUrl(`${allowed.url}/x`, 'base_url')).not.toThrow();
    expect(() => egress.checkUrl('https://graph.microsoft.com/v1.0', 'base_url')).not.toThrow();
    expect(() => egress.checkUrl('http://localhost:1/', 'base_url')).not.toThrow(); // a name: judged when it is resolved
  });

  test('an invalid allow-list entry stops start-up with a clear message', () => {
    expect(() => createEgress(egressSettings(loadConfig({ WEFT_EGRESS_ALLOW_WEBHOOKS: '127.0.0.1:3010, localhost' }), 'webhooks'))).toThrow(
      /^WEFT_EGRESS_ALLOW_WEBHOOKS: "localhost" is not a CIDR/,
    );
    expect(() => validateAllowLists(loadConfig({ WEFT_EGRESS_ALLOW_PROVIDERS: '10.0.0.0/33' }))).toThrow(/^WEFT_EGRESS_ALLOW_PROVIDERS: "10.0.0.0\/33"/);
    expect(() => validateAllowLists(loadConfig({ WEFT_EGRESS_ALLOW: 'nothost' }))).toThrow(/^WEFT_EGRESS_ALLOW: "nothost"/);
  });
});
