import net from 'node:net';
import pino from 'pino';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { CredentialCipher } from '../../auth/credential-cipher';
import { openCore, type Core } from '../../app/core';
import { startApiServer, type RunningApi } from '../../api/server';
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
  let connection: Connection;
  let api: RunningApi;
  const dbName = `weft_test_${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    const infra = testInfra();
    core = await openCore({ mongodbUri: infra.mongodbUri, dbName, encryptionKey: CredentialCipher.generateKey(), requestLogTtlDays: 1 });
    connection = await Connection.connect({ address: infra.temporalAddress });
    const deps = {
      stores: core.stores,
      cipher: core.cipher,
      registry: core.registry,
      temporal: new Client({ connection, namespace: infra.namespace }),
      logger: pino({ level: 'silent' }),
      settings: { syncTaskQueue: 'unused', actionTaskQueue: 'unused', heartbeatTimeoutMs: 10_000 },
    };
    api = await startApiServer(deps as Parameters<typeof startApiServer>[0], 0, '127.0.0.1', { headersTimeoutMs: 800, requestTimeoutMs: 1_500, keepAliveTimeoutMs: 500 });
  });
  afterAll(async () => {
    await api?.close();
    await core?.mongo.db(dbName).dropDatabase().catch(() => undefined);
    await core?.close();
    await connection?.close();
  });

  test('a body announced and never sent: 408 and the socket closed once the request timeout passes', async () => {
    const out = await stall(api.url, 'POST /connect/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"tags":', 10_000);
    expect(out.received).toMatch(/^HTTP\/1\.1 408/);
    expect(out.received).toContain('"code":"request_timeout"');
    expect(out.closedAfterMs).toBeGreaterThanOrEqual(1_400);
    expect(out.closedAfterMs).toBeLessThan(4_000);
  });

  test('headers never finished: closed once the headers timeout passes', async () => {
    const out = await stall(api.url, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ', 10_000);
    expect(out.received).toMatch(/^HTTP\/1\.1 408/);
    expect(out.closedAfterMs).toBeLessThan(3_000);
  });

  test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const out = await stall(api.url, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', 10_000);
    expect(out.received).toMatch(/^HTTP\/1\.1 200/);
    expect(out.closedAfterMs).toBeLessThan(3_000);
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
