import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Connection, type TLSConfig } from '@temporalio/client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { resolveBinary } from '../../scripts/infra/binaries';
import { isPortFree } from '../../scripts/infra/free-port';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startTemporalServer, type TemporalServer } from '../../scripts/infra/temporal-server';
import { createTestPki, type PemPair, type TestPki } from '../support/test-pki';

/**
 * scripts/infra/temporal-server.ts: the plain Temporal server with mTLS on its frontend (and,
 * optionally, JWT authorization), as the production tests use it. Here only the server: what it
 * accepts and refuses, with the SDK's own client.
 */
const { binaries } = infraOptionsFromEnv();

async function tlsWith(pki: TestPki, client: PemPair | null, serverCa: PemPair = pki.ca): Promise<TLSConfig> {
  return {
    serverNameOverride: 'localhost',
    serverRootCACertificate: await readFile(serverCa.certPath),
    ...(client ? { clientCertPair: { crt: await readFile(client.certPath), key: await readFile(client.keyPath) } } : {}),
  };
}

/**
 * One call over a fresh connection, closed whatever happens. Lazy and without the client's
 * retry interceptor: `Connection.connect` waits out its whole timeout on a refused handshake and
 * then says only "Failed to connect before the deadline", and the retry interceptor turns the
 * UNAVAILABLE (which carries the TLS alert) into a DEADLINE_EXCEEDED. One attempt keeps the reason.
 */
async function call<T>(address: string, opts: { tls?: TLSConfig | false; apiKey?: string }, use: (c: Connection) => Promise<T>): Promise<T> {
  const connection = Connection.lazy({ address, tls: opts.tls, apiKey: opts.apiKey, interceptors: [] });
  try {
    return await connection.withDeadline(Date.now() + 15_000, () => use(connection));
  } finally {
    await connection.close();
  }
}

/** A refused call: its gRPC status code and message, or 'accepted'. */
async function outcome(promise: Promise<unknown>): Promise<{ code?: number; message: string } | 'accepted'> {
  try {
    await promise;
    return 'accepted';
  } catch (err) {
    const e = err as { code?: number; message?: string };
    return { code: e.code, message: e.message ?? String(err) };
  }
}

describe('startTemporalServer: TLS with client certificates required', () => {
  let dir: string;
  let pki: TestPki;
  let server: TemporalServer | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-temporal-server-test-'));
    pki = await createTestPki(dir);
    const binary = await resolveBinary('temporal-server', { explicitPath: binaries['temporal-server'], cacheDir: binaries.cacheDir });
    server = await startTemporalServer({
      binary,
      tls: { certPath: pki.server.certPath, keyPath: pki.server.keyPath, clientCaPaths: [pki.ca.certPath] },
      client: { certPath: pki.client.certPath, keyPath: pki.client.keyPath, serverCaPath: pki.ca.certPath },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('serves the default namespace over TLS to a client certificate of its CA, with the dev server settings Weft relies on', async () => {
    expect(server!.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(server!.namespace).toBe('default');
    const described = await call(server!.address, { tls: await tlsWith(pki, pki.client) }, (c) =>
      c.workflowService.describeNamespace({ namespace: 'default' }),
    );
    expect(described.namespaceInfo?.name).toBe('default');
    // Eager activities and one partition per task queue, as in temporal-dev.yaml.
    const dynamicConfig = await readFile(path.join(server!.configDir, 'dynamic-config.yaml'), 'utf8');
    expect(dynamicConfig).toMatch(/system\.enableActivityEagerExecution:\n\s+- value: true/);
    expect(dynamicConfig).toMatch(/matching\.numTaskqueueReadPartitions:\n\s+- value: 1/);
    const info = await call(server!.address, { tls: await tlsWith(pki, pki.client) }, (c) => c.workflowService.getSystemInfo({}));
    expect(info.capabilities?.eagerWorkflowStart).toBe(true);
  });

  test.each([
    ['a client certificate of another CA', (p: TestPki) => tlsWith(p, p.foreignClient), /alert unknown ca/],
    ['no client certificate', (p: TestPki) => tlsWith(p, null), /alert certificate required/],
  ])('refuses %s in the TLS handshake', async (_what, tls, alert) => {
    const result = await outcome(call(server!.address, { tls: await tls(pki) }, (c) => c.workflowService.describeNamespace({ namespace: 'default' })));
    // 14 = UNAVAILABLE: the handshake fails, no call reaches the server; the TLS alert says why.
    expect(result).toMatchObject({ code: 14, message: expect.stringMatching(alert) });
  });

  test('refuses a plain (non-TLS) client', async () => {
    const result = await outcome(call(server!.address, { tls: false }, (c) => c.workflowService.describeNamespace({ namespace: 'default' })));
    expect(result).toMatchObject({ code: 14 });
  });

  test('a client that does not trust the CA of the server refuses it', async () => {
    const tls = await tlsWith(pki, pki.client, pki.foreignCa);
    const result = await outcome(call(server!.address, { tls }, (c) => c.workflowService.describeNamespace({ namespace: 'default' })));
    expect(result).toMatchObject({ code: 14, message: expect.stringMatching(/certificate/i) });
  });

  test('stop() ends the server and frees its port', async () => {
    const s = server!;
    server = undefined;
    await s.stop();
    expect(() => process.kill(s.pid, 0)).toThrow();
    expect(await isPortFree(Number(s.address.split(':')[1]))).toBe(true);
  });
});

describe('startTemporalServer: authorization with JWTs from a JWKS URL', () => {
  let dir: string;
  let pki: TestPki;
  let server: TemporalServer | undefined;
  let jwks: http.Server | undefined;
  let sign: (permissions: string[]) => Promise<string>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-temporal-server-auth-test-'));
    pki = await createTestPki(dir);
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const kid = randomUUID();
    const body = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] });
    jwks = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await new Promise<void>((resolve) => jwks!.listen(0, '127.0.0.1', resolve));
    const jwksUrl = `http://127.0.0.1:${(jwks.address() as { port: number }).port}/.well-known/jwks.json`;
    sign = (permissions) =>
      new SignJWT({ permissions }).setProtectedHeader({ alg: 'ES256', kid }).setSubject('weft-test').setIssuedAt().setExpirationTime('1h').sign(privateKey);

    const binary = await resolveBinary('temporal-server', { explicitPath: binaries['temporal-server'], cacheDir: binaries.cacheDir });
    server = await startTemporalServer({
      binary,
      tls: { certPath: pki.server.certPath, keyPath: pki.server.keyPath, clientCaPaths: [pki.ca.certPath] },
      client: { certPath: pki.client.certPath, keyPath: pki.client.keyPath, serverCaPath: pki.ca.certPath },
      authorization: { jwksUrl },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await new Promise((resolve) => jwks?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const addSearchAttribute = (name: string) => (c: Connection) =>
    c.operatorService.addSearchAttributes({ namespace: 'default', searchAttributes: { [name]: 3 /* INDEXED_VALUE_TYPE_KEYWORD */ } });

  test('a namespace writer may work in the namespace but not register search attributes', async () => {
    const tls = await tlsWith(pki, pki.client);
    const apiKey = await sign(['default:write']);
    const described = await call(server!.address, { tls, apiKey }, (c) => c.workflowService.describeNamespace({ namespace: 'default' }));
    expect(described.namespaceInfo?.name).toBe('default');
    const refused = await outcome(call(server!.address, { tls, apiKey }, addSearchAttribute('WeftWriterTried')));
    // 7 = PERMISSION_DENIED
    expect(refused).toMatchObject({ code: 7 });
  });

  test('a system admin may register search attributes', async () => {
    const tls = await tlsWith(pki, pki.client);
    const apiKey = await sign(['temporal-system:admin']);
    await call(server!.address, { tls, apiKey }, addSearchAttribute('WeftAdminAdded'));
    const listed = await call(server!.address, { tls, apiKey }, (c) => c.operatorService.listSearchAttributes({ namespace: 'default' }));
    expect(Object.keys(listed.customAttributes ?? {})).toContain('WeftAdminAdded');
  });

  test('a call without a token, or with a token of an unknown key, is refused', async () => {
    const tls = await tlsWith(pki, pki.client);
    const describe = (c: Connection) => c.workflowService.describeNamespace({ namespace: 'default' });
    expect(await outcome(call(server!.address, { tls }, describe))).toMatchObject({ code: 7 });
    const { privateKey: otherKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ permissions: ['temporal-system:admin'] })
      .setProtectedHeader({ alg: 'ES256', kid: 'not-in-the-jwks' })
      .setSubject('intruder')
      .setExpirationTime('1h')
      .sign(otherKey);
    expect(await outcome(call(server!.address, { tls, apiKey: forged }, describe))).toMatchObject({ code: 7 });
  });
});
