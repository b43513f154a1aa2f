import { describeIdentity, identityHash, mockFileName, pathSlug, requestIdentity } from '../../runtime/mocks/request-identity';

const graph = { providerBaseUrl: 'https://graph.microsoft.com' };

describe('request identity', () => {
  it('names a Graph listing GET-v1-0-me-drives-<12 hex>.json', () => {
    const identity = requestIdentity({ method: 'GET', endpoint: '/v1.0/me/drives' }, graph);
    expect(identity).toEqual({ method: 'GET', path: '/v1.0/me/drives', query: [], headers: [], body: null });
    expect(mockFileName(identity)).toMatch(/^GET-v1-0-me-drives-[0-9a-f]{12}\.json$/);
    expect(identityHash(identity)).toHaveLength(12);
  });

  it('upper-cases the method (GET when none is given) and joins a relative endpoint to the base URL path', () => {
    const identity = requestIdentity({ method: 'post' as 'POST', endpoint: 'calendar/list-events' }, { providerBaseUrl: 'https://api.example.com/public/v1/' });
    expect(identity.method).toBe('POST');
    expect(identity.path).toBe('/public/v1/calendar/list-events');
    expect(requestIdentity({ endpoint: '/x' }, graph).method).toBe('GET');
  });

  it("takes a full URL's path and query (a followed @odata.nextLink), whatever its host", () => {
    const a = requestIdentity({ endpoint: 'https://graph.microsoft.com/v1.0/me/drive/root/delta?$skiptoken=abc&$top=1000' }, graph);
    const b = requestIdentity({ endpoint: 'http://127.0.0.1:3011/v1.0/me/drive/root/delta?$top=1000&$skiptoken=abc' }, graph);
    expect(a.path).toBe('/v1.0/me/drive/root/delta');
    expect(a.query).toEqual([
      ['$skiptoken', 'abc'],
      ['$top', '1000'],
    ]);
    expect(identityHash(a)).toBe(identityHash(b));
  });

  it('sorts the query: the endpoint’s own and params (arrays repeat the key; undefined is left out; a param replaces the same key)', () => {
    const identity = requestIdentity(
      { endpoint: '/items?z=1&a=2&state=old', params: { state: 'open', labels: ['b', 'a'], none: undefined, per_page: 100 } },
      graph,
    );
    expect(identity.query).toEqual([
      ['a', '2'],
      ['labels', 'a'],
      ['labels', 'b'],
      ['per_page', '100'],
      ['state', 'open'],
      ['z', '1'],
    ]);
  });

  it('keeps meaningful headers lower-cased and sorted, and leaves out credentials, transport and Weft control headers', () => {
    const identity = requestIdentity(
      {
        endpoint: '/x',
        headers: {
          Prefer: 'respond-async',
          'Content-Type': 'application/json',
          Authorization: 'Bearer t0ken-value',
          'x-luma-api-key': 'key-value-123',
          'User-Agent': 'weft',
          Accept: 'application/json',
          'Accept-Encoding': 'gzip',
          'Content-Length': '12',
          Host: 'graph.microsoft.com',
          'Connection-Id': 'c1',
          'Provider-Config-Key': 'one-drive',
          'Weft-Proxy-Foo': 'bar',
          Retries: '3',
          'Base-Url-Override': 'http://x',
        },
      },
      { ...graph, secretHeaders: ['x-luma-api-key'] },
    );
    expect(identity.headers).toEqual([
      ['content-type', 'application/json'],
      ['prefer', 'respond-async'],
    ]);
  });

  it('hashes alike what the provider sees alike, and apart what it does not', () => {
    const hash = (c: Parameters<typeof requestIdentity>[0]) => identityHash(requestIdentity(c, graph));
    const base = hash({ method: 'POST', endpoint: '/a', data: { name: 'x', folder: {} } });
    expect(hash({ method: 'POST', endpoint: '/a', data: { folder: {}, name: 'x' }, headers: { authorization: 'Bearer other' } })).toBe(base);
    expect(hash({ method: 'POST', endpoint: '/a', data: { name: 'y', folder: {} } })).not.toBe(base);
    expect(hash({ method: 'PUT', endpoint: '/a', data: { name: 'x', folder: {} } })).not.toBe(base);
    expect(hash({ method: 'POST', endpoint: '/a', params: { q: 1 }, data: { name: 'x', folder: {} } })).not.toBe(base);
    expect(hash({ method: 'POST', endpoint: '/a', headers: { prefer: 'x' }, data: { name: 'x', folder: {} } })).not.toBe(base);
  });

  it('keeps a short body as canonical JSON and identifies a long or binary one by its SHA-256', () => {
    expect(requestIdentity({ method: 'POST', endpoint: '/a', data: { b: 1, a: [1, 2] } }, graph).body).toBe('{"a":[1,2],"b":1}');
    const long = requestIdentity({ method: 'POST', endpoint: '/a', data: { text: 'x'.repeat(1_000) } }, graph).body;
    expect(long).toMatch(/^sha256:[0-9a-f]{64}$/);
    const bytes = requestIdentity({ method: 'PUT', endpoint: '/a', data: Buffer.from('hello') }, graph).body;
    expect(bytes).toBe('sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
  });

  it('redacts signed-URL secrets and literal secrets before hashing, so a redacted replay matches the recording', () => {
    const recorded = requestIdentity(
      { method: 'PUT', endpoint: 'https://contoso.sharepoint.com/_upload/session?guid=g1&tempauth=eyJsecret', data: { note: 'my-literal-secret' } },
      { ...graph, secrets: ['my-literal-secret'] },
    );
    expect(recorded.query).toEqual([
      ['guid', 'g1'],
      ['tempauth', expect.stringMatching(/^REDACTED-[0-9a-f]{8}$/)],
    ]);
    expect(recorded.body).toBe('{"note":"REDACTED"}');
    // What a test replays: the URL as the mock file holds it (its secret already replaced).
    const fingerprint = recorded.query[1][1];
    const replayed = requestIdentity(
      { method: 'PUT', endpoint: `https://contoso.sharepoint.com/_upload/session?guid=g1&tempauth=${fingerprint}`, data: { note: 'REDACTED' } },
      graph,
    );
    expect(identityHash(replayed)).toBe(identityHash(recorded));
    expect(describeIdentity(recorded)).toBe(`PUT /_upload/session?guid=g1&tempauth=${fingerprint}`);
  });

  it("keeps pages apart whose links differ only in a secret-looking parameter (Graph's delta `token`)", () => {
    const page = (token: string) => identityHash(requestIdentity({ endpoint: `https://graph.microsoft.com/v1.0/drives/d1/root/delta?token=${token}` }, graph));
    expect(page('aaaaaaaa')).not.toBe(page('bbbbbbbb'));
  });

  it('slugs a path: lower-case, runs of other characters as one dash, trimmed, at most 80 characters', () => {
    expect(pathSlug('/v1.0/me/drives')).toBe('v1-0-me-drives');
    expect(pathSlug('/repos/Octo-Org/Hello_World/pulls/7/commits')).toBe('repos-octo-org-hello-world-pulls-7-commits');
    expect(pathSlug('/drives/b!AbC%20x/items/')).toBe('drives-b-abc-20x-items');
    expect(pathSlug('/')).toBe('root');
    const long = pathSlug(`/${'segment/'.repeat(20)}`);
    expect(long.length).toBeLessThanOrEqual(80);
    expect(long).not.toMatch(/^-|-$/);
  });
});
