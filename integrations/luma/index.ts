import type { IntegrationDefinition } from '../../runtime/types';
import { lumaProvider } from './provider';
import { lumaConnectUi } from './connect-ui';
import { listEvents } from './syncs/list-events';
import { createEventAction } from './actions/create-event';
import { lumaSubscriptions } from './webhooks';

export const luma: IntegrationDefinition = {
  provider: lumaProvider,
  syncs: [listEvents],
  actions: [createEventAction],
  subscriptions: lumaSubscriptions,
  connectUi: lumaConnectUi,
};
