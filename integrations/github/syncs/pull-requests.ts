import type { SyncDefinition } from '../../../runtime/types';
import { toPullRequest, toUnifiedPullRequest } from '../mappers';
import { PullRequest, RepositoriesMetadata, type GitHubPullRequest } from '../models';
import { PullRequestDelivery } from '../webhooks';
import { walkUpdatedPulls } from '../pull-walk';

/**
 * Pull requests of the installation's repositories (or those in metadata
 * `repositories`). Incremental: each run asks GitHub for pull requests by last update,
 * newest first, and stops at the ones the previous run already saw.
 */
export const pullRequests: SyncDefinition = {
  kind: 'sync',
  name: 'pull-requests',
  description: 'Gets all pull requests of the repositories (incremental by updated_at).',
  endpoint: { method: 'GET', path: '/pull-requests' },
  models: { PullRequest },
  unified: { PullRequest: { name: 'UnifiedPullRequest', map: toUnifiedPullRequest } },
  syncType: 'incremental',
  frequency: 'every 30m',
  autoStart: true,
  // An opened, edited, closed or pushed-to pull request: GitHub's delivery carries it whole.
  webhookSubscriptions: ['pull_request'],
  /**
   * The delivery's `pull_request` is the pull request as the pulls API shows it: saved as it
   * is, with no call to GitHub (the installation's budget is spent only by the runs). Its
   * repository must be one the connection syncs; the next run finds the record unchanged.
   */
  async onWebhook(ctx, delivery) {
    const body = PullRequestDelivery.safeParse(delivery.payload);
    if (!body.success) return;
    const meta = RepositoriesMetadata.safeParse(await ctx.getMetadata());
    const only = meta.success ? meta.data.repositories : undefined;
    const repository = body.data.repository.full_name;
    if (only && !only.includes(repository)) return;
    await ctx.batchSave([toPullRequest(body.data.pull_request as unknown as GitHubPullRequest, repository)], 'PullRequest');
  },
  async exec(ctx) {
    await walkUpdatedPulls(ctx, async (repository, pulls) => {
      await ctx.batchSave(
        pulls.map((p) => toPullRequest(p, repository)),
        'PullRequest',
      );
    });
  },
};
