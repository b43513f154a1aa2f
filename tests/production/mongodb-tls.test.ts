import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveBinary } from '../../scripts/infra/binaries';
import { startFerretDB, type FerretDBServer } from '../../scripts/infra/ferretdb-server';
import { getFreePorts } from '../../scripts/infra/free-port';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { connectMongo, mongoClientOptions } from '../../store/mongo-client';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { createTestPki, type TestPki } from '../support/test-pki';

/**
 * MONGODB_URI with TLS, as an operator of MongoDB Atlas or a TLS replica set writes it: the
 * whole of Weft (API, worker, a Luma sync, records read back) on FerretDB's TLS listener, with
 * a CA of the test's own and a client certificate that the server requires; and each wrong
 * piece refused at connect with `database_unavailable`, not later.
 */
describe('MongoDB over TLS', () => {
  let dir: string;
  let pki: TestPki;
  let ferretdb: FerretDBServer;
  let tlsPort: number;
  /** Client certificate and key in one PEM file, as the driver's tlsCertificateKeyFile takes them. */
  let clientPem: string;
  let foreignPem: string;
  const uri = (params: string) => `mongodb://localhost:${tlsPort}/?${params}`;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-mongo-tls-'));
    pki = await createTestPki(path.join(dir, 'pki'));
    clientPem = path.join(dir, 'client.pem');
    foreignPem = path.join(dir, 'foreign-client.pem');
    await writeFile(clientPem, pki.client.cert + pki.client.key);
    await writeFile(foreignPem, pki.foreignClient.cert + pki.foreignClient.key);
    const { binaries } = infraOptionsFromEnv();
    const binary = await resolveBinary('ferretdb', { explicitPath: binaries.ferretdb, cacheDir: binaries.cacheDir });
    const [port, debugPort, tls] = await getFreePorts(3);
    tlsPort = tls;
    ferretdb = await startFerretDB({
      binary,
      port,
      debugPort,
      dataDir: path.join(dir, 'data'),
      stateDir: path.join(dir, 'state'),
      logLevel: 'error',
      tls: { port: tlsPort, certFile: pki.server.certPath, keyFile: pki.server.keyPath, caFile: pki.ca.certPath },
    });
  }, 60_000);
  afterAll(async () => {
    await ferretdb?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  describe('Weft on a TLS URI', () => {
    let stack: WeftStack;
    beforeAll(async () => {
      stack = await startWeftStack({
        luma: { seed: 3, eventCount: 40 },
        env: { MONGODB_URI: uri(`tls=true&tlsCAFile=${pki.ca.certPath}&tlsCertificateKeyFile=${clientPem}`) },
      });
      await createLumaIntegration(stack);
    }, 60_000);
    afterAll(async () => stack?.shutdown());

    test('a connection syncs and its records are served, every write acknowledged by majority', async () => {
      const created = await stack.client.POST('/connections', {
        body: { provider_config_key: 'luma', connection_id: 'tls-user', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' } },
      });
      expect(created.response.status).toBe(201);
      const summary: any = await stack.waitForSync('tls-user', 'list-events');
      expect(summary.result.CalendarEvent).toEqual({ added: 40, updated: 0, deleted: 0 });
      const page = await stack.client.GET('/records', {
        params: { query: { model: 'CalendarEvent', limit: 100 } as never, header: { 'Connection-Id': 'tls-user', 'Provider-Config-Key': 'luma' } as never },
      });
      expect((page.data as { records: unknown[] }).records).toHaveLength(40);
      // The core's client is the one on the TLS listener, with Weft's write concern.
      expect(stack.core.mongo.options.tls).toBe(true);
      expect(stack.core.mongo.options.writeConcern?.w).toBe('majority');
    });
  });

  test.each([
    ['plain TCP to the TLS port', () => uri('serverSelectionTimeoutMS=1500')],
    ['no client certificate', () => uri(`tls=true&tlsCAFile=${pki.ca.certPath}&serverSelectionTimeoutMS=1500`)],
    [
      'a client certificate of another CA',
      () => uri(`tls=true&tlsCAFile=${pki.ca.certPath}&tlsCertificateKeyFile=${foreignPem}&serverSelectionTimeoutMS=1500`),
    ],
    [
      'a server CA the client does not trust',
      () => uri(`tls=true&tlsCAFile=${pki.foreignCa.certPath}&tlsCertificateKeyFile=${clientPem}&serverSelectionTimeoutMS=1500`),
    ],
  ])('%s: refused at connect with database_unavailable naming the host', async (_what, badUri) => {
    const refused = connectMongo(badUri());
    await expect(refused).rejects.toMatchObject({ code: 'database_unavailable', message: expect.stringContaining(`localhost:${tlsPort}`) });
  });

  test('what the URI says wins over Weft defaults; unnamed options get them', () => {
    const defaults = mongoClientOptions('mongodb://db.example:27017/');
    expect(defaults).toMatchObject({ writeConcern: { w: 'majority' }, retryWrites: false, connectTimeoutMS: 5_000 });
    const named = mongoClientOptions('mongodb://a:27017,b:27017/?replicaSet=rs0&w=1&retryWrites=true&connectTimeoutMS=20000', {
      serverSelectionTimeoutMs: 900,
    });
    expect(named.writeConcern).toBeUndefined();
    expect(named.retryWrites).toBeUndefined();
    expect(named.connectTimeoutMS).toBeUndefined();
    expect(named.serverSelectionTimeoutMS).toBe(900);
  });

  test('a refused connection never shows the password of the URI', async () => {
    const refused = connectMongo(`mongodb://weft:s3cret-passw0rd@localhost:${tlsPort}/?serverSelectionTimeoutMS=1000`);
    const err = await refused.catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'database_unavailable' });
    expect(String((err as Error).message)).not.toContain('s3cret-passw0rd');
  });
});
