import { readFileSync } from 'node:fs';
import { createAppJwt, readAppPrivateKey } from '../../auth/github-app';
import { github } from '../../integrations/github';
import type { ConnectionInfo } from '../../runtime/types';
import { createGitHubSimulator, DEFAULT_USER, type GitHubSimulator } from '../../sandbox/github';
import { Browser } from '../support/form-browser';
import { liveContext, type LiveRun } from '../mocks-runtime/live-recording';
import { OpenApi30Contract, type ProviderAnswer } from '../support/provider-contract';

// The GitHub simulator stands in for api.github.com in every test, so what it answers must be
// what GitHub's published REST description (the npm package @octokit/openapi) says GitHub
// answers. Every sync and action of the GitHub integration runs here against the simulator,
// as an App installation and as an OAuth user, plus the calls Weft itself makes for the
// integration (minting installation tokens, checking new credentials, listing a user's
// installations); each answer is checked against the description's schema for its path,
// method and status.

const APP_CALLBACK = 'http://127.0.0.1:4567/app-auth/connect';
const USER_AGENT = 'weft-tests/1.0';

// Read as data: a type inferred for the 13 MB document would only slow the compiler down.
const description = JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8'));
const contract = new OpenApi30Contract(description, '#/components/schemas/basic-error');
let sim: GitHubSimulator;
let base: string;
const answers: ProviderAnswer[] = [];

beforeAll(async () => {
  sim = createGitHubSimulator({
    seed: 26,
    installations: [{ id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 3 }],
    users: [{ ...DEFAULT_USER, organizations: ['sandbox-org'] }],
    pullsPerRepo: 40,
    commitsPerPull: [1, 3],
    app: { callbackUrls: [APP_CALLBACK] },
  });
  base = await sim.start();
});
afterAll(() => sim.stop());

/** A request as Weft's provider client sends it: the provider's default headers and a token. */
async function call(method: string, endpoint: string, token: string, body?: unknown): Promise<ProviderAnswer> {
  const res = await fetch(base + endpoint, {
    method,
    headers: {
      ...github.provider.defaultHeaders,
      'user-agent': USER_AGENT,
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const answer = { method, path: new URL(endpoint, base).pathname, status: res.status, body: text ? JSON.parse(text) : null };
  answers.push(answer);
  return answer;
}

/** `POST /app/installations/{id}/access_tokens` with the App's JWT, as auth/ mints tokens. */
async function installationToken(body?: unknown): Promise<string> {
  const jwt = await createAppJwt(String(sim.app.id), readAppPrivateKey(sim.appPrivateKeyPem));
  const endpoint = github.provider.app!.accessTokenEndpoint.replace('{installation_id}', '1001');
  const minted = await call('POST', endpoint, jwt, body);
  expect(minted.status).toBe(201);
  return (minted.body as { token: string }).token;
}

/** A user token from the web flow of `clientId` (the OAuth App's, or the GitHub App's own). */
async function userToken(clientId: string, clientSecret: string, redirectUri: string): Promise<string> {
  const browser = new Browser();
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, scope: github.provider.oauth!.defaultScopes!.join(' '), state: 's' });
  let page = await browser.follow(await browser.request(`${base}/login/oauth/authorize?${query}`), base);
  if (page.html.includes('action="/session"')) {
    page = await browser.follow(await browser.submit(page, /^\/session$/, { login: DEFAULT_USER.login, password: DEFAULT_USER.password }), base);
  }
  if (page.status === 200) page = await browser.submit(page, /^\/login\/oauth\/authorize$/, { authorize: '1' });
  const code = new URL(page.location!).searchParams.get('code');
  const res = await fetch(`${base}/login/oauth/access_token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
    body: new URLSearchParams({ client_id: clientId, client_secret: clientSecret, code: code!, redirect_uri: redirectUri }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Runs every sync of the integration, then the action, with the token; keeps their answers. */
async function runIntegration(authMode: 'APP' | 'OAUTH2', token: string): Promise<LiveRun> {
  const connection: ConnectionInfo = {
    connection_id: `contract-${authMode}`,
    provider_config_key: 'github',
    provider: 'github',
    auth_mode: authMode,
    connection_config: {},
    metadata: {},
  };
  const live = liveContext({
    integration: github,
    simulatorUrl: base,
    headers: { ...github.provider.defaultHeaders, 'user-agent': USER_AGENT, authorization: `Bearer ${token}` },
    connection,
  });
  for (const sync of github.syncs) await sync.exec(live.ctx);
  const pulls = live.run.batchSave.PullRequest as Array<{ repository: string; number: number; state: string; merged_at: string | null }>;
  const update = github.actions.find((a) => a.name === 'update-pull-request')!;
  const open = pulls.find((p) => p.state === 'open')!;
  await update.exec(live.ctx, { repository: open.repository, pull_number: open.number, title: 'Checked against the contract' });
  // GitHub's refusals the action turns into its own errors: 422 (a merged pull request cannot
  // be reopened) and 404 (no such pull request).
  const merged = pulls.find((p) => p.merged_at !== null)!;
  await expect(update.exec(live.ctx, { repository: merged.repository, pull_number: merged.number, state: 'open' })).rejects.toMatchObject({
    code: 'pull_request_update_rejected',
  });
  await expect(update.exec(live.ctx, { repository: open.repository, pull_number: 999_999, title: 'x' })).rejects.toMatchObject({
    code: 'pull_request_not_found',
  });
  for (const x of live.run.exchanges) {
    answers.push({ method: x.request.method!, path: new URL(x.request.endpoint, base).pathname, status: x.response.status, body: x.response.data });
  }
  return live.run;
}

describe("the GitHub simulator answers as GitHub's published REST description says", () => {
  it('for every call of the integration and of Weft on its behalf', async () => {
    // App installation mode: the token Weft mints, the credentials check, every sync and the action.
    const token = await installationToken();
    const verify = github.provider.verify!;
    await call(verify.method, `${verify.endpoint}?${new URLSearchParams(verify.params as Record<string, string>)}`, token);
    const app = await runIntegration('APP', token);
    // A token without write access to pull requests: the 403 the action reports.
    const readOnly = await installationToken({ permissions: { metadata: 'read', pull_requests: 'read' } });
    const { repository, number } = app.batchSave.PullRequest[0] as { repository: string; number: number };
    expect((await call('PATCH', `/repos/${repository}/pulls/${number}`, readOnly, { title: 'x' })).status).toBe(403);

    // OAuth App mode: a user's token, checked on the provider's OAuth verify endpoint.
    const oauthToken = await userToken('Ov23liWeftSandbox001', 'weft-sandbox-oauth-client-secret', 'http://127.0.0.1/oauth/callback');
    await call(github.provider.oauth!.verify!.method, github.provider.oauth!.verify!.endpoint, oauthToken);
    await runIntegration('OAUTH2', oauthToken);
    // The App's own user token: how Weft checks who installed the App (the installations a user reaches).
    const appUserToken = await userToken(sim.app.clientId, sim.app.clientSecret, APP_CALLBACK);
    await call('GET', github.provider.app!.userInstallations!.endpoint, appUserToken);

    const checked = answers.map((a) => contract.check(a));
    // Every operation the integration relies on was exercised, with the statuses it handles.
    expect([...new Set(checked.map((c) => c.operation))].sort()).toEqual([
      'GET /installation/repositories 200',
      'GET /repos/{owner}/{repo}/pulls 200',
      'GET /repos/{owner}/{repo}/pulls/{pull_number}/commits 200',
      'GET /user 200',
      'GET /user/installations 200',
      'GET /user/repos 200',
      'PATCH /repos/{owner}/{repo}/pulls/{pull_number} 200',
      'PATCH /repos/{owner}/{repo}/pulls/{pull_number} 403',
      'PATCH /repos/{owner}/{repo}/pulls/{pull_number} 404 (undocumented: #/components/schemas/basic-error)',
      'PATCH /repos/{owner}/{repo}/pulls/{pull_number} 422',
      'POST /app/installations/{installation_id}/access_tokens 201',
    ]);
    // The pull request lists carried requested teams, so their shape was checked too.
    const teams = answers.flatMap((a) =>
      a.path.endsWith('/pulls') && Array.isArray(a.body) ? a.body.flatMap((p: { requested_teams: unknown[] }) => p.requested_teams) : [],
    );
    expect(teams.length).toBeGreaterThan(0);
    expect(checked.filter((c) => c.problem !== null)).toEqual([]);
  });
});
