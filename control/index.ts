/**
 * The control layer: what changes the work Temporal runs for a connection's syncs. Starting
 * a run, a background operation over every connection of an integration, a sync's schedule
 * and its variants, and the part of creating or deleting a connection that sets these up or
 * tears them down. Its own folder, not part of api/, because the API is not its only caller:
 * the worker applies the same operations to each connection of a background operation and
 * reconciles every schedule at start. So it sits below api/ and app/ (both call it) and above
 * activities/ (it starts the workflows whose contracts are declared there), and declares the
 * dependencies it needs (deps.ts) instead of borrowing the API's.
 *
 * Other folders import it through this file; its modules import each other directly.
 */
export type { ControlDeps } from './deps';
export { createConnection, deleteConnection } from './connections';
export { startConnectionSubscriptions } from './connection-subscriptions';
export { WEFT_SEARCH_ATTRIBUTES, searchAttributesFor } from './search-attributes';
export { applySyncOperation, requestSyncOperation } from './sync-operations';
export { countRunningSyncs, countSyncRunsByInterval, syncRunInput, type RunCounts } from './sync-runs';
export { countPausedSchedules, reconcileSyncSchedules, setConnectionSyncFrequency, startNewConnectionSyncs } from './sync-schedules';
export { syncStatus } from './sync-status';
export { createSyncVariant, deleteSyncVariant } from './sync-variants';
export { actionWorkflowId, scheduledSyncWorkflowId, syncScheduleId, syncWorkflowId } from './workflow-ids';
export { startWorkflow } from './workflow-start';
export { addConnectionRoutes, recordRoutesOfEarlierConnections, type DeliveryProcessingDeps } from './provider-deliveries';
export { startProviderDeliveryProcessor } from './provider-delivery-processor';
