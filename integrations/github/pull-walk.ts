import { IntegrationCodeError, isProviderStatus } from '../../runtime/errors';
import type { SyncContext } from '../../runtime/types';
import { RepositoriesMetadata, type GitHubPullRequest, type GitHubRepository } from './models';
import { repositoryListing } from './repository-listing';

/**
 * Per repository: the newest `updated_at` a completed walk saw (`repos`), and while a
 * walk is under way the newest seen so far (`walking`), so a resumed or repeated run
 * starts over without losing the mark it will commit.
 */
interface PullWalkCheckpoint {
  version: 1;
  repos: Record<string, string>;
  walking: Record<string, string>;
}

/** Every repository the connection can see (see repository-listing.ts). */
async function installationRepositories(ctx: SyncContext): Promise<GitHubRepository[]> {
  const repos: GitHubRepository[] = [];
  for await (const page of ctx.paginate<GitHubRepository>(await repositoryListing(ctx))) repos.push(...page);
  return repos;
}

/**
 * Walks the pull requests of each repository (metadata `repositories`, default: all the
 * installation sees), newest update first, and hands over those updated since the last
 * completed walk; it stops at the first older one. GitHub sorts by `updated_at`, so an
 * update during the walk moves a pull request to the front: it is picked up next time.
 */
export async function walkUpdatedPulls(ctx: SyncContext, onPulls: (repository: string, pulls: GitHubPullRequest[]) => Promise<void>): Promise<void> {
  const meta = RepositoriesMetadata.safeParse(await ctx.getMetadata());
  if (!meta.success) throw new IntegrationCodeError('invalid_metadata', 'Connection metadata `repositories` must be a list of "owner/name".');
  const repositories = meta.data.repositories ?? (await installationRepositories(ctx)).map((r) => r.full_name);
  const saved = await ctx.getCheckpoint<PullWalkCheckpoint>();
  const checkpoint: PullWalkCheckpoint = saved?.version === 1 ? saved : { version: 1, repos: {}, walking: {} };

  for (const repository of repositories) {
    const since = checkpoint.repos[repository] ?? null;
    let newest = checkpoint.walking[repository] ?? since;
    try {
      const [owner, name] = repository.split('/');
      const listing = ctx.paginate<GitHubPullRequest>({
        endpoint: `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/pulls`,
        params: { state: 'all', sort: 'updated', direction: 'desc' },
      });
      for await (const page of listing) {
        const fresh = since ? page.filter((p) => p.updated_at >= since) : page;
        if (fresh.length) await onPulls(repository, fresh);
        for (const p of page) if (!newest || p.updated_at > newest) newest = p.updated_at;
        if (newest) {
          checkpoint.walking[repository] = newest;
          await ctx.saveCheckpoint(checkpoint);
        }
        if (fresh.length < page.length) break; // reached what the last walk already saw
      }
    } catch (err) {
      if (!isProviderStatus(err, 404)) throw err;
      ctx.log('repository is no longer visible to the installation; skipped', { repository });
      delete checkpoint.repos[repository];
      delete checkpoint.walking[repository];
      continue;
    }
    if (newest) checkpoint.repos[repository] = newest;
    delete checkpoint.walking[repository];
    await ctx.saveCheckpoint(checkpoint);
  }
}
