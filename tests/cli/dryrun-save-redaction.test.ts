import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { saveMocks } from '../../cli/dryrun-save';
import { redactValue } from '../../runtime/dryrun/run';
import { luma } from '../../integrations/luma';
import { IntegrationRegistry } from '../../runtime/registry';
import type { ConnectionInfo, IntegrationDefinition } from '../../runtime/types';

/**
 * `weft dryrun --save` (cli/dryrun-save.ts) writing a run whose requests, answers, records,
 * output, connection and metadata hold every kind of secret the redaction module names: no
 * file may contain one, and what is not secret stays so that the mocks still replay.
 */

const S = {
  apiToken: 'apiTokenSecret-1111aaaa',
  authToken: 'authTokenSecret-2222bbbb',
  sessionToken: 'sessionTokenSecret-3333cccc',
  authorization: 'Basic YXV0aG9yaXphdGlvblNlY3JldA==',
  pass: 'passSecret-4444dddd',
  formPassword: 'formPasswordSecret-5555eeee',
  formClientSecret: 'formClientSecret-6666ffff',
  xAuthToken: 'xAuthTokenSecret-7777aaaa',
  privateToken: 'privateTokenSecret-8888bbbb',
  apimKey: 'apimKeySecret-9999cccc',
  declaredHeader: 'declaredHeaderSecret-0000dddd',
  metadataSecret: 'metadataSecret-1212eeee',
  configSecret: 'configSecret-3434ffff',
  amzSignature: 'amzSignatureSecret-5656aaaa',
  slack: 'slackHookSecret-7878bbbb',
  lumaKey: 'lumaKeySecret-9090cccc',
};
const NUMERIC_PIN = 987654321012;
const ARRAY_KEYS = ['arrayKeySecret-one-aaaa', 'arrayKeySecret-two-bbbb'];

describe('weft dryrun --save: every secret redacted by the one module', () => {
  let project: string;
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  test('requests, answers, output, connection and metadata: no secret in any file, the rest kept', async () => {
    project = mkdtempSync(join(tmpdir(), 'weft-save-redaction-'));
    const integration: IntegrationDefinition = { ...luma, provider: { ...luma.provider, secretHeaders: ['x-acme-request-signature'] } };
    const fn = integration.actions.find((a) => a.name === 'create-event')!;
    const connection: ConnectionInfo = {
      connection_id: 'c1',
      provider_config_key: 'luma',
      provider: 'luma',
      auth_mode: 'API_KEY',
      connection_config: { tenant: 'acme', signing_secret: S.configSecret },
      metadata: { calendar: 'team', webhookSecret: S.metadataSecret, alert_url: `https://hooks.slack.com/services/T1/B1/${S.slack}` },
    };
    const files = await saveMocks({
      projectDir: project,
      integration,
      registry: new IntegrationRegistry([integration]),
      fn,
      connection,
      secrets: [S.lumaKey],
      input: { name: 'Launch', password: S.pass },
      exchanges: [
        {
          request: {
            method: 'POST',
            endpoint: '/public/v1/event/create',
            headers: {
              'content-type': 'application/json',
              authorization: S.authorization,
              'x-auth-token': S.xAuthToken,
              'private-token': S.privateToken,
              'ocp-apim-subscription-key': S.apimKey,
              'x-acme-request-signature': S.declaredHeader,
              'x-luma-api-key': S.lumaKey,
            },
            data: { name: 'Launch', api_token: S.apiToken, pin: { pass: S.pass }, note: `metadata says ${S.metadataSecret}` },
          },
          response: {
            status: 200,
            headers: { 'content-type': 'application/json', 'set-cookie': `sid=${S.sessionToken}` },
            data: {
              event: { id: 'evt-1', name: 'Launch', url: `https://files.example.com/f?X-Amz-Signature=${S.amzSignature}&x-id=GetObject` },
              auth_token: S.authToken,
              sessionToken: S.sessionToken,
              authorization: S.authorization,
              pin_code_secret: NUMERIC_PIN,
              api_keys: ARRAY_KEYS,
            },
          },
        },
        {
          request: {
            method: 'POST',
            endpoint: '/oauth/token',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            data: `grant_type=password&username=ann&password=${S.formPassword}&client_secret=${S.formClientSecret}`,
          },
          response: { status: 200, headers: {}, data: { token_type: 'bearer', expires_in: 3600 } },
        },
      ],
      result: {
        kind: 'action',
        writes: { batchSave: {}, batchDelete: {}, trackDeletes: [], checkpoint: null, metadata: connection.metadata } as never,
        output: { id: 'evt-1', session: { sessionToken: S.sessionToken }, attendees: 3 },
      },
    });
    expect(files.length).toBeGreaterThan(4);

    const written = walk(join(project, 'tests', 'mocks'));
    const all = written.map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const [name, secret] of Object.entries({ ...S, numeric: String(NUMERIC_PIN), array0: ARRAY_KEYS[0], array1: ARRAY_KEYS[1] })) {
      expect([name, all.includes(secret)]).toEqual([name, false]);
    }

    const dir = join(project, 'tests', 'mocks', 'luma', 'mocks', 'create-event');
    const saved = readdirSync(join(dir, 'mocks')).map((f) => JSON.parse(readFileSync(join(dir, 'mocks', f), 'utf8')));
    const create = saved.find((m) => m.request.path === '/public/v1/event/create');
    // Only allow-listed headers are kept in a saved request.
    expect(create.request.headers).toEqual([['content-type', 'application/json']]);
    expect(create.response.body).toMatchObject({
      event: {
        id: 'evt-1',
        name: 'Launch',
        url: expect.stringMatching(/^https:\/\/files\.example\.com\/f\?X-Amz-Signature=REDACTED-[0-9a-f]{8}&x-id=GetObject$/),
      },
      auth_token: 'REDACTED',
      sessionToken: 'REDACTED',
      authorization: 'REDACTED',
      pin_code_secret: 'REDACTED',
      api_keys: ['REDACTED', 'REDACTED'],
    });
    expect(create.response.headers).toEqual({ 'content-type': 'application/json' });
    const token = saved.find((m) => m.request.path === '/oauth/token');
    expect(JSON.parse(token.request.body)).toBe('grant_type=password&username=ann&password=REDACTED&client_secret=REDACTED');
    expect(JSON.parse(readFileSync(join(dir, 'weft', 'getMetadata.json'), 'utf8'))).toEqual({
      calendar: 'team',
      webhookSecret: 'REDACTED',
      alert_url: 'https://hooks.slack.com/services/T1/B1/REDACTED',
    });
    expect(JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8'))).toEqual({ id: 'evt-1', session: { sessionToken: 'REDACTED' }, attendees: 3 });
    expect(relative(project, dir)).toBe(join('tests', 'mocks', 'luma', 'mocks', 'create-event'));
  });
});

describe('weft dryrun output: what it prints is redacted by the same module', () => {
  test('records, outputs and log lines: secret fields, URLs inside texts and known literals', () => {
    const shown = redactValue(
      {
        record: { id: 'r1', api_token: S.apiToken, pin: NUMERIC_PIN, note: `see https://hooks.slack.com/services/T1/B1/${S.slack} now` },
        log: `calling https://files.example.com/f?X-Amz-Signature=${S.amzSignature} with ${S.lumaKey}`,
      },
      [S.lumaKey],
    );
    expect(shown).toEqual({
      record: { id: 'r1', api_token: 'REDACTED', pin: NUMERIC_PIN, note: 'see https://hooks.slack.com/services/T1/B1/REDACTED now' },
      log: 'calling https://files.example.com/f?X-Amz-Signature=REDACTED with REDACTED',
    });
  });
});

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
