import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { join } from 'node:path';
import {
  REDACTED,
  redactHeaders,
  redactJson,
  redactText,
  redactUrl,
  savedRequestHeaders,
  scrubLiterals,
  secretHint,
  secretValuesOf,
} from '../../common/secrets';
import { redactUrl as requestLogUrl } from '../../egress/redact';

const ROOT = join(__dirname, '..', '..');

/** What every case hides: it must appear nowhere in the redacted output. */
const SECRET = 'S3cr3tValue-9f8e7d6c';

describe('one redaction module: query parameters', () => {
  const names = [
    'access_token',
    'refresh_token',
    'id_token',
    'auth_token',
    'api_token',
    'session_token',
    'connect_session_token',
    'client_secret',
    'code',
    'code_verifier',
    'token',
    'api_key',
    'apikey',
    'key',
    'sig',
    'signature',
    'tempauth',
    'password',
    'passwd',
    'pass',
    'secret',
    'X-Amz-Signature',
    'X-Amz-Credential',
    'X-Amz-Security-Token',
    'X-Goog-Signature',
    'X-Goog-Credential',
    'sessionToken',
  ];
  it.each(names)('redacts ?%s= in a URL, keeping the rest of it as it was', (name) => {
    const out = redactUrl(`https://api.example.com/v1/files?page=2&${name}=${SECRET}&x-id=GetObject`);
    expect(out).toBe(`https://api.example.com/v1/files?page=2&${name}=${REDACTED}&x-id=GetObject`);
  });

  it.each(names)('redacts %s in a fragment and in a bare path with a query (a server span target)', (name) => {
    expect(redactUrl(`https://app.example.com/cb#${name}=${SECRET}&t=1`)).toBe(`https://app.example.com/cb#${name}=${REDACTED}&t=1`);
    expect(redactUrl(`/connect?${name}=${SECRET}`)).toBe(`/connect?${name}=${REDACTED}`);
  });

  it.each(names)('the request log (egress/redact.ts) redacts ?%s= by the same rule', (name) => {
    expect(requestLogUrl(`https://api.example.com/v1/files?${name}=${SECRET}`)).toBe(`https://api.example.com/v1/files?${name}=${REDACTED}`);
  });

  it("redacts OAuth's state only in Weft's own URLs: a provider's state=open stays readable", () => {
    expect(redactUrl(`/oauth/callback?code=${SECRET}&state=${SECRET}`, { inbound: true })).toBe(`/oauth/callback?code=${REDACTED}&state=${REDACTED}`);
    expect(redactUrl('https://api.github.com/repos/o/r/pulls?state=open')).toBe('https://api.github.com/repos/o/r/pulls?state=open');
  });

  it('keeps parameters that are not secret, and an empty secret parameter', () => {
    const url = 'https://graph.microsoft.com/v1.0/me/drive/root/delta?%24top=1000&nextPageToken=abc&code=';
    expect(redactUrl(url)).toBe(url);
  });

  it('redacts a URL inside JSON text held in a string, keeping its escaping', () => {
    const text = JSON.stringify(JSON.stringify({ link: `https://x.example.com/d?token=${SECRET}` }));
    expect(redactText(text)).toBe(JSON.stringify(JSON.stringify({ link: 'https://x.example.com/d?token=REDACTED' })));
  });

  it('removes userinfo', () => {
    expect(redactUrl(`https://user:${SECRET}@example.com:8443/x?y=1`)).toBe('https://example.com:8443/x?y=1');
    expect(redactText(`could not reach mongodb://weft:${SECRET}@db:27017/weft`)).toBe('could not reach mongodb://db:27017/weft');
  });
});

describe('one redaction module: secrets in paths of webhook URLs', () => {
  const cases: Array<[string, string, string]> = [
    ['Slack incoming webhook', `https://hooks.slack.com/services/T0001/B0002/${SECRET}`, 'https://hooks.slack.com/services/T0001/B0002/REDACTED'],
    ['Slack workflow trigger', `https://hooks.slack.com/triggers/T0001/42/${SECRET}`, 'https://hooks.slack.com/triggers/T0001/42/REDACTED'],
    ['Discord', `https://discord.com/api/webhooks/123456/${SECRET}`, 'https://discord.com/api/webhooks/123456/REDACTED'],
    [
      'Discord (versioned, old host)',
      `https://discordapp.com/api/v10/webhooks/123456/${SECRET}?wait=true`,
      'https://discordapp.com/api/v10/webhooks/123456/REDACTED?wait=true',
    ],
    [
      'Microsoft Teams',
      `https://contoso.webhook.office.com/webhookb2/g1@t1/IncomingWebhook/${SECRET}/g2`,
      'https://contoso.webhook.office.com/webhookb2/g1@t1/IncomingWebhook/REDACTED/REDACTED',
    ],
    [
      'Office 365 connector',
      `https://outlook.office.com/webhook/g1@t1/IncomingWebhook/${SECRET}/g2`,
      'https://outlook.office.com/webhook/g1@t1/IncomingWebhook/REDACTED/REDACTED',
    ],
    [
      'Power Automate (signature in the query)',
      `https://prod.westus.logic.azure.com/workflows/w1/triggers/manual/paths/invoke?api-version=1&sig=${SECRET}`,
      'https://prod.westus.logic.azure.com/workflows/w1/triggers/manual/paths/invoke?api-version=1&sig=REDACTED',
    ],
    ['Telegram bot', `https://api.telegram.org/bot123:${SECRET}/sendMessage`, 'https://api.telegram.org/botREDACTED/sendMessage'],
    ['Mattermost-style /hooks/<key>', `https://chat.example.com/hooks/${SECRET}xyz12345`, 'https://chat.example.com/hooks/REDACTED'],
  ];
  it.each(cases)('%s', (_name, url, expected) => {
    expect(redactUrl(url)).toBe(expected);
    expect(redactText(`POST ${url} failed: HTTP 500`)).toBe(`POST ${expected} failed: HTTP 500`);
  });

  it("leaves an API's ordinary paths alone (a GitHub hook id, a Slack API method)", () => {
    for (const url of ['https://api.github.com/repos/o/r/hooks/12345', 'https://slack.com/api/chat.postMessage', 'https://hooks.slack.com/services']) {
      expect(redactUrl(url)).toBe(url);
    }
  });
});

describe('one redaction module: fields of JSON documents', () => {
  const fields = [
    'access_token',
    'accessToken',
    'refresh_token',
    'id_token',
    'api_token',
    'apiToken',
    'auth_token',
    'sessionToken',
    'session_token',
    'authorization',
    'Authorization',
    'pass',
    'passwd',
    'password',
    'db_password',
    'secret',
    'client_secret',
    'clientSecret',
    'webhook_secret',
    'private_key',
    'privateKey',
    'api_key',
    'apiKey',
    'x-api-key',
    'token',
    'teamsiteAccessToken',
    'signature',
    'tempauth',
    'cookie',
    'passphrase',
    'x-auth-token',
    'private-token',
    'ocp-apim-subscription-key',
  ];
  it.each(fields)('redacts a string, a number and a list under %s, at any depth', (field) => {
    const doc = { page: 1, items: [{ name: 'a', nested: { [field]: SECRET } }], [field]: 123456789, more: { [field]: [SECRET, 987654321] } };
    const out = redactJson(doc);
    expect(out).toEqual({ page: 1, items: [{ name: 'a', nested: { [field]: REDACTED } }], [field]: REDACTED, more: { [field]: [REDACTED, REDACTED] } });
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(JSON.stringify(out)).not.toContain('123456789');
  });

  it.each(['api_keys', 'tokens', 'secrets', 'passwords'])('redacts the items of a plural secret field: %s', (field) => {
    expect(redactJson({ [field]: [SECRET, 42] })).toEqual({ [field]: [REDACTED, REDACTED] });
  });

  it('walks an object under a secret-looking name, keeping its own non-secret fields', () => {
    expect(redactJson({ credentials: { type: 'OAUTH2', access_token: SECRET, expires_at: '2030-01-01' } })).toEqual({
      credentials: { type: 'OAUTH2', access_token: REDACTED, expires_at: '2030-01-01' },
    });
  });

  it('keeps cursors the integration sends back, and what says nothing secret', () => {
    const doc = {
      nextPageToken: 'p2',
      deltaToken: 'd1',
      continuationToken: 'c1',
      token_type: 'bearer',
      password_set: true,
      key: 'PROJ',
      code: 'E42',
      secret: '',
    };
    expect(redactJson(doc)).toEqual(doc);
  });

  it.each([
    [`grant_type=password&username=ann&password=${SECRET}`, 'grant_type=password&username=ann&password=REDACTED'],
    [
      `client_id=c1&client_secret=${SECRET}&code=${SECRET}&redirect_uri=https%3A%2F%2Fx`,
      'client_id=c1&client_secret=REDACTED&code=REDACTED&redirect_uri=https%3A%2F%2Fx',
    ],
    [`a=b&pass=${SECRET}`, 'a=b&pass=REDACTED'],
    [`refresh_token=${SECRET}`, 'refresh_token=REDACTED'],
  ])('redacts the secret fields of a form-encoded body: %s', (body, expected) => {
    expect(redactJson({ body })).toEqual({ body: expected });
    expect(redactText(body)).toBe(expected);
  });

  it('changes nothing when run again on its own output (a saved request inside its mock file)', () => {
    const doc = { body: `grant_type=password&password=${SECRET}`, url: `https://x.example.com/d?token=${SECRET}&a=1`, api_token: SECRET };
    for (const hint of [false, true]) {
      const once = redactJson(doc, { hint });
      expect(redactJson(once, { hint })).toEqual(once);
      expect(redactJson(JSON.stringify(once.body), { hint })).toBe(JSON.stringify(once.body));
    }
  });

  it('redacts the URLs inside strings, and literal secrets known at the call wherever they appear', () => {
    const out = redactJson(
      { note: `token is ${SECRET}!`, link: `https://x.example.com/d?tempauth=${SECRET}`, alert: `https://hooks.slack.com/services/T1/B1/${SECRET}` },
      { secrets: [SECRET] },
    );
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(out.note).toBe('token is REDACTED!');
  });

  it('redacts metadata values under secret names, and finds them as literal secrets for the rest of a recording', () => {
    const metadata = { folder: 'Reports', webhookSecret: SECRET, nested: { apiToken: 4242424242, tenants: ['t1'] } };
    expect(redactJson(metadata)).toEqual({ folder: 'Reports', webhookSecret: REDACTED, nested: { apiToken: REDACTED, tenants: ['t1'] } });
    expect(secretValuesOf(metadata).sort()).toEqual(['4242424242', SECRET].sort());
    // The same value in a body is caught as a literal once it is known.
    expect(redactJson({ body: { note: `sig ${SECRET}` } }, { secrets: secretValuesOf(metadata) })).toEqual({ body: { note: 'sig REDACTED' } });
  });

  it('scrubs the longest of overlapping literal secrets whole, and ignores ones too short to be safe', () => {
    expect(scrubLiterals(`a ${SECRET}-suffix b`, [SECRET, `${SECRET}-suffix`])).toBe('a REDACTED b');
    expect(scrubLiterals('abc def', ['abc'])).toBe('abc def');
  });
});

describe('one redaction module: headers', () => {
  const secretHeaders = [
    'Authorization',
    'Proxy-Authorization',
    'Cookie',
    'Set-Cookie',
    'x-api-key',
    'api-key',
    'x-luma-api-key',
    'x-auth-token',
    'private-token',
    'ocp-apim-subscription-key',
    'x-amz-security-token',
    'x-goog-api-key',
    'x-csrf-token',
  ];
  it.each(secretHeaders)('a log shows %s redacted', (name) => {
    expect(redactHeaders({ [name]: SECRET, 'content-type': 'application/json' })).toEqual({ [name]: REDACTED, 'content-type': 'application/json' });
  });

  it('a log redacts the headers an integration declares, whatever their name', () => {
    expect(redactHeaders({ 'x-acme-tenant-credential': SECRET, 'x-acme-sig-v2': SECRET, 'x-request-id': 'r1' }, ['X-Acme-Sig-V2'])).toEqual({
      'x-acme-tenant-credential': REDACTED,
      'x-acme-sig-v2': REDACTED,
      'x-request-id': 'r1',
    });
  });

  it.each([...secretHeaders, 'x-acme-custom-auth', 'x-request-id', 'user-agent', 'connection-id', 'weft-proxy-foo'])(
    'a saved request drops %s (only the allow-list is kept)',
    (name) => {
      expect(savedRequestHeaders({ [name]: SECRET, 'Content-Type': 'application/json', Prefer: 'respond-async' })).toEqual([
        ['content-type', 'application/json'],
        ['prefer', 'respond-async'],
      ]);
    },
  );

  it('a saved request drops an allow-listed header the integration declares secret', () => {
    expect(savedRequestHeaders({ prefer: SECRET }, ['prefer'])).toEqual([]);
  });
});

describe('one redaction module: the hint of a saved secret', () => {
  it('tells values apart and repeats for the same value, as REDACTED-<8 hex>', () => {
    expect(secretHint('aaaaaaaa')).toMatch(/^REDACTED-[0-9a-f]{8}$/);
    expect(secretHint('aaaaaaaa')).toBe(secretHint('aaaaaaaa'));
    expect(secretHint('aaaaaaaa')).not.toBe(secretHint('bbbbbbbb'));
    expect(redactUrl(`https://g.example.com/delta?token=${SECRET}`, { hint: true })).toBe(`https://g.example.com/delta?token=${secretHint(SECRET)}`);
  });

  it('is no plain hash of the secret: not SHA-256, nor an HMAC under any key in the repository', () => {
    const hex = secretHint('hunter2hunter2').slice('REDACTED-'.length);
    expect(hex).not.toBe(createHash('sha256').update('hunter2hunter2').digest('hex').slice(0, 8));
    for (const key of ['', 'weft', 'REDACTED']) expect(hex).not.toBe(createHmac('sha256', key).update('hunter2hunter2').digest('hex').slice(0, 8));
  });

  it('leaves a value that is already redacted as it is (a link read back from a saved mock)', () => {
    expect(secretHint('REDACTED-0a1b2c3d')).toBe('REDACTED-0a1b2c3d');
    expect(redactUrl('https://g.example.com/delta?token=REDACTED-0a1b2c3d', { hint: true })).toBe('https://g.example.com/delta?token=REDACTED-0a1b2c3d');
  });

  it('differs from one process to the next: its key is made per process, never stored', () => {
    const hintInNewProcess = () =>
      execFileSync(join(ROOT, 'node_modules/.bin/tsx'), ['-e', "process.stdout.write(require('./common/secrets').secretHint('hunter2hunter2'))"], {
        cwd: ROOT,
        encoding: 'utf8',
      });
    const first = hintInNewProcess();
    expect(first).toMatch(/^REDACTED-[0-9a-f]{8}$/);
    expect(hintInNewProcess()).not.toBe(first);
  });
});
