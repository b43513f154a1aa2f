/**
 * JSON shapes of the GitHub REST API (field names and order as api.github.com sends them),
 * built on demand from the records in `data.ts`. API URLs inside bodies use the simulator's
 * own base URL, as a GitHub Enterprise Server does with its host, so a client that follows
 * `url` / `*_url` fields stays inside the sandbox; `html_url`s point at github.com.
 */
import { hash32, Rng } from '../shared/prng';
import {
  baseSha,
  commitCount,
  headSha,
  isoSeconds,
  mergeCommitSha,
  pullBody,
  pullTitle,
  type Account,
  type CommitRec,
  type LabelRec,
  type MilestoneRec,
  type PullRec,
  type RepoRec,
  type TeamRec,
} from './data';

export const API_VERSIONS = ['2022-11-28', '2026-03-10'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const DEFAULT_API_VERSION: ApiVersion = '2022-11-28';

export interface RenderContext {
  /** Base URL for API links, no trailing slash (the simulator's own URL). */
  api: string;
  version: ApiVersion;
}

type Json = Record<string, unknown>;

export function nodeId(prefix: string, id: number | string): string {
  return Buffer.from(`${prefix}${id}`, 'utf8').toString('base64');
}

export function simpleUser(acc: Account, ctx: RenderContext): Json {
  const url = `${ctx.api}/users/${encodeURIComponent(acc.login)}`;
  const isBot = acc.type === 'Bot';
  return {
    login: acc.login,
    id: acc.id,
    node_id: nodeId(acc.type === 'Organization' ? '012:Organization' : isBot ? '03:Bot' : '04:User', acc.id),
    avatar_url: isBot ? `https://avatars.githubusercontent.com/in/${acc.id % 100_000}?v=4` : `https://avatars.githubusercontent.com/u/${acc.id}?v=4`,
    gravatar_id: '',
    url,
    html_url: isBot ? `https://github.com/apps/${acc.login.replace(/\[bot\]$/, '')}` : `https://github.com/${acc.login}`,
    followers_url: `${url}/followers`,
    following_url: `${url}/following{/other_user}`,
    gists_url: `${url}/gists{/gist_id}`,
    starred_url: `${url}/starred{/owner}{/repo}`,
    subscriptions_url: `${url}/subscriptions`,
    organizations_url: `${url}/orgs`,
    repos_url: `${url}/repos`,
    events_url: `${url}/events{/privacy}`,
    received_events_url: `${url}/received_events`,
    type: acc.type,
    user_view_type: 'public',
    site_admin: false,
  };
}

// ---------------------------------------------------------------------------------------
// Repositories
// ---------------------------------------------------------------------------------------

export interface RepoRenderOptions {
  /** Open pull requests (GitHub's open_issues_count counts issues and pull requests). */
  openPulls: number;
  /**
   * Installation tokens see `permissions` (read-only); `owner` is the owning user's own view
   * through an OAuth token (full rights); anonymous callers see none.
   */
  permissions: boolean | 'owner';
  /** `GET /repos/{owner}/{repo}` returns the full-repository shape. */
  full?: boolean;
}

/** A fork of `base` owned by `owner` (head repository of a pull request from a fork). */
export function forkOf(base: RepoRec, owner: Account): RepoRec {
  const rng = Rng.from(base.key, 'fork', owner.id);
  return {
    ...base,
    id: 100_000_000 + (hash32(base.key, 'fork-id', owner.id) % 800_000_000),
    owner,
    fullName: `${owner.login}/${base.name}`,
    fork: true,
    homepage: null,
    topics: [],
    stars: 0,
    forks: 0,
    subscribers: 0,
    openIssues: 0,
    hasWiki: false,
    hasProjects: false,
    hasPages: false,
    hasDiscussions: false,
    createdMs: base.createdMs + rng.int(1, 900) * 86_400_000,
    key: hash32(base.key, 'fork', owner.id),
  };
}

export function repoJson(repo: RepoRec, ctx: RenderContext, o: RepoRenderOptions): Json {
  const url = `${ctx.api}/repos/${repo.fullName}`;
  const html = `https://github.com/${repo.fullName}`;
  const openIssues = repo.openIssues + o.openPulls;
  const createdMs = Math.min(repo.createdMs, repo.pushedMs);
  const body: Json = {
    id: repo.id,
    node_id: nodeId('010:Repository', repo.id),
    name: repo.name,
    full_name: repo.fullName,
    private: repo.private,
    owner: simpleUser(repo.owner, ctx),
    html_url: html,
    description: repo.description,
    fork: repo.fork,
    url,
    forks_url: `${url}/forks`,
    keys_url: `${url}/keys{/key_id}`,
    collaborators_url: `${url}/collaborators{/collaborator}`,
    teams_url: `${url}/teams`,
    hooks_url: `${url}/hooks`,
    issue_events_url: `${url}/issues/events{/number}`,
    events_url: `${url}/events`,
    assignees_url: `${url}/assignees{/user}`,
    branches_url: `${url}/branches{/branch}`,
    tags_url: `${url}/tags`,
    blobs_url: `${url}/git/blobs{/sha}`,
    git_tags_url: `${url}/git/tags{/sha}`,
    git_refs_url: `${url}/git/refs{/sha}`,
    trees_url: `${url}/git/trees{/sha}`,
    statuses_url: `${url}/statuses/{sha}`,
    languages_url: `${url}/languages`,
    stargazers_url: `${url}/stargazers`,
    contributors_url: `${url}/contributors`,
    subscribers_url: `${url}/subscribers`,
    subscription_url: `${url}/subscription`,
    commits_url: `${url}/commits{/sha}`,
    git_commits_url: `${url}/git/commits{/sha}`,
    comments_url: `${url}/comments{/number}`,
    issue_comment_url: `${url}/issues/comments{/number}`,
    contents_url: `${url}/contents/{+path}`,
    compare_url: `${url}/compare/{base}...{head}`,
    merges_url: `${url}/merges`,
    archive_url: `${url}/{archive_format}{/ref}`,
    downloads_url: `${url}/downloads`,
    issues_url: `${url}/issues{/number}`,
    pulls_url: `${url}/pulls{/number}`,
    milestones_url: `${url}/milestones{/number}`,
    notifications_url: `${url}/notifications{?since,all,participating}`,
    labels_url: `${url}/labels{/name}`,
    releases_url: `${url}/releases{/id}`,
    deployments_url: `${url}/deployments`,
    created_at: isoSeconds(createdMs),
    updated_at: isoSeconds(repo.updatedMs),
    pushed_at: isoSeconds(repo.pushedMs),
    git_url: `git://github.com/${repo.fullName}.git`,
    ssh_url: `git@github.com:${repo.fullName}.git`,
    clone_url: `${html}.git`,
    svn_url: html,
    homepage: repo.homepage,
    size: repo.sizeKb,
    stargazers_count: repo.stars,
    watchers_count: repo.stars,
    language: repo.language,
    has_issues: true,
    has_projects: repo.hasProjects,
    has_downloads: true,
    has_wiki: repo.hasWiki,
    has_pages: repo.hasPages,
    has_discussions: repo.hasDiscussions,
    forks_count: repo.forks,
    mirror_url: null,
    archived: false,
    disabled: false,
    open_issues_count: openIssues,
    license: repo.license
      ? {
          key: repo.license.key,
          name: repo.license.name,
          spdx_id: repo.license.spdx_id,
          url: `${ctx.api}/licenses/${repo.license.key}`,
          node_id: nodeId('07:License', repo.license.key.length + 10),
        }
      : null,
    allow_forking: !repo.private,
    is_template: false,
    web_commit_signoff_required: false,
    topics: repo.topics,
    visibility: repo.private ? 'private' : 'public',
    forks: repo.forks,
    open_issues: openIssues,
    watchers: repo.stars,
    default_branch: repo.defaultBranch,
  };
  // Removed from repository responses in API version 2026-03-10.
  if (ctx.version === '2026-03-10') delete body.has_downloads;
  if (o.permissions === 'owner') body.permissions = { admin: true, maintain: true, push: true, triage: true, pull: true };
  else if (o.permissions) body.permissions = { admin: false, maintain: false, push: false, triage: false, pull: true };
  if (o.full) {
    if (repo.owner.type === 'Organization') body.organization = simpleUser(repo.owner, ctx);
    body.network_count = repo.forks;
    body.subscribers_count = repo.subscribers;
  }
  return body;
}

// ---------------------------------------------------------------------------------------
// Pull requests
// ---------------------------------------------------------------------------------------

function labelJson(repo: RepoRec, l: LabelRec, ctx: RenderContext): Json {
  return {
    id: l.id,
    node_id: nodeId('05:Label', l.id),
    url: `${ctx.api}/repos/${repo.fullName}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    color: l.color,
    default: l.isDefault,
    description: l.description,
  };
}

function milestoneJson(repo: RepoRec, m: MilestoneRec, ctx: RenderContext): Json {
  const url = `${ctx.api}/repos/${repo.fullName}/milestones/${m.number}`;
  const rng = Rng.from(repo.key, 'milestone-counts', m.number);
  return {
    url,
    html_url: `https://github.com/${repo.fullName}/milestone/${m.number}`,
    labels_url: `${url}/labels`,
    id: m.id,
    node_id: nodeId('09:Milestone', m.id),
    number: m.number,
    title: m.title,
    description: m.description,
    creator: simpleUser(m.creator, ctx),
    open_issues: m.closed ? 0 : rng.int(1, 30),
    closed_issues: rng.int(0, 80),
    state: m.closed ? 'closed' : 'open',
    created_at: isoSeconds(m.createdMs),
    updated_at: isoSeconds(m.createdMs + rng.int(1, 60) * 86_400_000),
    due_on: m.dueMs === null ? null : isoSeconds(m.dueMs),
    closed_at: m.closed ? isoSeconds((m.dueMs ?? m.createdMs) + 86_400_000) : null,
  };
}

function teamJson(repo: RepoRec, t: TeamRec, ctx: RenderContext): Json {
  const org = repo.owner.login;
  return {
    name: t.name,
    id: t.id,
    node_id: nodeId('04:Team', t.id),
    slug: t.slug,
    description: t.description,
    privacy: 'closed',
    notification_setting: 'notifications_enabled',
    url: `${ctx.api}/organizations/${repo.owner.id}/team/${t.id}`,
    html_url: `https://github.com/orgs/${org}/teams/${t.slug}`,
    members_url: `${ctx.api}/organizations/${repo.owner.id}/team/${t.id}/members{/member}`,
    repositories_url: `${ctx.api}/organizations/${repo.owner.id}/team/${t.id}/repos`,
    permission: 'pull',
    parent: null,
    // Teams of the simulated world belong to organizations, none to an enterprise.
    type: 'organization',
  };
}

export interface PullRenderHelpers {
  /** Repository JSON for head/base; callers cache it per request. */
  repo(rec: RepoRec): Json;
  /** The head repository when the pull request comes from a fork. */
  fork(base: RepoRec, owner: Account): RepoRec;
}

/** The `pull-request-simple` shape of the list endpoint. */
export function pullSimpleJson(pull: PullRec, ctx: RenderContext, h: PullRenderHelpers): Json {
  const repo = pull.repo;
  const repoUrl = `${ctx.api}/repos/${repo.fullName}`;
  const url = `${repoUrl}/pulls/${pull.number}`;
  const html = `https://github.com/${repo.fullName}/pull/${pull.number}`;
  const issueUrl = `${repoUrl}/issues/${pull.number}`;
  const head = headSha(pull);
  const headRepo = pull.headOwner.id === repo.owner.id ? repo : h.fork(repo, pull.headOwner);
  const labelsById = new Map(repo.labels.map((l) => [l.id, l]));
  const milestone = pull.milestoneNumber === null ? undefined : repo.milestones.find((m) => m.number === pull.milestoneNumber);
  const teamsById = new Map(repo.teams.map((t) => [t.id, t]));
  return {
    url,
    id: pull.id,
    node_id: nodeId('011:PullRequest', pull.id),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: issueUrl,
    number: pull.number,
    state: pull.state,
    locked: pull.locked,
    title: pullTitle(pull),
    user: simpleUser(pull.author, ctx),
    body: pullBody(pull),
    created_at: isoSeconds(pull.createdMs),
    updated_at: isoSeconds(pull.updatedMs),
    closed_at: pull.closedMs === null ? null : isoSeconds(pull.closedMs),
    merged_at: pull.mergedMs === null ? null : isoSeconds(pull.mergedMs),
    merge_commit_sha: mergeCommitSha(pull),
    assignee: pull.assignees.length ? simpleUser(pull.assignees[0], ctx) : null,
    assignees: pull.assignees.map((a) => simpleUser(a, ctx)),
    requested_reviewers: pull.reviewers.map((a) => simpleUser(a, ctx)),
    requested_teams: pull.teamIds.flatMap((id) => {
      const t = teamsById.get(id);
      return t ? [teamJson(repo, t, ctx)] : [];
    }),
    labels: pull.labelIds.flatMap((id) => {
      const l = labelsById.get(id);
      return l ? [labelJson(repo, l, ctx)] : [];
    }),
    milestone: milestone ? milestoneJson(repo, milestone, ctx) : null,
    draft: pull.draft,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${repoUrl}/pulls/comments{/number}`,
    comments_url: `${issueUrl}/comments`,
    statuses_url: `${repoUrl}/statuses/${head}`,
    head: {
      label: `${pull.headOwner.login}:${pull.headRef}`,
      ref: pull.headRef,
      sha: head,
      user: simpleUser(pull.headOwner, ctx),
      repo: h.repo(headRepo),
    },
    base: {
      label: `${repo.owner.login}:${pull.baseRef}`,
      ref: pull.baseRef,
      sha: baseSha(pull),
      user: simpleUser(repo.owner, ctx),
      repo: h.repo(repo),
    },
    _links: {
      self: { href: url },
      html: { href: html },
      issue: { href: issueUrl },
      comments: { href: `${issueUrl}/comments` },
      review_comments: { href: `${url}/comments` },
      review_comment: { href: `${repoUrl}/pulls/comments{/number}` },
      commits: { href: `${url}/commits` },
      statuses: { href: `${repoUrl}/statuses/${head}` },
    },
    author_association: pull.authorAssociation,
    auto_merge: null,
    active_lock_reason: pull.locked ? 'resolved' : null,
  };
}

/** The full `pull-request` shape of `GET /repos/{owner}/{repo}/pulls/{number}`. */
export function pullFullJson(pull: PullRec, ctx: RenderContext, h: PullRenderHelpers): Json {
  const open = pull.state === 'open';
  let mergeableState = 'unknown';
  if (open) {
    if (pull.draft) mergeableState = 'draft';
    else if (pull.mergeable === false) mergeableState = 'dirty';
    else if (pull.mergeable === true) mergeableState = Rng.from(pull.key, 'mstate', pull.revision).pick(['clean', 'clean', 'blocked', 'unstable', 'behind']);
  }
  return {
    ...pullSimpleJson(pull, ctx, h),
    merged: pull.mergedMs !== null,
    mergeable: open ? pull.mergeable : null,
    rebaseable: open && pull.mergeable !== null ? pull.mergeable : null,
    mergeable_state: mergeableState,
    merged_by: pull.mergedBy ? simpleUser(pull.mergedBy, ctx) : null,
    comments: pull.comments,
    review_comments: pull.reviewComments,
    maintainer_can_modify: pull.headOwner.id !== pull.repo.owner.id && open,
    commits: commitCount(pull),
    additions: pull.additions,
    deletions: pull.deletions,
    changed_files: pull.changedFiles,
  };
}

// ---------------------------------------------------------------------------------------
// Commits
// ---------------------------------------------------------------------------------------

function fakeSignature(sha: string): string {
  const body = Buffer.from(`sandbox-signature:${sha}`).toString('base64');
  return `-----BEGIN PGP SIGNATURE-----\n\nwsBcBAABCAAQBQJ${body}\n=${sha.slice(0, 4)}\n-----END PGP SIGNATURE-----\n`;
}

/** The `commit` shape of the list endpoints (no `stats` / `files`: single-commit GET only). */
export function commitJson(repo: RepoRec, c: CommitRec, ctx: RenderContext): Json {
  const repoUrl = `${ctx.api}/repos/${repo.fullName}`;
  const payload = [
    `tree ${c.treeSha}`,
    ...c.parents.map((p) => `parent ${p}`),
    `author ${c.author.name} <${c.author.email}> ${Math.floor(Date.parse(c.author.date) / 1000)} +0000`,
    `committer ${c.committer.name} <${c.committer.email}> ${Math.floor(Date.parse(c.committer.date) / 1000)} +0000`,
    '',
    c.message,
  ].join('\n');
  return {
    sha: c.sha,
    node_id: nodeId(`06:Commit${repo.id}:`, c.sha),
    commit: {
      author: { ...c.author },
      committer: { ...c.committer },
      message: c.message,
      tree: { sha: c.treeSha, url: `${repoUrl}/git/trees/${c.treeSha}` },
      url: `${repoUrl}/git/commits/${c.sha}`,
      comment_count: 0,
      verification: c.verified
        ? { verified: true, reason: 'valid', signature: fakeSignature(c.sha), payload, verified_at: c.committer.date }
        : { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
    },
    url: `${repoUrl}/commits/${c.sha}`,
    html_url: `https://github.com/${repo.fullName}/commit/${c.sha}`,
    comments_url: `${repoUrl}/commits/${c.sha}/comments`,
    author: c.authorAccount ? simpleUser(c.authorAccount, ctx) : null,
    committer: c.committerAccount ? simpleUser(c.committerAccount, ctx) : null,
    parents: c.parents.map((sha) => ({ sha, url: `${repoUrl}/commits/${sha}`, html_url: `https://github.com/${repo.fullName}/commit/${sha}` })),
  };
}

// ---------------------------------------------------------------------------------------
// The App and its installations
// ---------------------------------------------------------------------------------------

export interface AppInfo {
  id: number;
  clientId: string;
  slug: string;
  name: string;
  owner: Account;
  createdMs: number;
}

/** What the App was granted: read access to code, metadata and pull requests. */
export const APP_PERMISSIONS: Readonly<Record<string, 'read' | 'write'>> = Object.freeze({
  contents: 'read',
  metadata: 'read',
  // Write: the App updates pull requests (Weft's update-pull-request action).
  pull_requests: 'write',
});
const APP_EVENTS: readonly string[] = ['pull_request', 'push'];

export function appJson(app: AppInfo, installationsCount: number, ctx: RenderContext): Json {
  return {
    id: app.id,
    client_id: app.clientId,
    slug: app.slug,
    node_id: nodeId('03:Integration', app.id),
    owner: simpleUser(app.owner, ctx),
    name: app.name,
    description: 'Weft sandbox GitHub App (simulated).',
    external_url: 'https://weft.example.com',
    html_url: `https://github.com/apps/${app.slug}`,
    created_at: isoSeconds(app.createdMs),
    updated_at: isoSeconds(app.createdMs),
    permissions: { ...APP_PERMISSIONS },
    events: [...APP_EVENTS],
    installations_count: installationsCount,
  };
}

export function installationJson(
  inst: { id: number; account: Account; createdMs: number; updatedMs?: number; selectedRepoIds?: ReadonlySet<number> | null },
  app: AppInfo,
  ctx: RenderContext,
): Json {
  const isOrg = inst.account.type === 'Organization';
  return {
    id: inst.id,
    client_id: app.clientId,
    account: simpleUser(inst.account, ctx),
    repository_selection: inst.selectedRepoIds ? 'selected' : 'all',
    access_tokens_url: `${ctx.api}/app/installations/${inst.id}/access_tokens`,
    repositories_url: `${ctx.api}/installation/repositories`,
    html_url: isOrg
      ? `https://github.com/organizations/${inst.account.login}/settings/installations/${inst.id}`
      : `https://github.com/settings/installations/${inst.id}`,
    app_id: app.id,
    app_slug: app.slug,
    target_id: inst.account.id,
    target_type: inst.account.type,
    permissions: { ...APP_PERMISSIONS },
    events: [...APP_EVENTS],
    created_at: isoSeconds(inst.createdMs),
    updated_at: isoSeconds(inst.updatedMs ?? inst.createdMs),
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
    suspended_by: null,
    suspended_at: null,
  };
}
