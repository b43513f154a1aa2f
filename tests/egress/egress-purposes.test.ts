import { loadConfig } from '../../common/config';
import { CredentialsOverHttpError, EgressRefusedError } from '../../egress/errors';
import { createEgresses, legacyAllowWarning } from '../../egress/settings';
import { startRecordingServer, type RecordingServer } from './recording-server';

/**
 * One allow-list per purpose, on real sockets: an internal server opened for webhooks is
 * not reachable as a provider, and the other way round. Neither server may even see a
 * connection from the egress it is not allowed for.
 */
describe('egress by purpose', () => {
  let internalHooks: RecordingServer;
  let internalApi: RecordingServer;

  beforeAll(async () => {
    internalHooks = await startRecordingServer();
    internalApi = await startRecordingServer();
  });

  afterAll(async () => {
    for (const s of [internalHooks, internalApi]) await s?.close();
  });

  const build = (env: Record<string, string>) => createEgresses(loadConfig(env));

  test('an address allowed for webhooks only: webhooks reach it, providers are refused naming WEFT_EGRESS_ALLOW_PROVIDERS', async () => {
    const egress = build({ WEFT_EGRESS_ALLOW_WEBHOOKS: internalHooks.hostPort });
    try {
      const before = internalHooks.connections;
      const err = await egress.providers.request(`${internalHooks.url}/internal`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EgressRefusedError);
      expect((err as EgressRefusedError).code).toBe('egress_refused');
      expect((err as EgressRefusedError).message).toContain(`add ${internalHooks.hostPort} (or a CIDR) to WEFT_EGRESS_ALLOW_PROVIDERS`);
      expect((err as EgressRefusedError).details).toMatchObject({ egress: { allow_variable: 'WEFT_EGRESS_ALLOW_PROVIDERS' } });
      expect(internalHooks.connections).toBe(before);

      expect((await egress.webhooks.request(`${internalHooks.url}/hook`, { method: 'POST', body: '{}' })).status).toBe(200);
      expect(internalHooks.requests.at(-1)).toMatchObject({ method: 'POST', url: '/hook' });
    } finally {
      await egress.close();
    }
  });

  test('an address allowed for providers only: providers reach it, webhooks are refused naming WEFT_EGRESS_ALLOW_WEBHOOKS', async () => {
    const egress = build({ WEFT_EGRESS_ALLOW_PROVIDERS: internalApi.hostPort });
    try {
      expect((await egress.providers.request(`${internalApi.url}/v1/me`)).status).toBe(200);
      const before = internalApi.connections;
      const err = await egress.webhooks.request(`${internalApi.url}/hook`, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EgressRefusedError);
      expect((err as EgressRefusedError).message).toContain('to WEFT_EGRESS_ALLOW_WEBHOOKS');
      expect(internalApi.connections).toBe(before);
    } finally {
      await egress.close();
    }
  });

  test('registration checks (checkUrl) use the list of the purpose: 400 egress_refused naming its variable', async () => {
    const egress = build({ WEFT_EGRESS_ALLOW_WEBHOOKS: '10.0.0.0/8', WEFT_EGRESS_ALLOW_PROVIDERS: '192.168.7.0/24' });
    try {
      expect(() => egress.webhooks.checkUrl('http://10.1.2.3/hook', 'webhook_url')).not.toThrow();
      const asProvider = (() => {
        try {
          egress.providers.checkUrl('http://10.1.2.3/', 'provider_overrides.base_url');
        } catch (e) {
          return e;
        }
      })() as EgressRefusedError;
      expect(asProvider).toBeInstanceOf(EgressRefusedError);
      expect(asProvider.status).toBe(400);
      expect(asProvider.message).toMatch(/^provider_overrides\.base_url: egress to 10\.1\.2\.3 port 80 refused by the "private" rule/);
      expect(asProvider.message).toContain('WEFT_EGRESS_ALLOW_PROVIDERS');

      expect(() => egress.providers.checkUrl('http://192.168.7.9/', 'provider_overrides.auth_base_url')).not.toThrow();
      expect(() => egress.webhooks.checkUrl('http://192.168.7.9/hook', 'webhook_url')).toThrow(/WEFT_EGRESS_ALLOW_WEBHOOKS/);
    } finally {
      await egress.close();
    }
  });

  test('the legacy WEFT_EGRESS_ALLOW still applies to both purposes, and start-up warns naming the new variables', async () => {
    const config = loadConfig({ WEFT_EGRESS_ALLOW: internalHooks.hostPort });
    const egress = createEgresses(config);
    try {
      expect((await egress.webhooks.request(`${internalHooks.url}/hook`)).status).toBe(200);
      expect((await egress.providers.request(`${internalHooks.url}/api`)).status).toBe(200);
    } finally {
      await egress.close();
    }
    const warning = legacyAllowWarning(config);
    expect(warning).toContain('WEFT_EGRESS_ALLOW is deprecated');
    expect(warning).toContain(internalHooks.hostPort);
    expect(warning).toContain('WEFT_EGRESS_ALLOW_WEBHOOKS');
    expect(warning).toContain('WEFT_EGRESS_ALLOW_PROVIDERS');
    expect(legacyAllowWarning(loadConfig({ WEFT_EGRESS_ALLOW_WEBHOOKS: internalHooks.hostPort }))).toBeNull();
  });

  test('credentials over plain http only to a host:port the providers list names exactly; https always', async () => {
    const egress = build({ WEFT_EGRESS_ALLOW_PROVIDERS: `${internalApi.hostPort},10.0.0.0/8,192.168.1.5`, WEFT_EGRESS_ALLOW_WEBHOOKS: internalHooks.hostPort });
    try {
      const refusal = (url: string) => {
        try {
          egress.providers.checkCredentialTransport(url, 'base_url');
          return null;
        } catch (e) {
          return e as CredentialsOverHttpError;
        }
      };
      expect(refusal('https://api.example.com/v1')).toBeNull();
      expect(refusal('https://10.1.2.3/v1')).toBeNull();
      expect(refusal(`${internalApi.url}/v1`)).toBeNull();
      for (const url of ['http://api.example.com/v1', 'http://10.1.2.3/v1', 'http://192.168.1.5/v1', `${internalHooks.url}/v1`]) {
        const err = refusal(url);
        expect(err).toBeInstanceOf(CredentialsOverHttpError);
        expect(err).toMatchObject({ code: 'credentials_over_http_refused', status: 424, retryable: false });
        expect(err?.message).toContain('WEFT_EGRESS_ALLOW_PROVIDERS');
      }
    } finally {
      await egress.close();
    }
  });
});
