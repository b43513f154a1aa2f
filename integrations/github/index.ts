import type { IntegrationDefinition } from '../../runtime/types';
import { githubProvider } from './provider';
import { repositories } from './syncs/repositories';
import { pullRequests } from './syncs/pull-requests';
import { commits } from './syncs/commits';

export const github: IntegrationDefinition = {
  provider: githubProvider,
  syncs: [repositories, pullRequests, commits],
  actions: [],
};
