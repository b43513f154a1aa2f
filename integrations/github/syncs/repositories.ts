import type { SyncDefinition } from '../../../runtime/types';
import { toRepository, toUnifiedRepository } from '../mappers';
import { Repository, type GitHubRepository } from '../models';

/**
 * Every repository the App installation can access. A full sync: a repository removed
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
  async exec(ctx) {
    for await (const page of ctx.paginate<GitHubRepository>({ endpoint: '/installation/repositories', paginate: { responsePath: 'repositories' } })) {
      await ctx.batchSave(page.map(toRepository), 'Repository');
    }
  },
};
