import { z } from 'zod';

/**
 * Provider-neutral shapes: an app reads files (or repositories, events, ...) from any
 * provider of a kind with one type. Each integration maps its own models onto these; a
 * second file-storage or calendar provider must fit them unchanged, so every field is
 * something any such provider has (or null when it does not).
 */
const isoDateTime = z.iso.datetime({ offset: true });

export const UnifiedFile = z.object({
  id: z.string().min(1),
  name: z.string(),
  /** Full path inside its container, `/`-separated, starting with `/`; null when unknown. */
  path: z.string().nullable(),
  /** The drive, bucket or shared folder the file lives in. */
  container_id: z.string(),
  parent_id: z.string().nullable(),
  is_folder: z.boolean(),
  mime_type: z.string().nullable(),
  size: z.number().int().nonnegative().nullable(),
  web_url: z.string().nullable(),
  created_at: isoDateTime.nullable(),
  updated_at: isoDateTime.nullable(),
});
export type UnifiedFile = z.infer<typeof UnifiedFile>;

export const UnifiedRepository = z.object({
  id: z.string().min(1),
  name: z.string(),
  full_name: z.string(),
  owner: z.string(),
  is_private: z.boolean(),
  default_branch: z.string().nullable(),
  description: z.string().nullable(),
  web_url: z.string(),
  updated_at: isoDateTime.nullable(),
});
export type UnifiedRepository = z.infer<typeof UnifiedRepository>;

export const UnifiedPullRequest = z.object({
  id: z.string().min(1),
  number: z.number().int(),
  repository: z.string(),
  title: z.string(),
  /** `merged` is told apart from `closed`, which hosts report differently. */
  state: z.enum(['open', 'closed', 'merged']),
  is_draft: z.boolean(),
  author: z.string().nullable(),
  source_branch: z.string(),
  target_branch: z.string(),
  web_url: z.string(),
  created_at: isoDateTime,
  updated_at: isoDateTime,
  closed_at: isoDateTime.nullable(),
  merged_at: isoDateTime.nullable(),
});
export type UnifiedPullRequest = z.infer<typeof UnifiedPullRequest>;

export const UnifiedCommit = z.object({
  id: z.string().min(1),
  sha: z.string(),
  repository: z.string(),
  message: z.string(),
  author_name: z.string().nullable(),
  author_email: z.string().nullable(),
  committed_at: isoDateTime.nullable(),
  web_url: z.string().nullable(),
  parent_shas: z.array(z.string()),
});
export type UnifiedCommit = z.infer<typeof UnifiedCommit>;

export const UnifiedEvent = z.object({
  id: z.string().min(1),
  title: z.string(),
  description: z.string().nullable(),
  start_at: isoDateTime,
  end_at: isoDateTime.nullable(),
  timezone: z.string().nullable(),
  location: z.string().nullable(),
  online_meeting_url: z.string().nullable(),
  web_url: z.string().nullable(),
});
export type UnifiedEvent = z.infer<typeof UnifiedEvent>;
