import type { IntegrationDefinition } from '../../runtime/types';
import { lumaProvider } from './provider';
import { listEvents } from './syncs/list-events';
import { createEventAction } from './actions/create-event';

export const luma: IntegrationDefinition = {
  provider: lumaProvider,
  syncs: [listEvents],
  actions: [createEventAction],
};
