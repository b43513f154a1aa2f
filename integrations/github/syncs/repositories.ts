import type { SyncDefinition } from '../../../runtime/types';
import { toRepository, toUnifiedRepository } from '../mappers';
import { Repository, type GitHubRepository } from '../models';
import { repositoryListing } from '../repository-listing';

/**
 * Every repository the App installation (or, in OAuth App mode, the user) can access. A full sync: a repository removed
 * from the installation is not listed any more, so its record is deleted at the end.
 */
export const repositories: SyncDefinition = {
  kind: 'sync',
  name: 'repositories',
  description: 'Lists all repositories accessible to the GitHub App installation.',
  endpoint: { method: 'GET', path: '/repositories' },
  models: { Repository },
  unified: { Repository: { name: 'UnifiedRepository', map: toUnifiedRepository } },
  syncType: 'full',
  frequency: 'every 1h',
  autoStart: true,
  // A repository added to or removed from the installation.
  webhookSubscriptions: ['installation_repositories'],
  async exec(ctx) {
    for await (const page of ctx.paginate<GitHubRepository>(await repositoryListing(ctx))) {
      await ctx.batchSave(page.map(toRepository), 'Repository');
    }
  },
};
