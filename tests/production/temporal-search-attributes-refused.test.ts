import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { MongoClient } from 'mongodb';
import { resolveBinary } from '../../scripts/infra/binaries';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startTemporalServer, type TemporalServer } from '../../scripts/infra/temporal-server';
import { testInfra } from '../support/weft-stack';
import { spawnWeft } from '../support/worker-process';
import { createTestPki, type TestPki } from '../support/test-pki';

const WEFT_ATTRIBUTES = ['WeftEnvironment', 'WeftIntegration', 'WeftConnectionId', 'WeftSyncName', 'WeftOperation'];

/**
 * A secured cluster where Weft's credentials may work in the namespace but not change it (as
 * a namespace-scoped key on Temporal Cloud): the start stops with
 * temporal_search_attributes_missing, naming the five attributes and the commands an admin
 * runs; with an admin's credentials the same start adds them. The server is the real Temporal
 * server with mTLS and JWT authorization (scripts/infra/temporal-server.ts); Weft reaches it
 * through Temporal's standard variables, its key as TEMPORAL_API_KEY.
 */
describe('search attributes on a cluster that may refuse them', () => {
  let dir: string;
  let pki: TestPki;
  let server: TemporalServer;
  let jwks: http.Server;
  let sign: (permissions: string[]) => Promise<string>;
  const dbName = `weft_sa_refused_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-sa-refused-'));
    pki = await createTestPki(path.join(dir, 'pki'));
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const kid = randomUUID();
    const body = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] });
    jwks = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    sign = (permissions) =>
      new SignJWT({ permissions }).setProtectedHeader({ alg: 'ES256', kid }).setSubject('weft').setIssuedAt().setExpirationTime('1h').sign(privateKey);
    const { binaries } = infraOptionsFromEnv();
    server = await startTemporalServer({
      binary: await resolveBinary('temporal-server', { explicitPath: binaries['temporal-server'], cacheDir: binaries.cacheDir }),
      tls: { certPath: pki.server.certPath, keyPath: pki.server.keyPath, clientCaPaths: [pki.ca.certPath] },
      client: { certPath: pki.client.certPath, keyPath: pki.client.keyPath, serverCaPath: pki.ca.certPath },
      authorization: { jwksUrl: `http://127.0.0.1:${(jwks.address() as { port: number }).port}/.well-known/jwks.json` },
    });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await new Promise((resolve) => jwks?.close(resolve));
    const mongo = new MongoClient(testInfra().mongodbUri);
    await mongo
      .connect()
      .then(() => mongo.db(dbName).dropDatabase())
      .catch(() => undefined);
    await mongo.close();
    await rm(dir, { recursive: true, force: true });
  });

  const weftEnv = (apiKey: string) => ({
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: server.namespace,
    TEMPORAL_API_KEY: apiKey,
    TEMPORAL_TLS_CLIENT_CERT_PATH: pki.client.certPath,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pki.client.keyPath,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca.certPath,
    TEMPORAL_TLS_SERVER_NAME: 'localhost',
    MONGODB_URI: testInfra().mongodbUri,
    MONGODB_DB: dbName,
    WEFT_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  });

  test("a namespace writer's start stops with temporal_search_attributes_missing, naming them and the commands", async () => {
    const apiKey = await sign(['default:write']);
    const setup = spawnWeft('setup', weftEnv(apiKey));
    expect(await setup.exited).toBe(1);
    const output = setup.output();
    expect(output).toContain('temporal_search_attributes_missing');
    for (const name of WEFT_ATTRIBUTES) expect(output).toContain(name);
    expect(output).toContain('temporal operator search-attribute create --namespace default');
    expect(output).toContain('tcld namespace search-attributes add');
    expect(output).not.toContain(apiKey);
  }, 90_000);

  test("with an admin's key the same start adds them, and a writer starts afterwards", async () => {
    const setup = spawnWeft('setup', weftEnv(await sign(['temporal-system:admin'])));
    const code = await setup.exited;
    if (code !== 0) throw new Error(`weft setup exited ${code}:\n${setup.output()}`);
    const again = spawnWeft('setup', weftEnv(await sign(['default:write'])));
    const againCode = await again.exited;
    if (againCode !== 0) throw new Error(`weft setup as a writer exited ${againCode}:\n${again.output()}`);
  }, 90_000);
});
