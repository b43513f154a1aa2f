import type { UnifiedCommit, UnifiedPullRequest, UnifiedRepository } from '../../runtime/unified-models';
import type { Commit, GitHubCommit, GitHubPullRequest, GitHubRepository, PullRequest, Repository } from './models';

export function toRepository(r: GitHubRepository): Repository {
  return {
    id: String(r.id),
    name: r.name,
    full_name: r.full_name,
    owner: r.owner.login,
    private: r.private,
    default_branch: r.default_branch ?? null,
    html_url: r.html_url,
    description: r.description ?? null,
    language: r.language ?? null,
    archived: r.archived ?? false,
    updated_at: r.updated_at ?? null,
    pushed_at: r.pushed_at ?? null,
  };
}

export function toPullRequest(p: GitHubPullRequest, repository: string): PullRequest {
  return {
    id: String(p.id),
    number: p.number,
    repository,
    title: p.title,
    state: p.state,
    draft: p.draft ?? false,
    merged_at: p.merged_at,
    author: p.user?.login ?? null,
    head_ref: p.head.ref,
    base_ref: p.base.ref,
    labels: (p.labels ?? []).map((l) => l.name),
    created_at: p.created_at,
    updated_at: p.updated_at,
    closed_at: p.closed_at,
    html_url: p.html_url,
  };
}

export function toCommit(c: GitHubCommit, repository: string, pullNumber: number): Commit {
  return {
    id: c.sha,
    sha: c.sha,
    repository,
    pull_number: pullNumber,
    message: c.commit.message,
    author_name: c.commit.author?.name ?? null,
    author_email: c.commit.author?.email ?? null,
    author_login: c.author?.login ?? null,
    committed_at: c.commit.committer?.date ?? c.commit.author?.date ?? null,
    html_url: c.html_url ?? null,
    parents: c.parents.map((p) => p.sha),
  };
}

export function toUnifiedRepository(record: Record<string, unknown>): UnifiedRepository {
  const r = record as unknown as Repository;
  return {
    id: r.id,
    name: r.name,
    full_name: r.full_name,
    owner: r.owner,
    is_private: r.private,
    default_branch: r.default_branch,
    description: r.description,
    web_url: r.html_url,
    updated_at: r.updated_at,
  };
}

export function toUnifiedPullRequest(record: Record<string, unknown>): UnifiedPullRequest {
  const p = record as unknown as PullRequest;
  return {
    id: p.id,
    number: p.number,
    repository: p.repository,
    title: p.title,
    state: p.merged_at ? 'merged' : p.state,
    is_draft: p.draft,
    author: p.author,
    source_branch: p.head_ref,
    target_branch: p.base_ref,
    web_url: p.html_url,
    created_at: p.created_at,
    updated_at: p.updated_at,
    closed_at: p.closed_at,
    merged_at: p.merged_at,
  };
}

export function toUnifiedCommit(record: Record<string, unknown>): UnifiedCommit {
  const c = record as unknown as Commit;
  return {
    id: c.id,
    sha: c.sha,
    repository: c.repository,
    message: c.message,
    author_name: c.author_name,
    author_email: c.author_email,
    committed_at: c.committed_at,
    web_url: c.html_url,
    parent_shas: c.parents,
  };
}
