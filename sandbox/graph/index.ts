export { createGraphSimulator, GraphSimulatorOptionsSchema, GRAPH_DEFAULT_ACCESS_TOKEN } from './simulator';
export type {
  GraphSimulator,
  GraphSimulatorOptions,
  ResolvedGraphSimulatorOptions,
  GraphSimulatorStats,
  GraphRequestLogEntry,
  ThrottleOptions,
} from './simulator';
export type { DriveType } from './data';
export type { GraphDrive, GraphDriveItem, GraphDeletedItem, GraphIdentity, GraphIdentitySet, GraphItemReference, GraphUser } from './serialize';
export { quickXorHash } from './quickxor';
export type { GraphSubscription, LifecycleEvent } from './subscriptions';
export type { WebhookDeliveryRecord } from '../shared/webhook-sender';
