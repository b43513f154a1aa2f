import type { BaseContext, PaginateConfig } from '../../runtime/types';

/**
 * The repositories a connection can see: an App installation lists its own
 * (`/installation/repositories`, items under `repositories`); a user token from OAuth App
 * mode lists the user's (`/user/repos`, a plain array).
 */
export async function repositoryListing(ctx: BaseContext): Promise<PaginateConfig> {
  return (await ctx.getConnection()).auth_mode === 'OAUTH2'
    ? { endpoint: '/user/repos', params: { sort: 'full_name' } }
    : { endpoint: '/installation/repositories', paginate: { responsePath: 'repositories' } };
}
