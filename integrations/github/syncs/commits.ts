import type { SyncDefinition } from '../../../runtime/types';
import { toCommit, toUnifiedCommit } from '../mappers';
import { Commit, type GitHubCommit } from '../models';
import { walkUpdatedPulls } from '../pull-walk';

/** GitHub lists at most this many commits of a pull request; the rest needs the commits API. */
const PULL_COMMITS_CAP = 250;

/**
 * The commits of pull requests ("pull commits"): for each pull request updated since the
 * last run, `GET /repos/{o}/{r}/pulls/{n}/commits`. GitHub stops at 250 commits per pull
 * request; when a pull request reaches that, the run logs it (the rest are not listed).
 */
export const commits: SyncDefinition = {
  kind: 'sync',
  name: 'commits',
  description: 'Gets the commits of pull requests (up to 250 each), incrementally.',
  endpoint: { method: 'GET', path: '/commits' },
  models: { Commit },
  unified: { Commit: { name: 'UnifiedCommit', map: toUnifiedCommit } },
  syncType: 'incremental',
  frequency: 'every 1h',
  autoStart: false,
  async exec(ctx) {
    await walkUpdatedPulls(ctx, async (repository, pulls) => {
      const [owner, name] = repository.split('/');
      for (const pull of pulls) {
        let count = 0;
        for await (const page of ctx.paginate<GitHubCommit>({
          endpoint: `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/pulls/${pull.number}/commits`,
        })) {
          count += page.length;
          if (page.length)
            await ctx.batchSave(
              page.map((c) => toCommit(c, repository, pull.number)),
              'Commit',
            );
        }
        if (count >= PULL_COMMITS_CAP) {
          ctx.log("pull request reached GitHub's 250-commit listing cap; older commits are not included", {
            repository,
            pull_number: pull.number,
            listed: count,
          });
        }
      }
    });
  },
};
