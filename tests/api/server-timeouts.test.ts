import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { CredentialCipher } from '../../auth/credential-cipher';
import { buildCore, type Core } from '../../app/core';
import { startApi } from '../../app/api/build-api';
import type { RunningApi } from '../../api/server';
import { loadConfig } from '../../common/config';
import { testInfra } from '../support/weft-stack';

/**
 * A client that announces a body and never sends it, or never finishes its headers, must
 * not hold a socket: the server closes it once the request or header timeout passes.
 */
interface Outcome {
  /** What the server wrote before it closed the socket (e.g. a 408). */
  received: string;
  closedAfterMs: number;
}

function stall(url: string, firstBytes: string, giveUpMs: number): Promise<Outcome> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(firstBytes));
    let received = '';
    socket.on('data', (c) => (received += c.toString('latin1')));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server still held the socket after ${giveUpMs} ms`));
    }, giveUpMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ received, closedAfterMs: performance.now() - started });
    });
    socket.on('error', () => undefined);
  });
}

describe('HTTP server timeouts', () => {
  let core: Core;
  let api: RunningApi;
  const dbName = `weft_test_${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    const infra = testInfra();
    core = await buildCore(
      loadConfig({
        TEMPORAL_ADDRESS: infra.temporalAddress,
        TEMPORAL_NAMESPACE: infra.namespace,
        MONGODB_URI: infra.mongodbUri,
        MONGODB_DB: dbName,
        WEFT_ENCRYPTION_KEY: CredentialCipher.generateKey(),
        WEFT_HTTP_HEADERS_TIMEOUT_MS: '800',
        WEFT_HTTP_REQUEST_TIMEOUT_MS: '1500',
        WEFT_HTTP_KEEP_ALIVE_TIMEOUT_MS: '500',
      }),
      { log: { level: 'silent' } },
    );
    api = await startApi(core, { port: 0 });
  });
  afterAll(async () => {
    await api?.close();
    await core?.mongo
      .db(dbName)
      .dropDatabase()
      .catch(() => undefined);
    await core?.close();
  });

  test('a body announced and never sent: 408 and the socket closed once the request timeout passes', async () => {
    const out = await stall(
      api.url,
      'POST /connect/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"tags":',
      10_000,
    );
    expect(out.received).toMatch(/^HTTP\/1\.1 408/);
    expect(out.received).toContain('"code":"request_timeout"');
    // Not before the request timeout (1.5 s); that the server closed it at all, stall checks.
    expect(out.closedAfterMs).toBeGreaterThanOrEqual(1_400);
  });

  test('headers never finished: closed once the headers timeout passes', async () => {
    const out = await stall(api.url, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ', 10_000);
    expect(out.received).toMatch(/^HTTP\/1\.1 408/);
  });

  test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    // Node's own keep-alive timeout is 5 s: a socket still held at 4.5 s (nine times the
    // configured 500 ms) would mean the setting was ignored.
    const out = await stall(api.url, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', 4_500);
    expect(out.received).toMatch(/^HTTP\/1\.1 200/);
  });

  test.each([
    ['bytes that are not HTTP', 'GARBAGE\r\n\r\n', 400, 'malformed_request'],
    ['an unknown method', 'FZ /health HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'malformed_request'],
    ['a control character in the path', 'GET /he\u0001alth HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'malformed_request'],
    ['headers past 16 KB', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
  ])('%s: the API error shape with a stable code, not a bare status line', async (_name, bytes, status, code) => {
    const out = await stall(api.url, bytes, 5_000);
    expect(out.received).toMatch(new RegExp(`^HTTP/1\\.1 ${status}`));
    const body = JSON.parse(out.received.slice(out.received.indexOf('\r\n\r\n') + 4));
    expect(body.error.code).toBe(code);
  });
});
