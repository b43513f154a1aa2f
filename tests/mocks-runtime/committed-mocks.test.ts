import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { integrations } from '../../integrations';
import { GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';

// The mocks `npm run mocks:record` committed: one recording and one
// generated test per pre-built function, and no credential or signed-URL secret in any file.

const REPO = join(__dirname, '..', '..');
const MOCKS = join(REPO, 'tests', 'mocks');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('the committed mocks', () => {
  const files = readdirSync(MOCKS)
    .filter((name) => statSync(join(MOCKS, name)).isDirectory())
    .flatMap((name) => filesUnder(join(MOCKS, name)));

  it('cover every pre-built sync and action, each with its generated test', () => {
    for (const def of integrations) {
      for (const fn of [...def.syncs, ...def.actions]) {
        const dir = join(MOCKS, def.provider.name, 'mocks', ...fn.name.split('/'));
        const test = join(REPO, 'tests', 'integrations', def.provider.name, ...fn.name.split('/')) + '.test.ts';
        expect({
          fn: `${def.provider.name}/${fn.name}`,
          recorded: existsSync(join(dir, fn.kind === 'sync' ? 'mocks' : 'input.json')),
          test: existsSync(test),
        }).toEqual({
          fn: `${def.provider.name}/${fn.name}`,
          recorded: true,
          test: true,
        });
      }
    }
  });

  it('hold no token, key, client secret or signed-URL secret', () => {
    expect(files.length).toBeGreaterThan(50);
    const secrets = [GRAPH_DEFAULT_ACCESS_TOKEN, LUMA_DEFAULT_API_KEY, 'sandbox-teamsite-token-for-the-mocks', 'weft-sandbox-oauth-client-secret'];
    const patterns = [
      /ghs_[A-Za-z0-9]{20,}/,
      /gho_[A-Za-z0-9]{20,}/,
      /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
      /Bearer [A-Za-z0-9._-]{8,}/,
      /[?&](tempauth|sig|signature|token|code|access_token)=(?!REDACTED)[^&"\s]+/i,
    ];
    const leaks = files.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return [...secrets.filter((s) => text.includes(s)), ...patterns.filter((p) => p.test(text)).map(String)].map(
        (what) => `${relative(REPO, file)}: ${what}`,
      );
    });
    expect(leaks).toEqual([]);
  });

  it("keep only the provider's meaningful response headers", () => {
    const headers = new Set(
      files
        .filter((f) => /\/mocks\/[A-Z]+-[^/]+\.json$/.test(f))
        .flatMap((f) => Object.keys((JSON.parse(readFileSync(f, 'utf8')) as { response: { headers: object } }).response.headers)),
    );
    for (const name of headers) expect(name).toMatch(/^(content-type|link|retry-after|etag|x-ratelimit-.*)$/);
  });

  it("keep none of Weft's own API rate-limit headers (Luma's and Graph's simulators send no X-RateLimit-*)", () => {
    const withRateLimit = files
      .filter((f) => /\/(luma|one-drive)\/.*\/mocks\/[A-Z]+-[^/]+\.json$/.test(f))
      .filter((f) =>
        Object.keys((JSON.parse(readFileSync(f, 'utf8')) as { response: { headers: object } }).response.headers).some((h) => h.startsWith('x-ratelimit-')),
      )
      .map((f) => relative(REPO, f));
    expect(withRateLimit).toEqual([]);
  });
});
