import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { writeMockRecording, type MockRecording } from '../../runtime/mocks/fixture-files';

const TOKEN = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.access-token-value';
const TEAMSITE_TOKEN = 'teamsite-token-value-0123456789';
const TEMPAUTH = 'v1.eyJzaXRlaWQiOiJ0ZW1wYXV0aC1zZWNyZXQifQ';
const CLIENT_SECRET = 'client-secret-value-xyz';
const AMZ_SIG = 'f3d2b1a0c9e8d7f6a5b4c3d2e1f0a9b8';

function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

function recording(projectDir: string, overrides: Partial<MockRecording> = {}): MockRecording {
  const base = 'https://graph.microsoft.com';
  const page = (n: number, next?: string) => ({
    status: 200,
    headers: {
      'content-type': 'application/json',
      'request-id': `req-${n}`,
      'set-cookie': `session=${TOKEN}`,
      'x-weft-request-id': 'w1',
      'x-ratelimit-remaining': '99',
      etag: `"e${n}"`,
    },
    data: {
      value: [
        {
          id: `item-${n}`,
          name: `file-${n}.txt`,
          '@microsoft.graph.downloadUrl': `https://contoso.sharepoint.com/_layouts/15/download.aspx?UniqueId=u${n}&tempauth=${TEMPAUTH}&ApiVersion=2.0`,
          s3: `https://bucket.s3.amazonaws.com/f?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=${AMZ_SIG}&x-id=GetObject`,
        },
      ],
      ...(next && { '@odata.nextLink': next }),
    },
  });
  return {
    projectDir,
    integration: 'one-drive',
    functionName: 'user-files',
    kind: 'sync',
    providerBaseUrl: base,
    secretHeaders: [],
    exchanges: [
      {
        request: { method: 'GET', endpoint: '/v1.0/me/drive/root/delta', params: { $top: 2 }, headers: { authorization: `Bearer ${TOKEN}` } },
        response: page(1, 'https://graph.microsoft.com/v1.0/me/drive/root/delta?$skiptoken=p2&$top=2'),
      },
      {
        request: { method: 'GET', endpoint: 'https://graph.microsoft.com/v1.0/me/drive/root/delta?$skiptoken=p2&$top=2', params: {} },
        response: page(2, 'https://graph.microsoft.com/v1.0/me/drive/root/delta?$skiptoken=p3&$top=2'),
      },
      {
        request: { method: 'GET', endpoint: 'https://graph.microsoft.com/v1.0/me/drive/root/delta?$skiptoken=p3&$top=2', params: {} },
        response: page(3),
      },
      {
        request: { method: 'POST', endpoint: '/oauth2/token', data: { client_secret: CLIENT_SECRET, grant_type: 'refresh_token' } },
        response: { status: 200, headers: {}, data: { access_token: TOKEN, note: `token is ${TEAMSITE_TOKEN}` } },
      },
    ],
    batchSave: { File: [{ id: 'item-1', url: `https://contoso.sharepoint.com/d?tempauth=${TEMPAUTH}` }] },
    batchDelete: { File: [{ id: 'gone' }], Other: [] },
    connection: {
      connection_id: 'conn-1',
      provider_config_key: 'one-drive',
      provider: 'one-drive',
      auth_mode: 'OAUTH2',
      connection_config: { teamsiteAccessToken: TEAMSITE_TOKEN, teamsiteAccessTokenExpiresAt: '2030-01-01T00:00:00Z', tenant: 'contoso' },
      metadata: {},
    },
    metadata: { picked: ['a'] },
    secrets: [TOKEN, TEAMSITE_TOKEN],
    ...overrides,
  };
}

describe('writeMockRecording', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'weft-mocks-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the layout of the file table, one response file per page, and no secret anywhere', async () => {
    const { files } = await writeMockRecording(recording(dir));
    const root = join(dir, 'tests/mocks/one-drive/mocks');
    const written = allFiles(root)
      .map((f) => relative(root, f))
      .sort();
    expect(files.map((f) => relative(root, f)).sort()).toEqual(written);
    const responses = written.filter((f) => f.startsWith('user-files/mocks/'));
    expect(responses).toHaveLength(4);
    expect(responses.filter((f) => /^user-files\/mocks\/GET-v1-0-me-drive-root-delta-[0-9a-f]{12}\.json$/.test(f))).toHaveLength(3);
    expect(written.filter((f) => !f.startsWith('user-files/mocks/'))).toEqual([
      'user-files/File/batchDelete.json',
      'user-files/File/batchSave.json',
      'user-files/weft/getConnection.json',
      'user-files/weft/getMetadata.json',
      'weft/getConnection.json',
      'weft/getMetadata.json',
    ]);

    for (const file of allFiles(root)) {
      const text = readFileSync(file, 'utf8');
      for (const secret of [TOKEN, TEAMSITE_TOKEN, TEMPAUTH, CLIENT_SECRET, AMZ_SIG, 'AKIA'])
        expect({ file, leaked: text.includes(secret) }).toEqual({ file, leaked: false });
      expect(() => JSON.parse(text)).not.toThrow();
    }

    const first = JSON.parse(
      readFileSync(
        join(
          root,
          responses.find((f) => f.includes('delta'))!,
        ),
        'utf8',
      ),
    );
    expect(Object.keys(first)).toEqual(['request', 'response']);
    expect(Object.keys(first.response)).toEqual(['status', 'headers', 'body']);
    expect(first.response.headers).toEqual({ 'content-type': 'application/json', etag: expect.any(String), 'x-ratelimit-remaining': '99' });
    const item = first.response.body.value[0];
    expect(item['@microsoft.graph.downloadUrl']).toMatch(
      /^https:\/\/contoso\.sharepoint\.com\/_layouts\/15\/download\.aspx\?UniqueId=u\d&tempauth=REDACTED-[0-9a-f]{8}&ApiVersion=2\.0$/,
    );
    expect(item.s3).toMatch(
      /^https:\/\/bucket\.s3\.amazonaws\.com\/f\?X-Amz-Credential=REDACTED-[0-9a-f]{8}&X-Amz-Signature=REDACTED-[0-9a-f]{8}&x-id=GetObject$/,
    );

    const connection = JSON.parse(readFileSync(join(root, 'weft/getConnection.json'), 'utf8'));
    expect(connection.connection_config).toEqual({ teamsiteAccessToken: 'REDACTED', teamsiteAccessTokenExpiresAt: '2030-01-01T00:00:00Z', tenant: 'contoso' });
    expect(connection.metadata).toEqual({ picked: ['a'] });
    expect(JSON.parse(readFileSync(join(root, 'user-files/File/batchDelete.json'), 'utf8'))).toEqual([{ id: 'gone' }]);
  });

  it('writes input.json and output.json for an action, scrubbing the literal secrets', async () => {
    await writeMockRecording(
      recording(dir, {
        kind: 'action',
        functionName: 'team-site-token',
        exchanges: [],
        batchSave: {},
        batchDelete: {},
        input: {},
        output: { access_token: TEAMSITE_TOKEN, expires_at: null },
      }),
    );
    const fn = join(dir, 'tests/mocks/one-drive/mocks/team-site-token');
    expect(JSON.parse(readFileSync(join(fn, 'input.json'), 'utf8'))).toEqual({});
    expect(JSON.parse(readFileSync(join(fn, 'output.json'), 'utf8'))).toEqual({ access_token: 'REDACTED', expires_at: null });
  });

  it('re-saving a function replaces its old files and keeps a function nested under its name (user-files/selected)', async () => {
    await writeMockRecording(recording(dir));
    await writeMockRecording(recording(dir, { functionName: 'user-files/selected', exchanges: recording(dir).exchanges.slice(0, 1) }));
    await writeMockRecording(recording(dir, { exchanges: recording(dir).exchanges.slice(2, 3), batchDelete: {} }));
    const root = join(dir, 'tests/mocks/one-drive/mocks');
    const files = allFiles(root)
      .map((f) => relative(root, f))
      .sort();
    expect(files.filter((f) => f.startsWith('user-files/mocks/'))).toHaveLength(1);
    expect(files).not.toContain('user-files/File/batchDelete.json');
    expect(files.filter((f) => f.startsWith('user-files/selected/mocks/'))).toHaveLength(1);
    expect(files).toContain('user-files/selected/File/batchSave.json');
  });

  it('refuses a name that would leave the mocks folder', async () => {
    await expect(writeMockRecording(recording(dir, { functionName: '../evil' }))).rejects.toThrow('not a safe file name');
    await expect(writeMockRecording(recording(dir, { batchSave: { '../x': [] } }))).rejects.toThrow('not a safe file name');
  });
});
