import type { IntegrationDefinition } from '../../runtime/types';
import { githubProvider } from './provider';
import { githubConnectUi } from './connect-ui';
import { repositories } from './syncs/repositories';
import { pullRequests } from './syncs/pull-requests';
import { commits } from './syncs/commits';
import { updatePullRequestAction } from './actions/update-pull-request';

export const github: IntegrationDefinition = {
  provider: githubProvider,
  syncs: [repositories, pullRequests, commits],
  actions: [updatePullRequestAction],
  connectUi: githubConnectUi,
};
