import { Writable } from 'node:stream';
import { createLogger } from '../../common/logger';

const SECRET = 'S3cr3tValue-9f8e7d6c';
const SLACK = `https://hooks.slack.com/services/T0001/B0002/${SECRET}`;

/** A logger writing into an array, one parsed JSON line per entry. */
function capture(secretHeaders: string[] = []) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { log: createLogger('info', stream, { secretHeaders }), lines };
}

describe('the logger redacts by the one module (common/secrets)', () => {
  it.each([
    ['authorization header', { headers: { authorization: `Bearer ${SECRET}` } }],
    ['custom auth headers', { headers: { 'x-auth-token': SECRET, 'private-token': SECRET, 'ocp-apim-subscription-key': SECRET } }],
    ['a provider API key header', { req: { headers: { 'x-luma-api-key': SECRET } } }],
    ['secret fields', { body: { api_token: SECRET, sessionToken: SECRET, password: 123456789, client_secret: [SECRET] } }],
    ['a Slack webhook URL', { target: 'alert', url: SLACK }],
    ['a signed URL', { url: `https://bucket.s3.amazonaws.com/f?X-Amz-Signature=${SECRET}&X-Amz-Credential=${SECRET}` }],
    ['an error whose message names a webhook URL', { err: new Error(`fetch failed: POST ${SLACK}`) }],
  ])('%s', (_name, fields) => {
    const { log, lines } = capture();
    log.warn(fields, 'webhook attempt failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(SECRET);
    expect(lines[0]).not.toContain('123456789');
  });

  it('redacts the secrets of a URL in the message, and the headers a provider declares', () => {
    const { log, lines } = capture(['x-acme-sig']);
    log.info({ headers: { 'x-acme-sig': SECRET, 'content-type': 'application/json' } }, `posting to ${SLACK}`);
    const line = JSON.parse(lines[0]) as { msg: string; headers: Record<string, string> };
    expect(line.msg).toBe('posting to https://hooks.slack.com/services/T0001/B0002/REDACTED');
    expect(line.headers).toEqual({ 'x-acme-sig': '[redacted]', 'content-type': 'application/json' });
  });

  it('keeps what is not secret readable (ids, keys of integrations, cursors, errors)', () => {
    const { log, lines } = capture();
    log.info({ provider_config_key: 'one-drive', nextPageToken: 'p2', url: 'https://api.github.com/repos/o/r/pulls?state=open', err: new Error('boom') }, 'ok');
    const line = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(line).toMatchObject({ provider_config_key: 'one-drive', nextPageToken: 'p2', url: 'https://api.github.com/repos/o/r/pulls?state=open' });
    expect((line.err as { message: string; type: string }).message).toBe('boom');
  });
});
