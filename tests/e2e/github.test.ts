import { connectGitHub, createGitHubIntegration, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';
import { readAllRecordsTyped } from '../support/weft-client';
import { listRecords, type RecordModel } from '../../cli/api-client/client';

/** Every record of a GitHub model of a connection, typed as that model. */
const readRecords = <M extends RecordModel>(stack: WeftStack, connectionId: string, model: M, filter?: string) =>
  readAllRecordsTyped(stack.client, { model, connectionId, providerConfigKey: 'github', filter });

const INSTALLATION = 1001;

/** GitHub App integration end to end: REST → Temporal → GitHub simulator → records → REST. */
describe('GitHub (App installation), end to end', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({
      github: {
        seed: 21,
        installations: [{ id: INSTALLATION, account: { login: 'acme', type: 'Organization' }, repositoryCount: 4 }],
        pullsPerRepo: 120,
        commitsPerPull: [1, 4],
        oversizedPulls: 1,
      },
    });
    await createGitHubIntegration(stack);
    const res = await connectGitHub(stack, 'gh-user');
    expect(res.status).toBe(201);
    // repositories and pull-requests start by themselves with the connection.
    await stack.waitForSync('gh-user', 'repositories', { providerConfigKey: 'github' });
    await stack.waitForSync('gh-user', 'pull-requests', { providerConfigKey: 'github' });
    // The connection response never carries the minted installation token or the key.
    expect(JSON.stringify(res.body)).not.toMatch(/ghs_|PRIVATE KEY/);
  });
  afterAll(async () => stack?.shutdown());

  test('an unknown installation is refused and nothing is stored', async () => {
    const res = await connectGitHub(stack, 'gh-nobody', 999_999);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_credentials');
    const list = await stack.client.GET('/connections', { params: { query: { connectionId: 'gh-nobody' } } });
    expect(list.data?.connections).toEqual([]);
  });

  test('pull-requests: incremental; a second run fetches only what changed since the first', async () => {
    // The first run started with the connection.
    const repos = stack.github.repositories(INSTALLATION).map((r) => r.full_name as string);
    const total = repos.reduce((n, r) => n + stack.github.pullRequests(r).length, 0);
    expect(await readRecords(stack, 'gh-user', 'PullRequest')).toHaveLength(total);

    const repo = repos[0];
    const updated = stack.github.updatePullRequests(repo, 3);
    const added = stack.github.addPullRequests(repo, 2);
    stack.github.resetStats();
    const second = await runSync(stack, 'github', 'gh-user', 'pull-requests');
    expect(second.result.PullRequest).toEqual({ added: 2, updated: 3, deleted: 0 });
    // One page per repository: the walk stops at the first pull request it saw before.
    const pullPages = stack.github.requestLog().filter((e) => /\/pulls$/.test(e.path));
    expect(pullPages).toHaveLength(repos.length);

    const byNumber = new Map((await readRecords(stack, 'gh-user', 'PullRequest')).filter((p) => p.repository === repo).map((p) => [p.number, p]));
    for (const n of [...updated, ...added]) {
      const sim = stack.github.pullRequests(repo).find((p: any) => p.number === n) as any;
      expect(byNumber.get(n)).toMatchObject({ title: sim.title, state: sim.state, updated_at: sim.updated_at, head_ref: sim.head.ref, author: sim.user.login });
    }
  });

  test('commits: pull commits with the 250 cap noted, incremental on the next run', async () => {
    await stack.client.POST('/connections/metadata', {
      body: {
        connection_id: 'gh-user',
        provider_config_key: 'github',
        metadata: { repositories: stack.github.repositories(INSTALLATION).map((r) => r.full_name) },
      },
    });
    const first = await runSync(stack, 'github', 'gh-user', 'commits');
    const records = await readRecords(stack, 'gh-user', 'Commit');
    expect(records.length).toBe(first.result.Commit.added);
    // The oversized pull request has 300 commits; GitHub lists 250.
    const perPull = new Map<string, number>();
    for (const c of records) perPull.set(`${c.repository}#${c.pull_number}`, (perPull.get(`${c.repository}#${c.pull_number}`) ?? 0) + 1);
    expect(Math.max(...perPull.values())).toBe(250);
    expect(stack.logs.some((l) => l.includes('250-commit listing cap'))).toBe(true);
    const anyCommit = records[0];
    const simCommit = stack.github.commits(anyCommit.repository!, anyCommit.pull_number!).find((c: any) => c.sha === anyCommit.sha) as any;
    expect(anyCommit).toMatchObject({
      message: simCommit.commit.message,
      author_email: simCommit.commit.author.email,
      parents: simCommit.parents.map((p: any) => p.sha),
    });

    const repo = stack.github.repositories(INSTALLATION)[1].full_name as string;
    // Pushing to an open pull request (GitHub refuses commits on closed ones).
    const pull = (stack.github.pullRequests(repo, { state: 'open' })[0] as any).number as number;
    stack.github.addCommits(repo, pull, 2);
    const second = await runSync(stack, 'github', 'gh-user', 'commits');
    expect(second.result.Commit).toEqual({ added: 2, updated: 0, deleted: 0 });
  });

  test("a dead installation token in a sync: re-minted once, and the 401 budget headers (an anonymous caller's) do not slow the repeat", async () => {
    stack.github.expireTokens();
    await runSync(stack, 'github', 'gh-user', 'repositories');
    // Entries are written in batches a few ms after their calls: what the run logged, written now.
    await stack.core.stores.requestLogs.flush();
    const logs = (await stack.client.GET('/logs', { params: { query: { connection_id: 'gh-user', operation: 'sync:repositories', limit: 20 } } })).data!.logs;
    const i = logs.findIndex((e) => e.status === 401);
    expect(i).toBeGreaterThan(0); // newest first: the repeat comes before it
    expect(logs[i - 1]).toMatchObject({ status: 200, attempt: 2 });
    // Read as the account's, they would have held the repeat back (its log entry counts the wait).
    expect(logs[i - 1].rate_limit_wait_ms).toBe(0);
  });

  test('repositories: every repository of the installation; one removed from it is deleted', async () => {
    const expected = stack.github
      .repositories(INSTALLATION)
      .map((r) => r.full_name)
      .sort();
    let records = await readRecords(stack, 'gh-user', 'Repository');
    expect(records.map((r) => r.full_name).sort()).toEqual(expected);
    const sample = stack.github.repositories(INSTALLATION)[0] as any;
    const record = records.find((r) => r.full_name === sample.full_name);
    expect(record).toMatchObject({
      id: String(sample.id),
      owner: sample.owner.login,
      private: sample.private,
      html_url: sample.html_url,
      default_branch: sample.default_branch,
    });

    stack.github.removeRepository(expected[0]);
    const second = await runSync(stack, 'github', 'gh-user', 'repositories');
    expect(second.result.Repository).toEqual({ added: 0, updated: 0, deleted: 1 });
    records = await readRecords(stack, 'gh-user', 'Repository', 'deleted');
    expect(records.map((r) => r.full_name)).toEqual([expected[0]]);
    // Unified shape of the same records.
    const unified = await listRecords(stack.client, { model: 'UnifiedRepository', connectionId: 'gh-user', providerConfigKey: 'github', limit: 1 });
    expect(Object.keys(unified.records[0]).sort()).toEqual([
      '_weft_metadata',
      'default_branch',
      'description',
      'full_name',
      'id',
      'is_private',
      'name',
      'owner',
      'updated_at',
      'web_url',
    ]);
  });
});

describe('GitHub rate limits', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({
      maxInlineWaitMs: 1_000,
      github: {
        seed: 5,
        installations: [{ id: INSTALLATION, account: { login: 'tight', type: 'Organization' }, repositoryCount: 3 }],
        pullsPerRepo: 12,
        commitsPerPull: [1, 2],
        rateLimit: { limit: 15, windowMs: 2_500 },
      },
    });
    await createGitHubIntegration(stack);
    expect((await connectGitHub(stack, 'gh-tight')).status).toBe(201);
    await stack.waitForSync('gh-tight', 'repositories', { providerConfigKey: 'github' });
  });
  afterAll(async () => stack?.shutdown());

  test('a run needing several windows paces itself and never sends while the budget is exhausted', async () => {
    stack.github.resetStats();
    const summary = await runSync(stack, 'github', 'gh-tight', 'commits');
    const expected = stack.github
      .repositories(INSTALLATION)
      .reduce(
        (n, r) =>
          n + stack.github.pullRequests(r.full_name as string).reduce((m, p: any) => m + stack.github.commits(r.full_name as string, p.number).length, 0),
        0,
      );
    expect(summary.result.Commit.added).toBe(expected);
    const stats = stack.github.stats();
    expect(stats.requests).toBeGreaterThan(2 * 15); // it really needed more than two windows
    expect(stats.primaryLimited).toBe(0);
    expect(stats.requestsWhileExhausted).toBe(0);
  });

  test('a budget exhausted by someone else is waited out until the reset, without failing the run', async () => {
    stack.github.resetStats();
    stack.github.exhaustRateLimit(INSTALLATION, { resetInMs: 2_000 });
    const started = Date.now();
    await runSync(stack, 'github', 'gh-tight', 'repositories', { reset: true });
    expect(await readRecords(stack, 'gh-tight', 'Repository')).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    const stats = stack.github.stats();
    // Exactly one request learned of the exhaustion (403, remaining 0); none followed it before the reset.
    expect(stats.primaryLimited).toBe(1);
    expect(stats.requestsWhileExhausted).toBe(1);
    const status = await stack.client.GET('/sync/status', {
      params: { query: { provider_config_key: 'github', syncs: 'repositories', connection_id: 'gh-tight' } },
    });
    expect(status.data?.syncs[0].latestExecutionStatus).toBe('SUCCESS');
  });

  test('a secondary limit is honoured for its retry-after', async () => {
    stack.github.resetStats();
    stack.github.triggerSecondaryLimit(1, { retryAfterSeconds: 2 });
    await runSync(stack, 'github', 'gh-tight', 'repositories');
    const log = stack.github.requestLog();
    const limited = log.findIndex((e) => e.status === 403 || e.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    expect(log[limited + 1].at - log[limited].at).toBeGreaterThanOrEqual(2_000);
    expect(stack.github.stats().secondaryLimited).toBe(1);
  });
});
