// Every workflow type the workers register. Workflow code only: no I/O imports.
export { syncRun } from './sync-run';
export { actionRun } from './action-run';
export { scheduledSync } from './scheduled-sync';
export { syncFanOut } from './sync-fan-out';
export { webhookDelivery } from './webhook-delivery';
export { connectionSubscriptions } from './connection-subscriptions';
