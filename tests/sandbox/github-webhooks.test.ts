import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import { githubWebhooks } from '../../integrations/github/webhooks';
import { createGitHubSimulator, type GitHubSimulator, type GitHubSimulatorOptions } from '../../sandbox/github';
import { WebhookReceiver, type ReceivedRequest } from './webhook-receiver';

type Json = Record<string, any>;

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const SECRET = 'sandbox-webhook-secret-0123456789';
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const sims: GitHubSimulator[] = [];
const receivers: WebhookReceiver[] = [];

afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.stop()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function setup(options: GitHubSimulatorOptions = {}) {
  const receiver = new WebhookReceiver();
  receivers.push(receiver);
  await receiver.start();
  const clock = { t: T0 };
  const sim = createGitHubSimulator({ now: () => clock.t, ...options });
  sims.push(sim);
  const base = await sim.start();
  sim.setAppWebhook({ url: `${receiver.url}/hooks/github`, secret: SECRET });
  const repo = sim.repositories(1001)[0].full_name;
  return { sim, base, clock, receiver, repo };
}

function hmac(algorithm: 'sha1' | 'sha256', body: string, secret = SECRET): string {
  return crypto.createHmac(algorithm, secret).update(body).digest('hex');
}

/** What a receiver checks first: GitHub's headers, and the signatures over the raw body. */
function expectGitHubDelivery(r: ReceivedRequest, sim: GitHubSimulator, event: string): Json {
  expect(r.method).toBe('POST');
  expect(r.url.pathname).toBe('/hooks/github');
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.headers['user-agent']).toMatch(/^GitHub-Hookshot\/[0-9a-f]{7}$/);
  expect(r.headers['x-github-event']).toBe(event);
  expect(r.headers['x-github-delivery']).toMatch(GUID);
  expect(r.headers['x-github-hook-id']).toMatch(/^\d+$/);
  expect(r.headers['x-github-hook-installation-target-type']).toBe('integration');
  expect(r.headers['x-github-hook-installation-target-id']).toBe(String(sim.app.id));
  expect(r.headers['x-hub-signature-256']).toBe(`sha256=${hmac('sha256', r.body)}`);
  expect(r.headers['x-hub-signature']).toBe(`sha1=${hmac('sha1', r.body)}`);
  // As Weft's intake verifies it (integrations/github/webhooks.ts).
  const { header, prefix, algorithm } = githubWebhooks.signature;
  const given = Buffer.from(String(r.headers[header]));
  const expected = Buffer.from(prefix + crypto.createHmac(algorithm, SECRET).update(Buffer.from(r.body, 'utf8')).digest('hex'));
  expect(crypto.timingSafeEqual(given, expected)).toBe(true);
  expect(r.headers[githubWebhooks.deliveryIdHeader]).toBe(r.headers['x-github-delivery']);
  return JSON.parse(r.body) as Json;
}

async function installationToken(sim: GitHubSimulator, base: string, nowMs: number): Promise<string> {
  const nowS = Math.floor(nowMs / 1000);
  const jwt = await new SignJWT({ iat: nowS - 60, exp: nowS + 540, iss: sim.app.clientId })
    .setProtectedHeader({ alg: 'RS256' })
    .sign(crypto.createPrivateKey(sim.appPrivateKeyPem));
  const res = await fetch(`${base}/app/installations/1001/access_tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${jwt}`, 'user-agent': 'weft-tests' },
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as Json).token;
}

/** The pulls API's JSON as an installation token sees it, less the repositories' `permissions` (webhooks carry none). */
async function apiPull(base: string, token: string, repo: string, number: number): Promise<Json> {
  const res = await fetch(`${base}/repos/${repo}/pulls/${number}`, { headers: { authorization: `token ${token}`, 'user-agent': 'weft-tests' } });
  expect(res.status).toBe(200);
  const pull = (await res.json()) as Json;
  delete pull.head.repo.permissions;
  delete pull.base.repo.permissions;
  return pull;
}

describe('GitHub simulator: the App webhook', () => {
  it('sends pull_request opened, signed, with the pulls API JSON, in order per repository, without blocking the control call', async () => {
    const { sim, base, clock, receiver, repo } = await setup();
    receiver.hold();
    const numbers = sim.addPullRequests(repo, 3);
    // The control call returned while the receiver still holds the first delivery.
    await receiver.waitFor(1);
    expect(sim.webhookDeliveries().map((d) => d.status)).toEqual(['pending', 'pending', 'pending']);
    expect(receiver.requests).toHaveLength(1);
    receiver.release();
    await sim.flushWebhooks();

    expect(receiver.requests).toHaveLength(3);
    expect(receiver.maxConcurrent).toBe(1);
    const token = await installationToken(sim, base, clock.t);
    const bodies = receiver.requests.map((r) => expectGitHubDelivery(r, sim, 'pull_request'));
    expect(bodies.map((b) => b.number)).toEqual(numbers);
    for (const b of bodies) {
      expect(Object.keys(b)).toEqual(['action', 'number', 'pull_request', 'repository', 'organization', 'sender', 'installation']);
      expect(b.action).toBe('opened');
      expect(b.pull_request).toEqual(await apiPull(base, token, repo, b.number));
      expect(b.pull_request).toMatchObject({ state: 'open', merged: false, number: b.number });
      expect(b.repository).toMatchObject({ full_name: repo, private: expect.any(Boolean), owner: { login: 'sandbox-org', type: 'Organization' } });
      expect(b.repository.permissions).toBeUndefined();
      expect(b.organization).toMatchObject({ login: 'sandbox-org', node_id: expect.any(String), url: `${base}/orgs/sandbox-org` });
      expect(b.sender).toEqual(b.pull_request.user);
      expect(b.installation).toEqual({ id: 1001, node_id: Buffer.from('023:IntegrationInstallation1001').toString('base64') });
    }
    const log = sim.webhookDeliveries();
    expect(log.map((d) => [d.event, d.action, d.status, d.statusCode, d.ok, d.attempt, d.redelivery])).toEqual(
      Array(3).fill(['pull_request', 'opened', 'answered', 200, true, 1, false]),
    );
    expect(log.map((d) => d.id)).toEqual(receiver.requests.map((r) => r.headers['x-github-delivery']));
    expect(new Set(log.map((d) => d.id)).size).toBe(3);
    // One hook per App: every delivery names the same one.
    expect(new Set(receiver.requests.map((r) => r.headers['x-github-hook-id'])).size).toBe(1);
  });

  it('sends edited, closed (merged or not) and reopened as updatePullRequests changed each pull request', async () => {
    const { sim, receiver, repo } = await setup({ pullsPerRepo: 60 });
    const before = new Map(sim.pullRequests(repo).map((p) => [p.number, p]));
    const changed = sim.updatePullRequests(repo, 60);
    await sim.flushWebhooks();
    const after = new Map(sim.pullRequests(repo).map((p) => [p.number, p]));

    const bodies = receiver.requests.map((r) => expectGitHubDelivery(r, sim, 'pull_request'));
    const seen = new Set<string>();
    for (const number of changed) {
      const was = before.get(number)!;
      const now = after.get(number)!;
      const actions = bodies.filter((b) => b.number === number).map((b) => b.action);
      const expected: string[] = [];
      if (was.title !== now.title || was.body !== now.body) expected.push('edited');
      if (was.draft && !now.draft) expected.push('ready_for_review');
      if (was.state === 'open' && now.state === 'closed') expected.push('closed');
      if (was.state === 'closed' && now.state === 'open') expected.push('reopened');
      expect(actions).toEqual(expected);
      for (const b of bodies.filter((x) => x.number === number)) {
        seen.add(b.action === 'closed' ? `closed:${b.pull_request.merged}` : b.action);
        expect(b.pull_request).toMatchObject({ state: now.state, title: now.title, merged_at: now.merged_at });
        if (b.action === 'edited') expect(b.changes).toEqual({ title: { from: was.title }, ...(was.body !== now.body ? { body: { from: was.body } } : {}) });
        if (b.action === 'closed' && b.pull_request.merged) expect(b.sender.login).toBe(b.pull_request.merged_by.login);
      }
    }
    // The seeded changes cover every kind.
    expect([...seen].sort()).toEqual(['closed:false', 'closed:true', 'edited', 'reopened']);
  });

  it('sends what a PATCH through the API did, from the App bot', async () => {
    const { sim, base, clock, receiver, repo } = await setup();
    const token = await installationToken(sim, base, clock.t);
    const pull = sim.pullRequests(repo, { state: 'open' })[0];
    const res = await fetch(`${base}/repos/${repo}/pulls/${pull.number}`, {
      method: 'PATCH',
      headers: { authorization: `token ${token}`, 'user-agent': 'weft-tests', 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Retitled by Weft', state: 'closed' }),
    });
    expect(res.status).toBe(200);
    await sim.flushWebhooks();
    const [edited, closed] = receiver.requests.map((r) => expectGitHubDelivery(r, sim, 'pull_request'));
    expect(receiver.requests).toHaveLength(2);
    expect(edited).toMatchObject({
      action: 'edited',
      number: pull.number,
      changes: { title: { from: pull.title } },
      pull_request: { title: 'Retitled by Weft' },
    });
    expect(closed).toMatchObject({ action: 'closed', number: pull.number, pull_request: { state: 'closed', merged: false } });
    expect(closed.sender).toMatchObject({ login: 'weft-sandbox[bot]', type: 'Bot' });
    expect(edited.sender).toEqual(closed.sender);
  });

  it('sends synchronize with the old and new head when commits are pushed', async () => {
    const { sim, receiver, repo } = await setup();
    const pull = sim.pullRequests(repo, { state: 'open' })[0];
    const count = sim.addCommits(repo, pull.number, 2);
    await sim.flushWebhooks();
    expect(receiver.requests).toHaveLength(1);
    const b = expectGitHubDelivery(receiver.requests[0], sim, 'pull_request');
    const commits = sim.commits(repo, pull.number);
    expect(b).toMatchObject({ action: 'synchronize', number: pull.number, before: pull.head.sha, after: commits[commits.length - 1].sha });
    expect(b.pull_request).toMatchObject({ commits: count, head: { sha: b.after } });
    expect(Object.keys(b).slice(0, 5)).toEqual(['action', 'number', 'before', 'after', 'pull_request']);
  });

  it('sends installation_repositories added and removed', async () => {
    const { sim, receiver } = await setup();
    const name = sim.addRepository(1001, 'webhook-target');
    sim.removeRepository(name);
    await sim.flushWebhooks();
    const [added, removed] = receiver.requests.map((r) => expectGitHubDelivery(r, sim, 'installation_repositories'));
    expect(receiver.requests).toHaveLength(2);
    for (const b of [added, removed]) {
      expect(Object.keys(b)).toEqual(['action', 'installation', 'repository_selection', 'repositories_added', 'repositories_removed', 'requester', 'sender']);
      expect(b.installation).toMatchObject({ id: 1001, app_id: sim.app.id, account: { login: 'sandbox-org' } });
      expect(b.repository_selection).toBe('all');
      expect(b.sender.type).toBe('User');
    }
    const brief = { id: expect.any(Number), node_id: expect.any(String), name: 'webhook-target', full_name: name, private: expect.any(Boolean) };
    expect(added).toMatchObject({ action: 'added', repositories_added: [brief], repositories_removed: [] });
    expect(removed).toMatchObject({ action: 'removed', repositories_added: [], repositories_removed: [brief] });
  });

  it('records a failed delivery without retrying it, and redelivers it as the Redeliver button does', async () => {
    const { sim, receiver, repo } = await setup();
    receiver.answer = () => ({ status: 500, body: 'boom' });
    sim.addPullRequests(repo, 1);
    await sim.flushWebhooks();
    expect(receiver.requests).toHaveLength(1);
    const [failed] = sim.webhookDeliveries();
    expect(failed).toMatchObject({ status: 'answered', statusCode: 500, ok: false, error: 'HTTP 500', attempt: 1, redelivery: false, responseBody: 'boom' });

    receiver.answer = () => ({ status: 202 });
    sim.redeliver(failed.id);
    await sim.flushWebhooks();
    expect(receiver.requests).toHaveLength(2);
    const [first, again] = receiver.requests;
    expect(again.headers['x-github-delivery']).toBe(failed.id);
    expect(again.body).toBe(first.body);
    expect(again.headers['x-hub-signature-256']).toBe(first.headers['x-hub-signature-256']);
    expect(sim.webhookDeliveries()[1]).toMatchObject({ id: failed.id, status: 'answered', statusCode: 202, ok: true, attempt: 2, redelivery: true });
    expect(() => sim.redeliver('00000000-0000-4000-8000-000000000000')).toThrow(/no delivery/);

    // Nobody listening: an error, recorded.
    const closed = new WebhookReceiver();
    const deadUrl = await closed.start();
    await closed.close();
    sim.setAppWebhook({ url: deadUrl, secret: SECRET });
    sim.addPullRequests(repo, 1);
    await sim.flushWebhooks();
    const last = sim.webhookDeliveries().at(-1)!;
    expect(last).toMatchObject({ status: 'error', statusCode: null, ok: false });
    expect(last.error).toMatch(/ECONNREFUSED|fetch failed/);
  });

  it('sends nothing without a webhook, and no signature without a secret', async () => {
    const { sim, receiver, repo } = await setup();
    sim.setAppWebhook(null);
    sim.addPullRequests(repo, 1);
    await sim.flushWebhooks();
    expect(sim.webhookDeliveries()).toEqual([]);
    expect(receiver.requests).toEqual([]);

    sim.setAppWebhook({ url: receiver.url });
    sim.addPullRequests(repo, 1);
    await sim.flushWebhooks();
    expect(receiver.requests).toHaveLength(1);
    expect(receiver.requests[0].headers['x-hub-signature-256']).toBeUndefined();
    expect(receiver.requests[0].headers['x-hub-signature']).toBeUndefined();
    expect(receiver.requests[0].headers['x-github-event']).toBe('pull_request');
    expect(() => sim.setAppWebhook({ url: 'ftp://example.com' })).toThrow();
  });

  it('is set from the options too, and sends nothing for repositories the installation does not see', async () => {
    const receiver = new WebhookReceiver();
    receivers.push(receiver);
    await receiver.start();
    const sim = createGitHubSimulator({ now: () => T0, webhook: { url: `${receiver.url}/hooks/github`, secret: SECRET } });
    sims.push(sim);
    // The signed-in user's own repositories: no installation of the App reaches them.
    const own = sim.users()[0].repositories[0];
    sim.addPullRequests(own, 1);
    sim.addPullRequests(sim.repositories(1001)[0].full_name, 1);
    await sim.flushWebhooks();
    expect(receiver.requests).toHaveLength(1);
    expect(expectGitHubDelivery(receiver.requests[0], sim, 'pull_request').repository.full_name).toBe(sim.repositories(1001)[0].full_name);
  });
});
