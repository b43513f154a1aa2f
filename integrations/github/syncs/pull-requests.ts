import type { SyncDefinition } from '../../../runtime/types';
import { toPullRequest, toUnifiedPullRequest } from '../mappers';
import { PullRequest } from '../models';
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
  // An opened, edited, closed or pushed-to pull request: the incremental run picks it up.
  webhookSubscriptions: ['pull_request'],
  async exec(ctx) {
    await walkUpdatedPulls(ctx, async (repository, pulls) => {
      await ctx.batchSave(
        pulls.map((p) => toPullRequest(p, repository)),
        'PullRequest',
      );
    });
  },
};
