import zlib from 'node:zlib';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { rawRequest, type RawRequest } from '../fuzz/raw-request';

/**
 * Requests Weft cannot read (bad percent-encoding, a charset or encoding the parser does not
 * take, a body that is not JSON, a form with too many fields) are the caller's mistake: a
 * 4xx with a stable code, never a 500, and nothing changes.
 */
describe('reading requests', () => {
  let stack: WeftStack;
  let auth: Record<string, string>;
  const send = (req: RawRequest) => rawRequest(stack.apiUrl, req);
  const environment = async () => (await stack.api('GET', '/environment')).body.data;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
    auth = { authorization: `Bearer ${stack.keys.dev}` };
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    await stack?.shutdown();
  });

  describe('malformed percent-encoding in a path parameter', () => {
    test.each([
      ['/integrations/%zz', true],
      ['/integrations/a%E0%A4%A', true],
      ['/connections/%?provider_config_key=luma', true],
      ['/oauth/connect/%zz?connect_session_token=abc', false],
    ])('GET %s answers 400 invalid_path_encoding', async (path, withKey) => {
      const res = await send({ method: 'GET', path, headers: withKey ? auth : {} });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('invalid_path_encoding');
    });

    test('a well-formed escape still reaches the route', async () => {
      const res = await send({ method: 'GET', path: '/integrations/lu%6Da', headers: auth });
      expect(res.status).toBe(200);
      expect(res.json.data.unique_key).toBe('luma');
    });
  });

  describe('charsets', () => {
    test('a JSON body in a charset the parser does not take answers 415 unsupported_charset and changes nothing', async () => {
      const before = await environment();
      const res = await send({
        method: 'PATCH',
        path: '/environment',
        headers: { ...auth, 'content-type': 'application/json; charset=latin1' },
        body: '{"send_auth_webhooks":false}',
      });
      expect(res.status).toBe(415);
      expect(res.json.error.code).toBe('unsupported_charset');
      expect(await environment()).toEqual(before);
    });

    test('utf-8 given explicitly is fine', async () => {
      const res = await send({
        method: 'PATCH',
        path: '/environment',
        headers: { ...auth, 'content-type': 'application/json; charset=UTF-8' },
        body: '{"send_sync_completion_always":false}',
      });
      expect(res.status).toBe(200);
    });
  });

  describe('content encodings', () => {
    test.each(['gzip', 'deflate', 'br'])('Content-Encoding: %s on a body that is not compressed answers 400 invalid_content_encoding', async (encoding) => {
      const before = await environment();
      const res = await send({
        method: 'PATCH',
        path: '/environment',
        headers: { ...auth, 'content-type': 'application/json', 'content-encoding': encoding },
        body: '{"send_auth_webhooks":false}',
      });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('invalid_content_encoding');
      expect(await environment()).toEqual(before);
    });

    test('a truncated gzip body answers 400 invalid_content_encoding', async () => {
      const gz = zlib.gzipSync('{"send_auth_webhooks":false}');
      const res = await send({
        method: 'PATCH',
        path: '/environment',
        headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: gz.subarray(0, gz.length - 6),
      });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('invalid_content_encoding');
    });

    test.each(['compress', 'x-custom', 'gzip, br'])('an unsupported Content-Encoding (%s) answers 415 unsupported_content_encoding', async (encoding) => {
      const res = await send({
        method: 'PATCH',
        path: '/environment',
        headers: { ...auth, 'content-type': 'application/json', 'content-encoding': encoding },
        body: '{}',
      });
      expect(res.status).toBe(415);
      expect(res.json.error.code).toBe('unsupported_content_encoding');
    });

    test('a body that really is gzip-compressed is read', async () => {
      const res = await send({
        method: 'PATCH',
        path: '/environment',
        headers: { ...auth, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: zlib.gzipSync('{"send_sync_error_webhooks":false}'),
      });
      expect(res.status).toBe(200);
      expect(res.json.data.send_sync_error_webhooks).toBe(false);
      await stack.api('PATCH', '/environment', { body: { send_sync_error_webhooks: true } });
    });
  });

  describe('media types', () => {
    test.each([['text/plain'], ['application/x-www-form-urlencoded'], ['application/xml'], ['multipart/form-data; boundary=x'], ['application/json-patch']])(
      'a %s body on a JSON route answers 415 unsupported_media_type and changes nothing',
      async (type) => {
        const before = await environment();
        const res = await send({ method: 'PATCH', path: '/environment', headers: { ...auth, 'content-type': type }, body: '{"send_auth_webhooks":false}' });
        expect(res.status).toBe(415);
        expect(res.json.error.code).toBe('unsupported_media_type');
        expect(await environment()).toEqual(before);
      },
    );

    test('a body without any Content-Type answers 415', async () => {
      const res = await send({ method: 'POST', path: '/connect/sessions', headers: auth, body: '{}' });
      expect(res.status).toBe(415);
      expect(res.json.error.code).toBe('unsupported_media_type');
    });

    test('a POST without a body (Content-Length: 0) is not a body of the wrong type', async () => {
      const res = await send({ method: 'POST', path: '/environment/webhook-signing-key/rotate', headers: { ...auth, 'content-length': '0' } });
      expect(res.status).toBe(200);
    });

    test('invalid JSON answers 400 invalid_json without quoting the body', async () => {
      const res = await send({
        method: 'PATCH',
        path: '/environment',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"webhook_url": "secret-looking-value',
      });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('invalid_json');
      expect(res.text).not.toContain('secret-looking-value');
    });
  });

  describe('the Connect page form', () => {
    const form = (body: string) =>
      send({ method: 'POST', path: '/connect/api-key/luma', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });

    test('more than 1,000 form parameters answers 413 too_many_parameters', async () => {
      const res = await form(Array.from({ length: 1_001 }, (_, i) => `f${i}=1`).join('&'));
      expect(res.status).toBe(413);
      expect(res.json?.error?.code ?? res.text).toContain('too_many_parameters');
    });

    test('a form larger than 16 KB answers 413 body_too_large', async () => {
      const res = await form(`connect_session_token=x&apiKey=${'k'.repeat(17 * 1024)}`);
      expect(res.status).toBe(413);
    });

    test('a repeated connect_session_token (an array, not a string) answers 401, not 500', async () => {
      const res = await form('connect_session_token=a&connect_session_token=b&apiKey=x');
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text).toContain('invalid_connect_session');
    });

    test('a JSON body on the form route answers 415', async () => {
      const res = await send({
        method: 'POST',
        path: '/connect/api-key/luma',
        headers: { 'content-type': 'application/json' },
        body: '{"connect_session_token":"x","apiKey":"y"}',
      });
      expect(res.status).toBe(415);
    });

    test('a form body in an unsupported charset answers 415', async () => {
      const res = await send({
        method: 'POST',
        path: '/connect/api-key/luma',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=koi8-r' },
        body: 'connect_session_token=x&apiKey=y',
      });
      expect(res.status).toBe(415);
    });
  });

  describe('a Host header no URL can be built from', () => {
    test.each(['a b', 'weft_oauth_binding=x; a=b', 'host:99999'])('POST /connect/sessions with Host %j: 400 invalid_host, no session stored', async (host) => {
      const sessions = () => stack.core.mongo.db(stack.env.MONGODB_DB).collection('connect_sessions').countDocuments({});
      const before = await sessions();
      const res = await send({ method: 'POST', path: '/connect/sessions', headers: { ...auth, host, 'content-type': 'application/json' }, body: '{}' });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('invalid_host');
      expect(await sessions()).toBe(before);
    });
  });

  describe('POST /api-auth/api-key/:key', () => {
    test.each([['?connect_session_token[a]=1'], ['?connect_session_token=a&connect_session_token=b'], ['?connect_session_token[]=a']])(
      'a connect_session_token that is not a string (%s) answers 401',
      async (query) => {
        const res = await send({
          method: 'POST',
          path: `/api-auth/api-key/luma${query}`,
          headers: { 'content-type': 'application/json' },
          body: '{"apiKey":"x"}',
        });
        expect(res.status).toBe(401);
        expect(res.json.error.code).toBe('invalid_connect_session');
      },
    );
  });
});
