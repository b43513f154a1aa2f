import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * Metadata, connection config and tags are stored as given, so what MongoDB or FerretDB
 * would refuse (or read as an update path) is refused first: 400 with the offending path,
 * before anything is written and before the provider is called.
 */
const deep = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};

const badObjects: [string, Record<string, unknown>, string][] = [
  ['a $ key', { $where: 'x' }, '$where'],
  ['a $ key deep inside', { a: { b: [{ $gt: 1 }] } }, 'a.b.0.$gt'],
  ['a dotted key', { 'a.b': 1 }, 'a.b'],
  ['a dotted key inside', { a: { 'x.y': 1 } }, 'a.x.y'],
  ['a NUL in a key', { 'a\u0000b': 1 }, 'a\u0000b'],
  ['an empty key', { '': 1 }, ''],
  ['an array directly in an array', { a: [1, [2]] }, 'a.1'],
  ['nesting past the limit', { d: deep(40) }, 'd.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a'],
  ['too many keys', Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i])), '(root)'],
  ['more than 64 KB', { blob: 'x'.repeat(65 * 1024) }, '(root)'],
];

describe('free-form objects (metadata, connection_config, tags)', () => {
  let stack: WeftStack;
  const db = () => stack.core.mongo.db(stack.env.MONGODB_DB);
  const connections = async () => (await db().collection('connections').find({}).toArray()).length;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    await stack?.shutdown();
  });

  const createConnection = (extra: Record<string, unknown>) =>
    stack.api('POST', '/connections', { body: { provider_config_key: 'luma', credentials: { type: 'API_KEY', apiKey: 'sandbox-luma-api-key' }, ...extra } });

  describe.each(['metadata', 'connection_config'])('POST /connections %s', (field) => {
    test.each(badObjects)('%s: 400 invalid_body naming the path; nothing stored, the provider not called', async (_name, value, path) => {
      const before = { connections: await connections(), providerRequests: stack.luma.stats().requests };
      const res = await createConnection({ [field]: value });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_body');
      expect(res.body.error.errors.map((e: { path: string }) => e.path)).toContain(path === '(root)' ? field : `${field}.${path}`);
      expect(await connections()).toBe(before.connections);
      expect(stack.luma.stats().requests).toBe(before.providerRequests);
    });

    test('a non-finite number (1e400 reads as Infinity) is refused', async () => {
      const res = await stack.api('POST', '/connections', {
        body: `{"provider_config_key":"luma","credentials":{"type":"API_KEY","apiKey":"sandbox-luma-api-key"},"${field}":{"n":1e400}}`,
      });
      expect(res.status).toBe(400);
      expect(res.body.error.errors[0].path).toBe(`${field}.n`);
    });
  });

  test('tags: $, dotted, NUL and empty keys, more than 64 tags, are refused', async () => {
    for (const tags of [
      { $x: 'a' },
      { 'a.b': 'a' },
      { 'a\u0000': 'a' },
      { '': 'a' },
      Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`t${i}`, 'v'])),
    ]) {
      const res = await createConnection({ tags });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_body');
    }
  });

  test('what both servers store is accepted as given: nested objects, arrays of objects, unicode keys, 32 levels', async () => {
    const metadata = { plan: 'pro', seats: 3, nested: { list: [{ a: 1 }, { b: [1, 2] }], 'clé-é': 'v', '0': 'zero' }, deep: deep(31) };
    const res = await createConnection({
      connection_id: 'accepted',
      metadata,
      connection_config: { tenant: 'contoso' },
      tags: { 'end-user': 'u1', 'org:id': 'o1' },
    });
    expect(res.status).toBe(201);
    const stored = await db().collection('connections').findOne({ connection_id: 'accepted' });
    expect(stored?.metadata).toEqual(metadata);
  });

  describe('POST/PATCH /connections/metadata', () => {
    beforeAll(async () => {
      const res = await createConnection({ connection_id: 'meta', metadata: { keep: 1, nested: { x: 1, y: 2 } } });
      expect(res.status).toBe(201);
    });
    const metadataOf = async () => (await db().collection('connections').findOne({ connection_id: 'meta' }))?.metadata;

    test.each(badObjects)('PATCH with %s: 400 naming the path, the metadata unchanged', async (_name, value, path) => {
      const before = await metadataOf();
      const res = await stack.api('PATCH', '/connections/metadata', { body: { connection_id: 'meta', provider_config_key: 'luma', metadata: value } });
      expect(res.status).toBe(400);
      expect(res.body.error.errors.map((e: { path: string }) => e.path)).toContain(path === '(root)' ? 'metadata' : `metadata.${path}`);
      expect(await metadataOf()).toEqual(before);
    });

    test('PATCH {"a.b":1} is refused and writes nothing into a nested object', async () => {
      const res = await stack.api('PATCH', '/connections/metadata', {
        body: { connection_id: 'meta', provider_config_key: 'luma', metadata: { 'nested.x': 99 } },
      });
      expect(res.status).toBe(400);
      expect((await metadataOf()).nested).toEqual({ x: 1, y: 2 });
    });

    test('PATCH merges one level: given keys replace their whole value, other keys stay', async () => {
      const res = await stack.api('PATCH', '/connections/metadata', {
        body: { connection_id: 'meta', provider_config_key: 'luma', metadata: { nested: { z: 3 }, added: true } },
      });
      expect(res.status).toBe(200);
      expect(await metadataOf()).toEqual({ keep: 1, nested: { z: 3 }, added: true });
    });

    test('POST replaces the whole object', async () => {
      const res = await stack.api('POST', '/connections/metadata', {
        body: { connection_id: 'meta', provider_config_key: 'luma', metadata: { only: 'this' } },
      });
      expect(res.status).toBe(200);
      expect(await metadataOf()).toEqual({ only: 'this' });
    });

    test('the store refuses a dotted merge key itself, should a caller skip the API schema', async () => {
      const doc = await db().collection('connections').findOne({ connection_id: 'meta' });
      await expect(stack.core.stores.connections.updateMetadata(String(doc!._id), { 'only.x': 1 }, 'merge')).rejects.toMatchObject({
        code: 'invalid_metadata_key',
        status: 400,
      });
      expect(await metadataOf()).toEqual({ only: 'this' });
    });
  });

  describe('POST /connect/sessions', () => {
    const sessions = async () => (await db().collection('connect_sessions').find({}).toArray()).length;

    test('defaults for an integration whose key has a dot (allowed in unique keys) are stored and read back', async () => {
      expect(
        (await stack.api('POST', '/integrations', { body: { unique_key: 'my.luma', provider: 'luma', provider_overrides: { base_url: stack.luma.url } } }))
          .status,
      ).toBe(201);
      const defaults = { 'my.luma': { connection_config: { region: 'eu' } }, luma: { authorization_params: { prompt: 'consent' } } };
      const res = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: ['my.luma', 'luma'], integrations_config_defaults: defaults } });
      expect(res.status).toBe(201);
      expect((await stack.core.stores.connectSessions.find(res.body.data.token))?.integrations_config_defaults).toEqual(defaults);
    });

    test.each([
      ['tags with a $ key', { tags: { $ne: 'x' } }, 'tags.$ne'],
      ['tags with a dotted key', { tags: { 'a.b': 'x' } }, 'tags.a.b'],
      [
        'connection_config defaults with a $ key',
        { integrations_config_defaults: { luma: { connection_config: { a: { $gt: 1 } } } } },
        'integrations_config_defaults.luma.connection_config.a.$gt',
      ],
      [
        'connection_config defaults with nested arrays',
        { integrations_config_defaults: { luma: { connection_config: { a: [[1]] } } } },
        'integrations_config_defaults.luma.connection_config.a.0',
      ],
      ['connection_config defaults past the depth limit', { integrations_config_defaults: { luma: { connection_config: { d: deep(40) } } } }, undefined],
    ])('%s: 400 with the path, no session stored', async (_name, body, path) => {
      const before = await sessions();
      const res = await stack.api('POST', '/connect/sessions', { body });
      expect(res.status).toBe(400);
      if (path) expect(res.body.error.errors.map((e: { path: string }) => e.path)).toContain(path);
      expect(await sessions()).toBe(before);
    });
  });
});
