import { z } from 'zod';

const isoDateTime = z.iso.datetime({ offset: true });

export const Repository = z.object({
  id: z.string().min(1),
  name: z.string(),
  full_name: z.string(),
  owner: z.string(),
  private: z.boolean(),
  default_branch: z.string().nullable(),
  html_url: z.url(),
  description: z.string().nullable(),
  language: z.string().nullable(),
  archived: z.boolean(),
  updated_at: isoDateTime.nullable(),
  pushed_at: isoDateTime.nullable(),
});
export type Repository = z.infer<typeof Repository>;

export const PullRequest = z.object({
  id: z.string().min(1),
  number: z.number().int().positive(),
  repository: z.string(),
  title: z.string(),
  state: z.enum(['open', 'closed']),
  draft: z.boolean(),
  merged_at: isoDateTime.nullable(),
  author: z.string().nullable(),
  head_ref: z.string(),
  base_ref: z.string(),
  labels: z.array(z.string()),
  created_at: isoDateTime,
  updated_at: isoDateTime,
  closed_at: isoDateTime.nullable(),
  html_url: z.url(),
});
export type PullRequest = z.infer<typeof PullRequest>;

export const Commit = z.object({
  id: z.string().min(1),
  sha: z.string().regex(/^[0-9a-f]{40}$/, 'a 40-character hex SHA'),
  repository: z.string(),
  pull_number: z.number().int().positive(),
  message: z.string(),
  author_name: z.string().nullable(),
  author_email: z.string().nullable(),
  author_login: z.string().nullable(),
  committed_at: isoDateTime.nullable(),
  html_url: z.url().nullable(),
  parents: z.array(z.string()),
});
export type Commit = z.infer<typeof Commit>;

/** Connection metadata of the pull-request and commit syncs: which repositories (default: all). */
export const RepositoriesMetadata = z.object({
  repositories: z.array(z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'owner/name')).optional(),
});

/** The parts of GitHub's objects the integration reads. */
export interface GitHubUser {
  login: string;
}
export interface GitHubRepository {
  id: number;
  name: string;
  full_name: string;
  owner: GitHubUser;
  private: boolean;
  default_branch?: string | null;
  html_url: string;
  description: string | null;
  language?: string | null;
  archived?: boolean;
  updated_at?: string | null;
  pushed_at?: string | null;
}
export interface GitHubPullRequest {
  id: number;
  number: number;
  state: 'open' | 'closed';
  title: string;
  user: GitHubUser | null;
  draft?: boolean;
  labels?: Array<{ name: string }>;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  merged_at: string | null;
  head: { ref: string };
  base: { ref: string };
  html_url: string;
}
export interface GitHubCommit {
  sha: string;
  html_url?: string;
  commit: { message: string; author?: { name?: string; email?: string; date?: string } | null; committer?: { date?: string } | null };
  author: GitHubUser | null;
  parents: Array<{ sha: string }>;
}
