import crypto from 'node:crypto';
import http from 'node:http';
import { SignJWT } from 'jose';
import { createGitHubSimulator, DATA_END_MS, GitHubSimulatorOptionsSchema, type GitHubSimulator, type GitHubSimulatorOptions } from '../../sandbox/github';

type Json = Record<string, any>;

const UA = 'weft-tests/1.0';
const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

const running: GitHubSimulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** A simulator on a manual clock (`clock.t`, epoch ms). */
async function startSim(options: GitHubSimulatorOptions = {}) {
  const clock = { t: T0 };
  const sim = createGitHubSimulator({ now: () => clock.t, ...options });
  running.push(sim);
  const base = await sim.start();
  return { sim, base, clock };
}

async function mintJwt(
  sim: GitHubSimulator,
  nowMs: number,
  claims: Record<string, unknown> = {},
  opts: { key?: crypto.KeyObject | Uint8Array; alg?: string } = {},
): Promise<string> {
  const nowS = Math.floor(nowMs / 1000);
  const payload = { iat: nowS - 60, exp: nowS + 540, iss: sim.app.clientId, ...claims };
  // jose's importPKCS8 wants PKCS#8; the App key is PKCS#1, so hand jose a KeyObject instead.
  const key = opts.key ?? crypto.createPrivateKey(sim.appPrivateKeyPem);
  return new SignJWT(payload).setProtectedHeader({ alg: opts.alg ?? 'RS256' }).sign(key);
}

interface CallOptions {
  auth?: string | null;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
}

function call(base: string, path: string, o: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { 'user-agent': UA, accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', ...o.headers };
  if (o.auth) headers.authorization = o.auth;
  return fetch(path.startsWith('http') ? path : base + path, { method: o.method ?? 'GET', headers, body: o.body });
}

async function mintToken(sim: GitHubSimulator, base: string, nowMs: number, installationId = 1001, body?: unknown): Promise<string> {
  const jwt = await mintJwt(sim, nowMs);
  const res = await call(base, `/app/installations/${installationId}/access_tokens`, {
    method: 'POST',
    auth: `Bearer ${jwt}`,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as Json).token;
}

/** Parses `<url>; rel="x", ...` into { x: url }. */
function parseLink(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(',')) {
    const m = /<([^>]+)>;\s*rel="([^"]+)"/.exec(part.trim());
    if (!m) throw new Error(`bad link part: ${part}`);
    out[m[2]] = m[1];
  }
  return out;
}

/** Follows rel="next" from `path`; checks rel sets and that per_page is echoed. */
async function walk(base: string, path: string, auth: string, pick: (body: any) => any[] = (b) => b) {
  const items: any[] = [];
  const rels: string[][] = [];
  let url: string | undefined = base + path;
  const perPage = new URL(url).searchParams.get('per_page');
  while (url) {
    const res = await call(base, url, { auth });
    expect(res.status).toBe(200);
    const links = parseLink(res.headers.get('link'));
    rels.push(Object.keys(links).sort());
    for (const href of Object.values(links)) {
      expect(href.startsWith(base)).toBe(true);
      if (perPage !== null) expect(new URL(href).searchParams.get('per_page')).toBe(perPage);
    }
    items.push(...pick(await res.json()));
    url = links.next;
    if (rels.length > 1000) throw new Error('pagination does not terminate');
  }
  return { items, rels };
}

function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method: 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const BAD_CREDENTIALS = { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' };

describe('GitHub simulator: App JWT', () => {
  it('exposes a PKCS#1 key and accepts JWTs issued by client id or app id', async () => {
    const { sim, base, clock } = await startSim();
    expect(sim.appPrivateKeyPem.startsWith('-----BEGIN RSA PRIVATE KEY-----')).toBe(true);
    expect(sim.app).toEqual({
      id: 123456,
      clientId: expect.stringMatching(/^Iv1\.[0-9a-f]{16}$/),
      clientSecret: 'weft-sandbox-app-client-secret',
      slug: 'weft-sandbox',
      name: 'Weft Sandbox',
      publicLink: `${base}/apps/weft-sandbox`,
    });
    for (const iss of [sim.app.clientId, 123456, '123456']) {
      const res = await call(base, '/app', { auth: `Bearer ${await mintJwt(sim, clock.t, { iss })}` });
      expect(res.status).toBe(200);
      const app = (await res.json()) as Json;
      expect(app).toMatchObject({ id: 123456, slug: 'weft-sandbox', client_id: sim.app.clientId, name: 'Weft Sandbox' });
    }
    const list = await call(base, '/app/installations', { auth: `Bearer ${await mintJwt(sim, clock.t)}` });
    expect(list.status).toBe(200);
    const installations = (await list.json()) as Json[];
    expect(installations).toHaveLength(1);
    expect(installations[0]).toMatchObject({ id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, app_id: 123456, repository_selection: 'all' });
    expect(installations).toEqual(sim.installations());
  });

  it('answers each JWT error with GitHub status and message', async () => {
    const { sim, base, clock } = await startSim();
    const nowS = Math.floor(clock.t / 1000);
    const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const cases: Array<[string, string, number, string]> = [
      ['exp too far', await mintJwt(sim, clock.t, { iat: nowS, exp: nowS + 601 }), 401, "'Expiration time' claim ('exp') is too far in the future"],
      ['exp past', await mintJwt(sim, clock.t, { iat: nowS - 700, exp: nowS - 1 }), 401, "'Expiration time' claim ('exp') is in the past"],
      [
        'iat not integer',
        await mintJwt(sim, clock.t, { iat: nowS - 59.5 }),
        401,
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      ],
      [
        'iat in the future',
        await mintJwt(sim, clock.t, { iat: nowS + 30 }),
        401,
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      ],
      ['garbage', 'not.a.jwt', 401, 'A JSON web token could not be decoded'],
      ['wrong key', await mintJwt(sim, clock.t, {}, { key: other }), 401, 'A JSON web token could not be decoded'],
      ['HS256', await mintJwt(sim, clock.t, {}, { key: new TextEncoder().encode('x'.repeat(32)), alg: 'HS256' }), 401, 'A JSON web token could not be decoded'],
      ['unknown issuer', await mintJwt(sim, clock.t, { iss: 'Iv1.0000000000000000' }), 404, 'Integration not found'],
      ['unknown app id', await mintJwt(sim, clock.t, { iss: 999 }), 404, 'Integration not found'],
    ];
    for (const [name, jwt, status, message] of cases) {
      const res = await call(base, '/app/installations', { auth: `Bearer ${jwt}` });
      expect({ name, status: res.status }).toEqual({ name, status });
      expect(await res.json()).toEqual({ message, documentation_url: 'https://docs.github.com/rest', status: String(status) });
    }
    // exp exactly 10 minutes ahead is still fine.
    const edge = await mintJwt(sim, clock.t, { iat: nowS, exp: nowS + 600 });
    expect((await call(base, '/app', { auth: `Bearer ${edge}` })).status).toBe(200);
    // An installation token where a JWT is required cannot be decoded as one.
    const token = await mintToken(sim, base, clock.t);
    const res = await call(base, '/app', { auth: `Bearer ${token}` });
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).message).toBe('A JSON web token could not be decoded');
  });

  it('verifies JWTs against a supplied key (PKCS#8 in, PKCS#1 out)', async () => {
    const pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pkcs8 = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const { sim, base, clock } = await startSim({ privateKeyPem: pkcs8 });
    expect(sim.appPrivateKeyPem).toBe(pair.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
    const jwt = await mintJwt(sim, clock.t, {}, { key: pair.privateKey });
    expect((await call(base, '/app', { auth: `Bearer ${jwt}` })).status).toBe(200);
  });
});

describe('GitHub simulator: installation tokens', () => {
  it('mints a token with 201 and the installation-token shape', async () => {
    const { sim, base, clock } = await startSim({ tokenTtlMs: 3_600_000 });
    const jwt = await mintJwt(sim, clock.t);
    const res = await call(base, '/app/installations/1001/access_tokens', { method: 'POST', auth: `Bearer ${jwt}` });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Json;
    expect(body).toEqual({
      token: expect.stringMatching(/^ghs_[A-Za-z0-9]{36}$/),
      expires_at: iso(T0 + 3_600_000),
      permissions: { metadata: 'read', pull_requests: 'write', contents: 'read' },
      repository_selection: 'all',
    });
    const missing = await call(base, '/app/installations/4242/access_tokens', { method: 'POST', auth: `Bearer ${jwt}` });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as Json).message).toBe('Not Found');
    expect(sim.stats().tokensIssued).toBe(1);
    // A token works for installation routes; the log names the installation, never the token.
    const repos = await call(base, '/installation/repositories', { auth: `token ${body.token}` });
    expect(repos.status).toBe(200);
    const dump = JSON.stringify(sim.requestLog());
    expect(dump).not.toContain(body.token);
    expect(dump).not.toContain(jwt);
    expect(sim.requestLog().at(-1)).toMatchObject({ method: 'GET', path: '/installation/repositories', status: 200, installationId: 1001, at: T0 });
  });

  it('scopes tokens to requested repositories and rejects what the installation lacks', async () => {
    const { sim, base, clock } = await startSim();
    const [a, b] = sim.repositories();
    const token = await mintToken(sim, base, clock.t, 1001, { repositories: [a.name] });
    const res = await call(base, '/installation/repositories', { auth: `Bearer ${token}` });
    const body = (await res.json()) as Json;
    expect(body.total_count).toBe(1);
    expect(body.repository_selection).toBe('selected');
    expect(body.repositories[0].full_name).toBe(a.full_name);
    expect((await call(base, `/repos/${b.full_name}`, { auth: `Bearer ${token}` })).status).toBe(404);

    const jwt = await mintJwt(sim, clock.t);
    const post = (body: unknown) => call(base, '/app/installations/1001/access_tokens', { method: 'POST', auth: `Bearer ${jwt}`, body: JSON.stringify(body) });
    const notThere = await post({ repositories: ['no-such-repo'] });
    expect(notThere.status).toBe(422);
    const tooMuch = await post({ permissions: { contents: 'write' } });
    expect(tooMuch.status).toBe(422);
    expect(((await tooMuch.json()) as Json).message).toBe('The permissions requested are not granted to this installation.');
    const badJson = await call(base, '/app/installations/1001/access_tokens', { method: 'POST', auth: `Bearer ${jwt}`, body: '{oops' });
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as Json).message).toBe('Problems parsing JSON');
  });

  it('answers 401 Bad credentials for unknown, expired and revoked tokens', async () => {
    const { sim, base, clock } = await startSim({ tokenTtlMs: 60_000 });
    const unknown = await call(base, '/installation/repositories', { auth: 'Bearer ghs_' + 'a'.repeat(36) });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toEqual(BAD_CREDENTIALS);

    const token = await mintToken(sim, base, clock.t);
    const repo = sim.repositories()[0].full_name as string;
    expect((await call(base, `/repos/${repo}/pulls`, { auth: `token ${token}` })).status).toBe(200);
    clock.t += 59_000;
    expect((await call(base, `/repos/${repo}/pulls`, { auth: `token ${token}` })).status).toBe(200);
    clock.t += 1_000;
    const expired = await call(base, `/repos/${repo}/pulls`, { auth: `token ${token}` });
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual(BAD_CREDENTIALS);

    const fresh = await mintToken(sim, base, clock.t);
    expect((await call(base, '/installation/repositories', { auth: `Bearer ${fresh}` })).status).toBe(200);
    sim.expireTokens();
    const revoked = await call(base, '/installation/repositories', { auth: `Bearer ${fresh}` });
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toEqual(BAD_CREDENTIALS);
  });

  it('refuses an App JWT where an installation token is required, and anonymous callers', async () => {
    const { sim, base, clock } = await startSim({
      installations: [{ id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 12 }],
      pullsPerRepo: 3,
    });
    const jwt = await mintJwt(sim, clock.t);
    const repos = await call(base, '/installation/repositories', { auth: `Bearer ${jwt}` });
    expect(repos.status).toBe(403);
    expect(((await repos.json()) as Json).message).toMatch(/installation access token/);
    const repo = sim.repositories()[0].full_name as string;
    const pulls = await call(base, `/repos/${repo}/pulls`, { auth: `Bearer ${jwt}` });
    expect(pulls.status).toBe(403);
    expect(await pulls.json()).toMatchObject({ message: 'Resource not accessible by integration', status: '403' });

    const anon = await call(base, '/installation/repositories');
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as Json).message).toBe('Requires authentication');
    // Private repositories are invisible (404, never 403) to anonymous callers; public ones are readable.
    const priv = sim.repositories().find((r) => r.private)!;
    const pub = sim.repositories().find((r) => !r.private)!;
    expect(priv && pub).toBeTruthy();
    expect((await call(base, `/repos/${priv.full_name}`)).status).toBe(404);
    expect((await call(base, `/repos/${priv.full_name}/pulls`)).status).toBe(404);
    const res = await call(base, `/repos/${pub.full_name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    expect((await res.json()) as Json).not.toHaveProperty('permissions');
  });
});

describe('GitHub simulator: pagination', () => {
  it('walks every repository exactly once with Link rel values and per_page echoed', async () => {
    const { sim, base, clock } = await startSim({
      installations: [
        { id: 7, account: { login: 'acme', type: 'Organization' }, repositoryCount: 23 },
        { id: 8, account: { login: 'solo-dev', type: 'User' }, repositoryCount: 2 },
      ],
      pullsPerRepo: 2,
    });
    const token = await mintToken(sim, base, clock.t, 7);
    const { items, rels } = await walk(base, '/installation/repositories?per_page=5', `Bearer ${token}`, (b) => {
      expect(b.total_count).toBe(23);
      expect(b.repository_selection).toBe('all');
      return b.repositories;
    });
    expect(rels).toEqual([
      ['last', 'next'],
      ['first', 'last', 'next', 'prev'],
      ['first', 'last', 'next', 'prev'],
      ['first', 'last', 'next', 'prev'],
      ['first', 'prev'],
    ]);
    const names = items.map((r) => r.full_name);
    expect(new Set(names).size).toBe(23);
    expect(items).toEqual(sim.repositories(7));
    expect(names.every((n) => n.startsWith('acme/'))).toBe(true);

    // The first page's links, literally.
    const first = await call(base, '/installation/repositories?per_page=5', { auth: `Bearer ${token}` });
    expect(first.headers.get('link')).toBe(
      `<${base}/installation/repositories?per_page=5&page=2>; rel="next", <${base}/installation/repositories?per_page=5&page=5>; rel="last"`,
    );
    // Everything on one page: no Link header. Default page size 30; per_page is capped at 100.
    const one = await call(base, '/installation/repositories?per_page=100', { auth: `Bearer ${token}` });
    expect(one.headers.get('link')).toBeNull();
    expect(((await one.json()) as Json).repositories).toHaveLength(23);
    expect(((await (await call(base, '/installation/repositories', { auth: `Bearer ${token}` })).json()) as Json).repositories).toHaveLength(23);

    const repo = items[0];
    expect(repo).toMatchObject({
      owner: { login: 'acme', type: 'Organization' },
      full_name: `acme/${repo.name}`,
      visibility: repo.private ? 'private' : 'public',
      permissions: { admin: false, maintain: false, push: false, triage: false, pull: true },
      url: `${base}/repos/acme/${repo.name}`,
      html_url: `https://github.com/acme/${repo.name}`,
    });
    for (const field of [
      'id',
      'node_id',
      'default_branch',
      'created_at',
      'updated_at',
      'pushed_at',
      'clone_url',
      'ssh_url',
      'topics',
      'license',
      'has_issues',
      'archived',
      'disabled',
      'size',
      'stargazers_count',
      'open_issues_count',
      'pulls_url',
      'commits_url',
    ]) {
      expect(repo).toHaveProperty(field);
    }
  });

  it('walks every pull request exactly once and caps per_page at 100', async () => {
    const { sim, base, clock } = await startSim({
      installations: [{ id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 1 }],
      pullsPerRepo: 237,
    });
    const token = await mintToken(sim, base, clock.t);
    const repo = sim.repositories()[0].full_name as string;
    const { items, rels } = await walk(base, `/repos/${repo}/pulls?state=all&per_page=40`, `Bearer ${token}`);
    expect(rels).toHaveLength(6);
    expect(items).toHaveLength(237);
    expect(new Set(items.map((p) => p.number)).size).toBe(237);
    expect(items).toEqual(sim.pullRequests(repo));
    const big = await call(base, `/repos/${repo}/pulls?state=all&per_page=500`, { auth: `Bearer ${token}` });
    expect((await big.json()) as Json[]).toHaveLength(100);
    expect(parseLink(big.headers.get('link')).last).toBe(`${base}/repos/${repo}/pulls?state=all&per_page=500&page=3`);
    // Past the end: an empty page that still links back.
    const past = await call(base, `/repos/${repo}/pulls?state=all&per_page=100&page=9`, { auth: `Bearer ${token}` });
    expect(await past.json()).toEqual([]);
    expect(Object.keys(parseLink(past.headers.get('link'))).sort()).toEqual(['first', 'prev']);
  });
});

describe('GitHub simulator: pull requests', () => {
  async function setup(options: GitHubSimulatorOptions = {}) {
    const ctx = await startSim({
      installations: [{ id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 1 }],
      pullsPerRepo: 120,
      ...options,
    });
    const token = await mintToken(ctx.sim, ctx.base, ctx.clock.t);
    const repo = ctx.sim.repositories()[0].full_name as string;
    const list = async (qs: string) => (await walk(ctx.base, `/repos/${repo}/pulls?per_page=100&${qs}`, `Bearer ${token}`)).items;
    return { ...ctx, token, repo, list };
  }

  it('filters by state and orders by sort and direction like GitHub', async () => {
    const { sim, base, token, repo, list } = await setup();
    const all = sim.pullRequests(repo);
    const open = all.filter((p) => p.state === 'open');
    const closed = all.filter((p) => p.state === 'closed');
    expect(open.length).toBeGreaterThan(5);
    expect(closed.length).toBeGreaterThan(20);
    expect(closed.some((p) => p.merged_at !== null)).toBe(true);
    expect(closed.some((p) => p.merged_at === null)).toBe(true);

    const byCreated = (a: Json, b: Json) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.number - b.number;
    const byUpdated = (a: Json, b: Json) => Date.parse(a.updated_at) - Date.parse(b.updated_at) || a.number - b.number;
    const nums = (ps: Json[]) => ps.map((p) => p.number);

    // Defaults: open only, newest first.
    expect(nums(await list(''))).toEqual(nums([...open].sort(byCreated).reverse()));
    expect(nums(await list('state=closed'))).toEqual(nums([...closed].sort(byCreated).reverse()));
    expect(nums(await list('state=all&direction=asc'))).toEqual(nums([...all].sort(byCreated)));
    // sort=updated defaults to ascending.
    expect(nums(await list('state=all&sort=updated'))).toEqual(nums([...all].sort(byUpdated)));
    expect(nums(await list('state=all&sort=updated&direction=desc'))).toEqual(nums([...all].sort(byUpdated).reverse()));

    // popularity = comment count (only the full pull request shows it), ascending by default.
    const pop = await list('state=open&sort=popularity');
    const comments: number[] = [];
    for (const p of pop) {
      const full = (await (await call(base, `/repos/${repo}/pulls/${p.number}`, { auth: `Bearer ${token}` })).json()) as Json;
      comments.push(full.comments);
    }
    expect(comments).toEqual([...comments].sort((a, b) => a - b));

    // base and head filters; head without the owner part is ignored, as on GitHub.
    const sample = all[3];
    expect(nums(await list(`state=all&head=${encodeURIComponent(sample.head.label)}`))).toEqual([sample.number]);
    expect((await list(`state=all&head=${encodeURIComponent(sample.head.ref)}`)).length).toBe(all.length);
    const baseRef = sample.base.ref as string;
    expect(nums(await list(`state=all&base=${encodeURIComponent(baseRef)}`))).toEqual(
      nums(
        [...all]
          .filter((p) => p.base.ref === baseRef)
          .sort(byCreated)
          .reverse(),
      ),
    );
  });

  it('limits long-running to pull requests open over a month with activity in the last month', async () => {
    const { clock, sim, repo, list } = await setup({ pullsPerRepo: 400 });
    clock.t = DATA_END_MS + 86_400_000;
    const all = sim.pullRequests(repo);
    const monthAgo = clock.t - 30 * 86_400_000;
    const expected = all
      .filter((p) => p.state === 'open')
      .filter((p) => Date.parse(p.created_at) <= monthAgo && Date.parse(p.updated_at) >= monthAgo)
      .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.number - b.number)
      .map((p) => p.number);
    const got = (await list('sort=long-running')).map((p) => p.number);
    expect(expected.length).toBeGreaterThan(0);
    expect(got).toEqual(expected);
  });

  it('serves the full pull-request shape', async () => {
    const { base, token, repo, sim } = await setup();
    const simple = sim.pullRequests(repo).find((p) => p.merged_at !== null)!;
    const res = await call(base, `/repos/${repo}/pulls/${simple.number}`, { auth: `Bearer ${token}` });
    expect(res.status).toBe(200);
    const full = (await res.json()) as Json;
    expect(full).toMatchObject({ ...simple, merged: true, mergeable: null, merged_by: expect.objectContaining({ login: expect.any(String) }) });
    for (const f of [
      'comments',
      'review_comments',
      'commits',
      'additions',
      'deletions',
      'changed_files',
      'rebaseable',
      'mergeable_state',
      'maintainer_can_modify',
    ]) {
      expect(full).toHaveProperty(f);
    }
    expect(full.commits).toBe(sim.commits(repo, simple.number).length);
    expect(full.head.sha).toBe(sim.commits(repo, simple.number).at(-1)!.sha);
    expect(full.head.repo).toMatchObject({ name: repo.split('/')[1] });
    for (const f of [
      'id',
      'node_id',
      'html_url',
      'diff_url',
      'patch_url',
      'issue_url',
      'commits_url',
      'locked',
      'title',
      'user',
      'body',
      'labels',
      'milestone',
      'assignees',
      'requested_reviewers',
      'requested_teams',
      '_links',
      'author_association',
      'auto_merge',
      'draft',
      'merge_commit_sha',
    ]) {
      expect(simple).toHaveProperty(f);
    }
    expect((await call(base, `/repos/${repo}/pulls/99999`, { auth: `Bearer ${token}` })).status).toBe(404);
    expect((await call(base, `/repos/${repo}/pulls/abc`, { auth: `Bearer ${token}` })).status).toBe(404);
  });

  it('answers 422 validation errors for invalid list parameters', async () => {
    const { base, token, repo } = await setup({ pullsPerRepo: 3 });
    for (const [param, value] of [
      ['state', 'merged'],
      ['sort', 'name'],
      ['direction', 'sideways'],
    ]) {
      const res = await call(base, `/repos/${repo}/pulls?${param}=${value}`, { auth: `Bearer ${token}` });
      expect(res.status).toBe(422);
      expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
      expect(await res.json()).toEqual({
        message: 'Validation Failed',
        errors: [{ resource: 'PullRequest', field: param, code: 'invalid', value }],
        documentation_url: 'https://docs.github.com/rest/pulls/pulls#list-pull-requests',
        status: '422',
      });
    }
  });

  it('lists at most 250 commits of a pull request however it is paged', async () => {
    const { sim, base, token, repo } = await setup({ pullsPerRepo: 4, oversizedPulls: 1, commitsPerPull: [2, 3] });
    const big = sim.pullRequests(repo).find((p) => sim.commits(repo, p.number).length > 250)!;
    const all = sim.commits(repo, big.number);
    expect(all).toHaveLength(300);
    const { items, rels } = await walk(base, `/repos/${repo}/pulls/${big.number}/commits?per_page=100`, `Bearer ${token}`);
    expect(rels).toEqual([
      ['last', 'next'],
      ['first', 'last', 'next', 'prev'],
      ['first', 'prev'],
    ]);
    expect(items).toHaveLength(250);
    expect(items).toEqual(all.slice(0, 250));
    const page3 = await call(base, `/repos/${repo}/pulls/${big.number}/commits?per_page=100&page=3`, { auth: `Bearer ${token}` });
    expect((await page3.json()) as Json[]).toHaveLength(50);
    const page4 = await call(base, `/repos/${repo}/pulls/${big.number}/commits?per_page=100&page=4`, { auth: `Bearer ${token}` });
    expect(await page4.json()).toEqual([]);
    // The default page size walks the same 250.
    expect((await walk(base, `/repos/${repo}/pulls/${big.number}/commits`, `Bearer ${token}`)).items).toHaveLength(250);
    // The full pull request still reports the real count.
    const full = (await (await call(base, `/repos/${repo}/pulls/${big.number}`, { auth: `Bearer ${token}` })).json()) as Json;
    expect(full.commits).toBe(300);

    const c = items[0];
    expect(c).toMatchObject({
      sha: expect.stringMatching(/^[0-9a-f]{40}$/),
      commit: {
        author: { name: expect.any(String), email: expect.any(String), date: expect.any(String) },
        committer: { name: expect.any(String), email: expect.any(String), date: expect.any(String) },
        message: expect.any(String),
        tree: { sha: expect.stringMatching(/^[0-9a-f]{40}$/), url: expect.any(String) },
        comment_count: 0,
        verification: { verified: expect.any(Boolean), reason: expect.any(String) },
      },
      html_url: `https://github.com/${repo}/commit/${c.sha}`,
      parents: [{ sha: expect.stringMatching(/^[0-9a-f]{40}$/), url: expect.any(String), html_url: expect.any(String) }],
    });
    for (let i = 1; i < items.length; i++) expect(items[i].parents[0].sha).toBe(items[i - 1].sha);
    // A small pull request has everything on one page.
    const small = sim.pullRequests(repo).find((p) => p.number !== big.number)!;
    const smallRes = await call(base, `/repos/${repo}/pulls/${small.number}/commits`, { auth: `Bearer ${token}` });
    expect(smallRes.headers.get('link')).toBeNull();
    expect(((await smallRes.json()) as Json[]).length).toBeGreaterThanOrEqual(2);
  });
});

describe('GitHub simulator: rate limits', () => {
  it('sends x-ratelimit-* and a request id on every response and counts down', async () => {
    const { sim, base, clock } = await startSim({ rateLimit: { limit: 100, windowMs: 3_600_000 } });
    const token = await mintToken(sim, base, clock.t);
    const auth = `Bearer ${token}`;
    const repo = sim.repositories()[0].full_name as string;
    const responses = [
      await call(base, '/installation/repositories', { auth }),
      await call(base, `/repos/${repo}`, { auth }),
      await call(base, `/repos/${repo}/pulls?state=bogus`, { auth }),
      await call(base, '/repos/sandbox-org/nope', { auth }),
      await call(base, '/nope', { auth }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 422, 404, 404]);
    const reset = String(Math.ceil((T0 + 3_600_000) / 1000));
    responses.forEach((r, i) => {
      expect(r.headers.get('x-ratelimit-limit')).toBe('100');
      expect(r.headers.get('x-ratelimit-used')).toBe(String(i + 1));
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(99 - i));
      expect(r.headers.get('x-ratelimit-reset')).toBe(reset);
      expect(r.headers.get('x-ratelimit-resource')).toBe('core');
      expect(r.headers.get('x-github-request-id')).toMatch(/^[0-9A-F]{4}:[0-9A-F]{5}:[0-9A-F]{7}:[0-9A-F]{7}:[0-9A-F]{8}$/);
      expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    });
    // Errors before authentication carry the headers too.
    for (const r of [
      await call(base, '/installation/repositories', { auth: 'Bearer ghs_nope' }),
      await call(base, '/installation/repositories', { auth, headers: { 'x-github-api-version': '2020-01-01' } }),
    ]) {
      expect(r.headers.get('x-ratelimit-remaining')).not.toBeNull();
      expect(r.headers.get('x-github-request-id')).not.toBeNull();
    }

    // /rate_limit reports the bucket and does not count.
    const rl = await call(base, '/rate_limit', { auth });
    const body = (await rl.json()) as Json;
    expect(body.resources.core).toEqual({ limit: 100, used: 5, remaining: 95, reset: Number(reset) });
    expect(body.rate).toEqual(body.resources.core);
    expect(rl.headers.get('x-ratelimit-used')).toBe('5');
    expect((await call(base, '/rate_limit', { auth })).headers.get('x-ratelimit-used')).toBe('5');
  });

  it('exhausts with 403 and remaining 0, resets at x-ratelimit-reset, and counts requests made while exhausted', async () => {
    const { sim, base, clock } = await startSim({ rateLimit: { limit: 3, windowMs: 60_000 } });
    const token = await mintToken(sim, base, clock.t);
    const auth = `Bearer ${token}`;
    const first = T0;
    for (let i = 0; i < 3; i++) {
      clock.t = first + i * 1_000;
      expect((await call(base, '/installation/repositories', { auth })).status).toBe(200);
    }
    clock.t = first + 5_000;
    const limited = await call(base, '/installation/repositories', { auth });
    expect(limited.status).toBe(403);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('retry-after')).toBeNull();
    const resetS = Number(limited.headers.get('x-ratelimit-reset'));
    expect(resetS).toBe(Math.ceil((first + 60_000) / 1000));
    expect(await limited.json()).toEqual({
      message: 'API rate limit exceeded for installation ID 1001.',
      documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
      status: '403',
    });
    // A well-behaved client stops at its first 403; these two are hammering.
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(403);
    clock.t = resetS * 1000 - 1;
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(403);
    // /rate_limit still answers while exhausted and is not "while exhausted" traffic.
    expect((await call(base, '/rate_limit', { auth })).status).toBe(200);
    expect(sim.stats()).toMatchObject({ primaryLimited: 3, requestsWhileExhausted: 3 });

    clock.t = resetS * 1000;
    const after = await call(base, '/installation/repositories', { auth });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(after.headers.get('x-ratelimit-reset')).toBe(String(Math.ceil((resetS * 1000 + 60_000) / 1000)));
    expect(sim.stats().requestsWhileExhausted).toBe(3);
  });

  it('uses 429 when configured and exhausts on demand with exhaustRateLimit', async () => {
    const { sim, base, clock } = await startSim({ rateLimit: { exhaustedStatus: 429 } });
    const token = await mintToken(sim, base, clock.t);
    const auth = `Bearer ${token}`;
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(200);
    sim.exhaustRateLimit(1001, { resetInMs: 30_000 });
    const res = await call(base, '/installation/repositories', { auth });
    expect(res.status).toBe(429);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(Math.ceil((T0 + 30_000) / 1000)));
    expect(((await res.json()) as Json).status).toBe('429');
    // Other installations' (and the App's) budgets are separate.
    const jwt = await mintJwt(sim, clock.t);
    expect((await call(base, '/app', { auth: `Bearer ${jwt}` })).status).toBe(200);
    clock.t += 30_000;
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(200);
    sim.setRateLimit({ limit: 1 });
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(429);
    expect(sim.stats().primaryLimited).toBe(2);
  });

  it('answers secondary limits with and without retry-after', async () => {
    const { sim, base, clock } = await startSim();
    const token = await mintToken(sim, base, clock.t);
    const auth = `Bearer ${token}`;
    sim.triggerSecondaryLimit(1);
    const a = await call(base, '/installation/repositories', { auth });
    expect(a.status).toBe(403);
    expect(a.headers.get('retry-after')).toBe('60');
    expect(Number(a.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);
    const body = (await a.json()) as Json;
    expect(body.message).toBe(
      `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${a.headers.get('x-github-request-id')}.`,
    );
    expect(body.status).toBe('403');
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(200);

    sim.triggerSecondaryLimit(2, { retryAfterSeconds: null, status: 429 });
    for (let i = 0; i < 2; i++) {
      const r = await call(base, '/installation/repositories', { auth });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBeNull();
      expect(((await r.json()) as Json).message).toMatch(/^You have exceeded a secondary rate limit/);
    }
    sim.triggerSecondaryLimit(1, { retryAfterSeconds: 7 });
    expect((await call(base, '/installation/repositories', { auth })).headers.get('retry-after')).toBe('7');
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(200);
    expect(sim.stats()).toMatchObject({ secondaryLimited: 4, primaryLimited: 0, requestsWhileExhausted: 0 });
  });

  it('answers a conditional request with a free 304', async () => {
    const { sim, base, clock } = await startSim();
    const auth = `Bearer ${await mintToken(sim, base, clock.t)}`;
    const first = await call(base, '/installation/repositories', { auth });
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"/);
    const again = await call(base, '/installation/repositories', { auth, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get('x-ratelimit-used')).toBe('1');
  });
});

describe('GitHub simulator: request hygiene', () => {
  it('rejects a request without User-Agent with 403', async () => {
    const { sim, base, clock } = await startSim();
    const token = await mintToken(sim, base, clock.t);
    const res = await rawGet(base, '/installation/repositories', { authorization: `Bearer ${token}` });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).message).toMatch(/User-Agent header/);
    expect(res.headers['x-ratelimit-remaining']).toBeDefined();
    const ok = await rawGet(base, '/installation/repositories', { authorization: `Bearer ${token}`, 'user-agent': UA });
    expect(ok.status).toBe(200);
  });

  it('accepts API versions 2022-11-28 and 2026-03-10 and rejects others with 400', async () => {
    const { sim, base, clock } = await startSim();
    const auth = `Bearer ${await mintToken(sim, base, clock.t)}`;
    const repo = sim.repositories()[0].full_name as string;
    const bad = await call(base, `/repos/${repo}`, { auth, headers: { 'x-github-api-version': 'v3' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).message).toMatch(/"v3", is not a supported version/);

    const v2022 = (await (await call(base, `/repos/${repo}`, { auth })).json()) as Json;
    expect(v2022).toHaveProperty('has_downloads');
    const res = await call(base, `/repos/${repo}`, { auth, headers: { 'x-github-api-version': '2026-03-10' } });
    expect(res.headers.get('x-github-api-version-selected')).toBe('2026-03-10');
    expect((await res.json()) as Json).not.toHaveProperty('has_downloads');
    const rl = (await (await call(base, '/rate_limit', { auth, headers: { 'x-github-api-version': '2026-03-10' } })).json()) as Json;
    expect(rl).not.toHaveProperty('rate');
    expect(rl.resources.core.limit).toBe(5000);
  });

  it('injects failures and latency', async () => {
    const { sim, base, clock } = await startSim();
    const auth = `Bearer ${await mintToken(sim, base, clock.t)}`;
    sim.failNext(2, 502);
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(502);
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(502);
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(200);
    sim.setLatency(120);
    const t = Date.now();
    expect((await call(base, '/installation/repositories', { auth })).status).toBe(200);
    expect(Date.now() - t).toBeGreaterThanOrEqual(110);
    sim.setLatency(0);
    expect(sim.stats().byStatus).toEqual({ 200: 2, 201: 1, 502: 2 });
  });

  it('validates options strictly', () => {
    expect(() => createGitHubSimulator({ bogus: 1 } as unknown as GitHubSimulatorOptions)).toThrow();
    expect(() => createGitHubSimulator({ commitsPerPull: [5, 2] })).toThrow();
    expect(() => createGitHubSimulator({ pullsPerRepo: 1, oversizedPulls: 6 })).toThrow();
    expect(() =>
      createGitHubSimulator({
        installations: [
          { id: 1, account: { login: 'a', type: 'User' }, repositoryCount: 1 },
          { id: 1, account: { login: 'b', type: 'User' }, repositoryCount: 1 },
        ],
      }),
    ).toThrow();
    const o = GitHubSimulatorOptionsSchema.parse({});
    expect(o).toMatchObject({
      seed: 1,
      app: { id: 123456, slug: 'weft-sandbox', name: 'Weft Sandbox' },
      installations: [{ id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 5 }],
      pullsPerRepo: 30,
      commitsPerPull: [1, 12],
      oversizedPulls: 0,
      rateLimit: { limit: 5000, windowMs: 3_600_000, exhaustedStatus: 403 },
      tokenTtlMs: 3_600_000,
      latencyMs: 0,
    });
  });
});

describe('GitHub simulator: determinism and mutations', () => {
  it('serves identical data for the same seed and different data for another seed', async () => {
    const a = await startSim({ seed: 42, oversizedPulls: 1 });
    const b = await startSim({ seed: 42, oversizedPulls: 1 });
    const c = await startSim({ seed: 43, oversizedPulls: 1 });
    const snapshot = async (ctx: { sim: GitHubSimulator; base: string; clock: { t: number } }) => {
      const auth = `Bearer ${await mintToken(ctx.sim, ctx.base, ctx.clock.t)}`;
      const texts: string[] = [];
      const repos = (await (await call(ctx.base, '/installation/repositories', { auth })).json()) as Json;
      texts.push(JSON.stringify(repos));
      for (const r of repos.repositories.slice(0, 2)) {
        const pulls = (await (await call(ctx.base, `/repos/${r.full_name}/pulls?state=all`, { auth })).json()) as Json[];
        texts.push(JSON.stringify(pulls));
        texts.push(await (await call(ctx.base, `/repos/${r.full_name}/pulls/${pulls[0].number}`, { auth })).text());
        texts.push(await (await call(ctx.base, `/repos/${r.full_name}/pulls/${pulls[0].number}/commits`, { auth })).text());
      }
      return texts.join('\n').split(ctx.base).join('<base>');
    };
    const sa = await snapshot(a);
    expect(sa).toBe(await snapshot(b));
    expect(sa).not.toBe(await snapshot(c));
    expect(a.sim.app.clientId).toBe(b.sim.app.clientId);
    expect(a.sim.app.clientId).not.toBe(c.sim.app.clientId);

    // Same operations, same results.
    const repo = a.sim.repositories()[0].full_name as string;
    expect(a.sim.updatePullRequests(repo, 5)).toEqual(b.sim.updatePullRequests(repo, 5));
    expect(a.sim.addPullRequests(repo, 3)).toEqual(b.sim.addPullRequests(repo, 3));
    expect(JSON.stringify(a.sim.pullRequests(repo)).split(a.base).join('')).toBe(JSON.stringify(b.sim.pullRequests(repo)).split(b.base).join(''));
  });

  it('moves an updated pull request to the top of sort=updated&direction=desc', async () => {
    const { sim, base, clock } = await startSim();
    const auth = `Bearer ${await mintToken(sim, base, clock.t)}`;
    const repo = sim.repositories()[0].full_name as string;
    const before = sim.pullRequests(repo, { sort: 'updated', direction: 'desc' });
    const target = before[before.length - 1].number as number;
    clock.t += 5_000;
    expect(sim.updatePullRequests(repo, [target])).toEqual([target]);
    const res = await call(base, `/repos/${repo}/pulls?state=all&sort=updated&direction=desc&per_page=5`, { auth });
    const top = ((await res.json()) as Json[])[0];
    expect(top.number).toBe(target);
    expect(top.updated_at).toBe(iso(clock.t));

    // New pull requests are open and newest.
    clock.t += 5_000;
    const added = sim.addPullRequests(repo, 2);
    const open = (await (await call(base, `/repos/${repo}/pulls?per_page=2`, { auth })).json()) as Json[];
    expect(open.map((p) => p.number)).toEqual([...added].reverse());
    expect(open[0]).toMatchObject({ state: 'open', created_at: iso(clock.t), merged_at: null });

    // Pushed commits show up in the list and bump the head sha.
    const count = sim.addCommits(repo, added[0], 3);
    const commits = (await (await call(base, `/repos/${repo}/pulls/${added[0]}/commits`, { auth })).json()) as Json[];
    expect(commits).toHaveLength(count);
    const full = (await (await call(base, `/repos/${repo}/pulls/${added[0]}`, { auth })).json()) as Json;
    expect(full.head.sha).toBe(commits.at(-1)!.sha);
  });

  it('hides a removed repository everywhere and shows an added one', async () => {
    const { sim, base, clock } = await startSim();
    const auth = `Bearer ${await mintToken(sim, base, clock.t)}`;
    const [gone, stays] = sim.repositories().map((r) => r.full_name as string);
    const pull = sim.pullRequests(gone)[0].number;
    sim.removeRepository(gone);
    const list = (await (await call(base, '/installation/repositories', { auth })).json()) as Json;
    expect(list.total_count).toBe(4);
    expect(list.repositories.map((r: Json) => r.full_name)).not.toContain(gone);
    for (const path of [`/repos/${gone}`, `/repos/${gone}/pulls`, `/repos/${gone}/pulls/${pull}`, `/repos/${gone}/pulls/${pull}/commits`]) {
      const res = await call(base, path, { auth });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ message: 'Not Found', status: '404' });
    }
    expect((await call(base, `/repos/${stays}`, { auth })).status).toBe(200);

    const added = sim.addRepository(1001, 'brand-new');
    expect(added).toBe('sandbox-org/brand-new');
    const after = (await (await call(base, '/installation/repositories', { auth })).json()) as Json;
    expect(after.total_count).toBe(5);
    expect(after.repositories.map((r: Json) => r.full_name)).toContain(added);
    expect(((await (await call(base, `/repos/${added}/pulls?state=all&per_page=100`, { auth })).json()) as Json[]).length).toBe(30);
  });

  it('serves thousands of pull requests (a page deep in the list)', async () => {
    const { sim, base, clock } = await startSim({
      installations: [{ id: 1001, account: { login: 'big-org', type: 'Organization' }, repositoryCount: 2 }],
      pullsPerRepo: 5_000,
    });
    const auth = `Bearer ${await mintToken(sim, base, clock.t)}`;
    const repo = sim.repositories()[0].full_name as string;
    const res = await call(base, `/repos/${repo}/pulls?state=all&sort=updated&direction=desc&per_page=100&page=7`, { auth });
    expect((await res.json()) as Json[]).toHaveLength(100);
    expect(parseLink(res.headers.get('link')).last).toContain('page=50');
  });
});

describe('GitHub simulator: updating a pull request (PATCH /repos/{o}/{r}/pulls/{n})', () => {
  it('applies title, body and state, answers the full pull request, and the listing by update shows it first', async () => {
    const { sim, base, clock } = await startSim({ installations: [{ id: 1001, account: { login: 'acme', type: 'Organization' }, repositoryCount: 1 }] });
    const token = await mintToken(sim, base, clock.t);
    const repo = sim.repositories(1001)[0].full_name as string;
    const pull = sim.pullRequests(repo, { state: 'open', sort: 'updated', direction: 'asc' })[0] as any;
    clock.t += 60_000;
    const patch = (number: number, body: unknown, auth = `token ${token}`) =>
      call(base, `/repos/${repo}/pulls/${number}`, { method: 'PATCH', auth, body: typeof body === 'string' ? body : JSON.stringify(body) });

    const res = await patch(pull.number, { title: 'New title', body: null, state: 'closed' });
    expect(res.status).toBe(200);
    const updated = (await res.json()) as Json;
    expect(updated).toMatchObject({ number: pull.number, title: 'New title', body: null, state: 'closed', merged: false, merged_at: null });
    expect(updated.updated_at).toBe(iso(Math.floor(clock.t / 1000) * 1000));
    expect(updated.closed_at).toBe(updated.updated_at);
    const first = sim.pullRequests(repo, { sort: 'updated', direction: 'desc' })[0] as any;
    expect(first).toMatchObject({ number: pull.number, title: 'New title', state: 'closed' });
    // Reopened: closed_at cleared; the title stays as set.
    expect(await (await patch(pull.number, { state: 'open' })).json()).toMatchObject({ state: 'open', closed_at: null, title: 'New title' });

    const invalid = await patch(pull.number, { title: '  ', state: 'merged' });
    expect(invalid.status).toBe(422);
    expect(await invalid.json()).toMatchObject({
      message: 'Validation Failed',
      errors: [
        { resource: 'PullRequest', field: 'title', code: 'missing_field' },
        { resource: 'PullRequest', field: 'state', code: 'invalid', value: 'merged' },
      ],
    });
    const merged = sim.pullRequests(repo).find((p: any) => p.merged_at !== null) as any;
    const reopen = await patch(merged.number, { state: 'open' });
    expect(reopen.status).toBe(422);
    expect(((await reopen.json()) as Json).errors[0]).toMatchObject({ field: 'state', code: 'custom' });
    expect((await patch(pull.number, '{nope')).status).toBe(400);
    expect((await patch(pull.number, '[1]')).status).toBe(400);
    expect((await patch(999_999, { title: 'x' })).status).toBe(404);
    expect((await patch(pull.number, { title: 'x' }, null as never)).status).toBe(401);

    // A token minted with pull_requests: read may not write.
    const readOnly = await mintToken(sim, base, clock.t, 1001, { permissions: { pull_requests: 'read', metadata: 'read' } });
    const forbidden = await patch(pull.number, { title: 'x' }, `token ${readOnly}`);
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as Json).message).toBe('Resource not accessible by integration');
    expect((sim.pullRequests(repo).find((p: any) => p.number === pull.number) as any).title).toBe('New title');
  });
});
