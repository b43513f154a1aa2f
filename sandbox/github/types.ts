/**
 * TypeScript views of the JSON the simulator serves (the fields tests and tools usually
 * read; every object carries more, hence the index signatures). These describe the
 * simulator's output for its inspection methods; they are not a GitHub client's types.
 */

export interface GitHubSimpleUserJson {
  login: string;
  id: number;
  node_id: string;
  type: 'User' | 'Organization' | 'Bot';
  url: string;
  html_url: string;
  [field: string]: unknown;
}

export interface GitHubRepositoryJson {
  id: number;
  node_id: string;
  name: string;
  full_name: string;
  private: boolean;
  visibility: 'public' | 'private' | 'internal';
  owner: GitHubSimpleUserJson;
  default_branch: string;
  url: string;
  html_url: string;
  created_at: string;
  updated_at: string;
  pushed_at: string;
  [field: string]: unknown;
}

export interface GitHubBranchRefJson {
  label: string;
  ref: string;
  sha: string;
  user: GitHubSimpleUserJson;
  repo: GitHubRepositoryJson;
}

export interface GitHubLabelJson {
  id: number;
  node_id: string;
  url: string;
  name: string;
  color: string;
  default: boolean;
  description: string;
}

export interface GitHubPullRequestJson {
  id: number;
  node_id: string;
  number: number;
  state: 'open' | 'closed';
  locked: boolean;
  title: string;
  body: string | null;
  user: GitHubSimpleUserJson;
  labels: GitHubLabelJson[];
  draft: boolean;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  merged_at: string | null;
  merge_commit_sha: string | null;
  head: GitHubBranchRefJson;
  base: GitHubBranchRefJson;
  url: string;
  html_url: string;
  [field: string]: unknown;
}

export interface GitHubCommitIdentityJson {
  name: string;
  email: string;
  date: string;
}

export interface GitHubCommitJson {
  sha: string;
  node_id: string;
  url: string;
  html_url: string;
  commit: {
    author: GitHubCommitIdentityJson;
    committer: GitHubCommitIdentityJson;
    message: string;
    tree: { sha: string; url: string };
    url: string;
    comment_count: number;
    verification: { verified: boolean; reason: string; signature: string | null; payload: string | null; verified_at: string | null };
  };
  author: GitHubSimpleUserJson | null;
  committer: GitHubSimpleUserJson | null;
  parents: Array<{ sha: string; url: string; html_url: string }>;
  [field: string]: unknown;
}

export interface GitHubInstallationJson {
  id: number;
  account: GitHubSimpleUserJson;
  app_id: number;
  repository_selection: 'all' | 'selected';
  [field: string]: unknown;
}
