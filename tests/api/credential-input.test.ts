import { createLumaIntegration, createOneDriveIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { rawRequest } from '../fuzz/raw-request';

/**
 * A secret that Weft would put into a header of a provider call (API key, bearer token) and
 * that cannot be a header value is the caller's mistake: 400 before any provider call, not
 * a 424 "verification failed" after the HTTP client refused to send it.
 */
const unsendable: [string, string][] = [
  ['a control character', 'sandbox-luma\u0001-api-key'],
  ['a line break (header injection)', 'sandbox-luma-api-key\r\nx-injected: 1'],
  ['a NUL', 'sandbox-luma-api-key\u0000'],
  ['a tab', 'sandbox\tluma'],
  ['a non-Latin-1 character', 'sandbox-luma-api-key-✓'],
  ['a trailing space', 'sandbox-luma-api-key '],
];

describe('credentials that end up in a header', () => {
  let stack: WeftStack;
  const db = () => stack.core.mongo.db(stack.env.MONGODB_DB);
  const counts = async () => ({
    connections: await db().collection('connections').countDocuments({}),
    luma: stack.luma.stats().requests,
  });

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false, graph: {} });
    await createLumaIntegration(stack);
    await createOneDriveIntegration(stack);
  });
  afterAll(async () => {
    await stack?.shutdown();
  });

  test.each(unsendable)('POST /connections with an API key containing %s: 400, Luma never called, nothing stored', async (_name, apiKey) => {
    const before = await counts();
    const res = await stack.api('POST', '/connections', { body: { provider_config_key: 'luma', credentials: { type: 'API_KEY', apiKey } } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_body');
    expect(res.body.error.errors[0].path).toBe('credentials.apiKey');
    expect(await counts()).toEqual(before);
  });

  test.each(unsendable)('POST /connections with an OAuth access token containing %s: 400, nothing stored', async (_name, token) => {
    const before = await counts();
    const res = await stack.api('POST', '/connections', { body: { provider_config_key: 'one-drive', credentials: { type: 'OAUTH2', access_token: token } } });
    expect(res.status).toBe(400);
    expect(res.body.error.errors[0].path).toBe('credentials.access_token');
    expect(await counts()).toEqual(before);
  });

  test('an API key of printable ASCII (spaces inside allowed) still goes to the provider', async () => {
    const before = await counts();
    const res = await stack.api('POST', '/connections', { body: { provider_config_key: 'luma', credentials: { type: 'API_KEY', apiKey: 'not a real key' } } });
    // Luma answers 401 for an unknown key: refused by the provider, not by the schema.
    expect(res.body.error.code).toBe('invalid_credentials');
    expect(stack.luma.stats().requests).toBe(before.luma + 1);
  });

  describe('the Connect page (session token as credential)', () => {
    let token: string;
    beforeAll(async () => {
      const res = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: ['luma'] } });
      token = res.body.data.token;
    });

    test.each(unsendable)('POST /api-auth/api-key/luma with a key containing %s: 400, Luma never called', async (_name, apiKey) => {
      const before = await counts();
      const res = await rawRequest(stack.apiUrl, {
        method: 'POST',
        path: `/api-auth/api-key/luma?connect_session_token=${encodeURIComponent(token)}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey }),
      });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('invalid_body');
      expect(await counts()).toEqual(before);
    });

    test('the form with a key containing a control character: a 400 page, Luma never called', async () => {
      const before = await counts();
      const res = await rawRequest(stack.apiUrl, {
        method: 'POST',
        path: '/connect/api-key/luma',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ connect_session_token: token, apiKey: 'sandbox-luma\u0007-api-key' }).toString(),
      });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(await counts()).toEqual(before);
    });
  });
});
