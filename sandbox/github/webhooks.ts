/**
 * The GitHub App's webhook: what github.com POSTs to the App's "Webhook URL" when something
 * the App is subscribed to happens. The App subscribes to `pull_request` (and `push`);
 * every App gets `installation_repositories`. Each delivery carries GitHub's headers
 * (`X-GitHub-Event`, `X-GitHub-Delivery` a GUID, `X-GitHub-Hook-ID`,
 * `X-GitHub-Hook-Installation-Target-Type: integration` and `-Target-ID` the App id,
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` and the legacy
 * `X-Hub-Signature: sha1=…` when a secret is set, `User-Agent: GitHub-Hookshot/<hex>`) and
 * GitHub's body: `action`, `number`, `pull_request` (the pulls API's full JSON), `repository`,
 * `organization` (repositories of an organization), `sender`, `installation: {id, node_id}`.
 * GitHub sends a repository's events in order and never retries a failed delivery by itself.
 */
import crypto from 'node:crypto';
import { Rng } from '../shared/prng';
import { WebhookSender, WebhookSource } from '../shared/webhook-sender';
import { baseSha, headSha, pullBody, pullTitle, type Account, type PullRec, type RepoRec } from './data';
import { GitHubAppWebhookSchema, type GitHubAppWebhook } from './options';
import { installationJson, nodeId, pullFullJson, repoJson, simpleUser, type AppInfo, type RenderContext } from './render';
import type { GitHubStore, InstallationRec } from './store';

/** GitHub waits this long for the receiver's answer, then records the delivery as failed. */
const DELIVERY_TIMEOUT_MS = 10_000;

/** What `pull_request` `edited` / `closed` / `reopened` compare against: the pull request before the change. */
export interface PullSnapshot {
  state: 'open' | 'closed';
  merged: boolean;
  draft: boolean;
  title: string;
  body: string | null;
  baseRef: string;
  baseSha: string;
  headSha: string;
}

export function snapshotPull(pull: PullRec): PullSnapshot {
  return {
    state: pull.state,
    merged: pull.mergedMs !== null,
    draft: pull.draft,
    title: pullTitle(pull),
    body: pullBody(pull),
    baseRef: pull.baseRef,
    baseSha: baseSha(pull),
    headSha: headSha(pull),
  };
}

type Json = Record<string, unknown>;

export class GitHubWebhooks extends WebhookSource {
  private config: { url: string; secret: string | null } | null = null;
  private counter = 0;
  protected readonly sender: WebhookSender;
  /** The App's webhook id (`X-GitHub-Hook-ID`): one hook per App. */
  readonly hookId: number;
  private readonly userAgent: string;
  /** The App's bot account, the sender of what an installation token does. */
  readonly bot: Account;

  constructor(
    private readonly deps: {
      seedK: number;
      app: AppInfo;
      store: GitHubStore;
      clock: () => number;
      render: () => RenderContext;
    },
  ) {
    super();
    this.sender = new WebhookSender({ timeoutMs: DELIVERY_TIMEOUT_MS, clock: deps.clock });
    this.hookId = Rng.from(deps.seedK, 'app-hook-id').int(400_000_000, 599_999_999);
    this.userAgent = `GitHub-Hookshot/${Rng.from(deps.seedK, 'hookshot').hex(7)}`;
    this.bot = { login: `${deps.app.slug}[bot]`, id: Rng.from(deps.seedK, 'app-bot').int(100_000_000, 250_000_000), type: 'Bot' };
  }

  configure(webhook: GitHubAppWebhook | null): void {
    if (webhook === null) {
      this.config = null;
      return;
    }
    const w = GitHubAppWebhookSchema.parse(webhook);
    this.config = { url: w.url, secret: w.secret ?? null };
  }

  get enabled(): boolean {
    return this.config !== null;
  }

  // ---- events --------------------------------------------------------------------------

  /** `pull_request` `opened`. */
  pullOpened(pull: PullRec): void {
    if (!this.config) return;
    this.sendPull('opened', pull, pull.author, {});
  }

  /**
   * What GitHub sends for a change to a pull request: `edited` (title, body or base, with
   * `changes` holding the old values), `ready_for_review` (a draft marked ready), then
   * `closed` (merged or not: `pull_request.merged` tells) or `reopened`. A change that only
   * adds comments sends no `pull_request` event (comments are `issue_comment` events, which
   * the App does not subscribe to).
   */
  pullChanged(before: PullSnapshot, pull: PullRec, sender: Account): void {
    if (!this.config) return;
    const after = snapshotPull(pull);
    const changes: Json = {};
    if (after.title !== before.title) changes.title = { from: before.title };
    if (after.body !== before.body) changes.body = { from: before.body };
    if (after.baseRef !== before.baseRef) changes.base = { ref: { from: before.baseRef }, sha: { from: before.baseSha } };
    if (Object.keys(changes).length) this.sendPull('edited', pull, sender, { changes });
    if (before.draft && !after.draft) this.sendPull('ready_for_review', pull, sender, {});
    if (before.state === 'open' && after.state === 'closed') this.sendPull('closed', pull, sender, {});
    else if (before.state === 'closed' && after.state === 'open') this.sendPull('reopened', pull, sender, {});
  }

  /** `pull_request` `synchronize`: commits pushed to the head branch, `before` and `after` its old and new head. */
  pullSynchronized(beforeHeadSha: string, pull: PullRec, sender: Account): void {
    if (!this.config) return;
    this.sendPull('synchronize', pull, sender, { before: beforeHeadSha, after: headSha(pull) });
  }

  /** `installation_repositories` `added` / `removed`: a repository joins or leaves an installation. */
  repositoriesChanged(action: 'added' | 'removed', installation: InstallationRec, repos: readonly RepoRec[], sender: Account): void {
    if (!this.config || repos.length === 0) return;
    const ctx = this.deps.render();
    const brief = repos.map((r) => ({ id: r.id, node_id: nodeId('010:Repository', r.id), name: r.name, full_name: r.fullName, private: r.private }));
    const body: Json = {
      action,
      installation: installationJson(installation, this.deps.app, ctx),
      repository_selection: installation.selectedRepoIds ? 'selected' : 'all',
      repositories_added: action === 'added' ? brief : [],
      repositories_removed: action === 'removed' ? brief : [],
      requester: null,
      sender: simpleUser(sender, ctx),
    };
    this.send('installation_repositories', action, `repo:${repos[0].id}`, body);
  }

  /** Who an installation's account acts as: the account itself, or (an organization) one of its seeded members. */
  accountActor(installation: InstallationRec): Account {
    if (installation.account.type === 'User') return installation.account;
    return Rng.from(this.deps.seedK, 'org-admin', installation.account.login.toLowerCase()).pick(this.deps.store.directory.users);
  }

  // ---- sending -------------------------------------------------------------------------

  private sendPull(action: string, pull: PullRec, sender: Account, extra: Json): void {
    const ctx = this.deps.render();
    const store = this.deps.store;
    const repo = pull.repo;
    // The App hears only of repositories its installation can see.
    if (repo.installationId === null || !store.installationSees(repo.installationId, repo)) return;
    const repoCache = new Map<RepoRec, Json>();
    const repoOf = (r: RepoRec): Json => {
      let j = repoCache.get(r);
      if (!j) repoCache.set(r, (j = repoJson(r, ctx, { openPulls: r.fork ? 0 : store.openPullCount(r), permissions: false })));
      return j;
    };
    const body: Json = {
      action,
      number: pull.number,
      ...('before' in extra ? { before: extra.before, after: extra.after } : {}),
      pull_request: pullFullJson(pull, ctx, { repo: repoOf, fork: store.fork.bind(store) }),
      ...('changes' in extra ? { changes: extra.changes } : {}),
      repository: repoOf(repo),
    };
    if (repo.owner.type === 'Organization') body.organization = organizationJson(repo.owner, ctx);
    body.sender = simpleUser(sender, ctx);
    body.installation = { id: repo.installationId, node_id: nodeId('023:IntegrationInstallation', repo.installationId) };
    this.send('pull_request', action, `repo:${repo.id}`, body);
  }

  private send(event: string, action: string, lane: string, payload: Json): void {
    const config = this.config;
    if (!config) return;
    const body = JSON.stringify(payload);
    const id = Rng.from(this.deps.seedK, 'delivery', this.counter++).uuid();
    const headers: Record<string, string> = {
      accept: '*/*',
      'content-type': 'application/json',
      'user-agent': this.userAgent,
      'x-github-delivery': id,
      'x-github-event': event,
      'x-github-hook-id': String(this.hookId),
      'x-github-hook-installation-target-id': String(this.deps.app.id),
      'x-github-hook-installation-target-type': 'integration',
    };
    if (config.secret !== null) {
      headers['x-hub-signature'] = `sha1=${crypto.createHmac('sha1', config.secret).update(body).digest('hex')}`;
      headers['x-hub-signature-256'] = `sha256=${crypto.createHmac('sha256', config.secret).update(body).digest('hex')}`;
    }
    this.sender.enqueue({ id, lane, url: config.url, event, action, headers, body });
  }
}

/** The `organization` object of webhook payloads (organization-simple). */
function organizationJson(org: Account, ctx: RenderContext): Json {
  const url = `${ctx.api}/orgs/${encodeURIComponent(org.login)}`;
  return {
    login: org.login,
    id: org.id,
    node_id: nodeId('012:Organization', org.id),
    url,
    repos_url: `${url}/repos`,
    events_url: `${url}/events`,
    hooks_url: `${url}/hooks`,
    issues_url: `${url}/issues`,
    members_url: `${url}/members{/member}`,
    public_members_url: `${url}/public_members{/member}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${org.id}?v=4`,
    description: null,
  };
}
