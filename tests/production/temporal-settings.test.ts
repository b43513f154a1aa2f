import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../common/config';
import { devServerTemporalEnv } from '../../common/temporal-settings';
import { requireServers } from '../../app/core';
import { connectOrExplain, temporalConnectionOptions } from '../../app/temporal-connection';
import { getFreePorts } from '../../scripts/infra/free-port';
import { createTestPki, type TestPki } from '../support/test-pki';

/** What the SDK makes of a profile's TLS table (certificates as bytes). */
interface TlsOptions {
  serverNameOverride?: string;
  serverRootCACertificate: Uint8Array;
  clientCertPair: { crt: Uint8Array; key: Uint8Array };
}

/**
 * Weft reads Temporal's settings as the `temporal` CLI and the SDKs do: a TOML profile,
 * overridden by the TEMPORAL_* variables. These check the reading and what each mistake
 * says; tests/infra/temporal-server.test.ts connects for real to a server requiring mTLS.
 */
describe("Temporal's environment configuration", () => {
  let dir: string;
  let pki: TestPki;
  let configFile: string;
  const API_KEY = 'tcld-api-key-that-must-stay-secret';

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'weft-temporal-settings-'));
    pki = await createTestPki(path.join(dir, 'pki'));
    configFile = path.join(dir, 'temporal.toml');
    await writeFile(
      configFile,
      [
        '[profile.default]',
        'address = "localhost:7233"',
        '',
        '[profile.cloud]',
        'address = "weft-prod.a1b2c.tmprl.cloud:7233"',
        'namespace = "weft-prod.a1b2c"',
        `api_key = "${API_KEY}"`,
        '',
        '[profile.mtls]',
        'address = "temporal.internal:7233"',
        'namespace = "weft"',
        '[profile.mtls.tls]',
        `client_cert_path = "${pki.client.certPath}"`,
        `client_key_path = "${pki.client.keyPath}"`,
        `server_ca_cert_path = "${pki.ca.certPath}"`,
        'server_name = "temporal.internal"',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  test('a profile of the file gives address, namespace and TLS; the certificates are read at connect', () => {
    const config = loadConfig({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'mtls' });
    expect(config.TEMPORAL_ADDRESS).toBe('temporal.internal:7233');
    expect(config.TEMPORAL_NAMESPACE).toBe('weft');
    const options = temporalConnectionOptions(config.temporal);
    expect(options.address).toBe('temporal.internal:7233');
    const tls = options.tls as TlsOptions;
    expect(tls.serverNameOverride).toBe('temporal.internal');
    expect(Buffer.from(tls.serverRootCACertificate).toString()).toBe(pki.ca.cert);
    expect(Buffer.from(tls.clientCertPair.crt).toString()).toBe(pki.client.cert);
    expect(Buffer.from(tls.clientCertPair.key).toString()).toBe(pki.client.key);
  });

  test('TEMPORAL_* variables override the profile; an API key turns TLS on and is sent as the key', () => {
    const config = loadConfig({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'cloud', TEMPORAL_NAMESPACE: 'other.a1b2c' });
    expect(config.TEMPORAL_ADDRESS).toBe('weft-prod.a1b2c.tmprl.cloud:7233');
    expect(config.TEMPORAL_NAMESPACE).toBe('other.a1b2c');
    const options = temporalConnectionOptions(config.temporal);
    expect(options.apiKey).toBe(API_KEY);
    expect(options.tls).toBe(true);
  });

  test('the variables alone, with certificate data inline (_DATA), as a container gets them from a secret store', () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_TLS_CLIENT_CERT_DATA: pki.client.cert,
      TEMPORAL_TLS_CLIENT_KEY_DATA: pki.client.key,
      TEMPORAL_TLS_SERVER_CA_CERT_DATA: pki.ca.cert,
    });
    const tls = temporalConnectionOptions(config.temporal).tls as TlsOptions;
    expect(Buffer.from(tls.clientCertPair.crt).toString()).toBe(pki.client.cert);
    expect(Buffer.from(tls.clientCertPair.key).toString()).toBe(pki.client.key);
    expect(Buffer.from(tls.serverRootCACertificate).toString()).toBe(pki.ca.cert);
    expect(config.TEMPORAL_NAMESPACE).toBe('default');
  });

  test('TEMPORAL_TLS=false with an API key sends the key over plain TCP (a local proxy), as the SDK does', () => {
    const config = loadConfig({ TEMPORAL_ADDRESS: '127.0.0.1:7233', TEMPORAL_API_KEY: API_KEY, TEMPORAL_TLS: 'false' });
    expect(temporalConnectionOptions(config.temporal).tls).toBe(false);
  });

  test('weft api and weft worker take the address from a profile', () => {
    const config = loadConfig({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'cloud', MONGODB_URI: 'mongodb://x/', WEFT_ENCRYPTION_KEY: 'k' });
    expect(() => requireServers(config, 'worker')).not.toThrow();
    expect(() => requireServers(loadConfig({ MONGODB_URI: 'mongodb://x/', WEFT_ENCRYPTION_KEY: 'k' }), 'api')).toThrow(
      expect.objectContaining({ code: 'api_not_configured', message: expect.stringContaining('TEMPORAL_ADDRESS') }),
    );
  });

  test.each([
    ['a profile the file lacks', { TEMPORAL_PROFILE: 'staging' }, /Profile 'staging' not found/],
    ['a config file that does not exist', { TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' }, /\/nonexistent\/temporal\.toml does not exist/],
  ])('%s stops the start with a configuration error', (_what, env, message) => {
    expect(() => loadConfig({ TEMPORAL_CONFIG_FILE: configFile, ...env })).toThrow(message);
  });

  test('a TOML syntax error says where, never the line (it may hold the API key)', async () => {
    const broken = path.join(dir, 'broken.toml');
    await writeFile(broken, `[profile.default]\naddress = "x:7233"\napi_key = "${API_KEY}\n`);
    let message = '';
    try {
      loadConfig({ TEMPORAL_CONFIG_FILE: broken });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/not valid TOML \(line 3/);
    expect(message).not.toContain(API_KEY);
  });

  test('an unreadable certificate file: temporal_config_invalid naming the path', () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'missing.crt'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.client.keyPath,
    });
    expect(() => temporalConnectionOptions(config.temporal)).toThrow(
      expect.objectContaining({ code: 'temporal_config_invalid', message: expect.stringContaining('missing.crt') }),
    );
  });

  test('nothing listening: the worker connection fails with temporal_unreachable naming the address', async () => {
    const [port] = await getFreePorts(1);
    const config = loadConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
    const connecting = connectOrExplain(config.temporal, () => NativeConnection.connect(temporalConnectionOptions(config.temporal)));
    await expect(connecting).rejects.toMatchObject({ code: 'temporal_unreachable', message: expect.stringContaining(`127.0.0.1:${port}`) });
  }, 60_000);

  test("a dev server started here: a child's environment drops the operator's other TEMPORAL_* settings and profile file", () => {
    const env = devServerTemporalEnv({ TEMPORAL_API_KEY: API_KEY, TEMPORAL_PROFILE: 'cloud', TEMPORAL_TLS: 'true', PATH: '/bin' }, '127.0.0.1:7999', 'default');
    const config = loadConfig(env);
    expect(config.temporal).toMatchObject({ address: '127.0.0.1:7999', namespace: 'default' });
    expect(config.temporal.apiKey).toBeUndefined();
    expect(config.temporal.tls).toBeUndefined();
    expect(env.PATH).toBe('/bin');
  });
});
