import { WorkflowNotFoundError } from '@temporalio/client';
import type { ConnectionSubscriptionsInput, SubscriptionLifecycle } from '../activities/subscription-contracts';
import { outageOf } from '../common/outage';
import type { ConnectionDoc } from '../store/connections';
import type { subscriptionLifecycleSignal } from '../workflows/connection-subscriptions';
import type { ControlDeps } from './deps';
import { connectionSubscriptionsWorkflowId } from './workflow-ids';
import { startWorkflow } from './workflow-start';

const LIFECYCLE: (typeof subscriptionLifecycleSignal)['name'] = 'subscriptionLifecycle';

function inputOf(connection: ConnectionDoc): ConnectionSubscriptionsInput {
  return {
    environment: connection.environment,
    connection: connection._id,
    connectionId: connection.connection_id,
    providerConfigKey: connection.provider_config_key,
    provider: connection.provider,
  };
}

/**
 * A new connection of an integration that keeps webhook subscriptions (OneDrive) gets the
 * workflow that makes and renews them (workflows/connection-subscriptions.ts); one already
 * running is the answer.
 */
export async function startConnectionSubscriptions(deps: ControlDeps, connection: ConnectionDoc): Promise<void> {
  if (!deps.registry.get(connection.provider)?.subscriptions) return;
  await startWorkflow(deps.temporal, 'connectionSubscriptions', {
    workflowId: connectionSubscriptionsWorkflowId(deps.settings.temporalIdPrefix, connection),
    taskQueue: deps.settings.syncTaskQueue,
    args: [inputOf(connection)],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

/** Passes a lifecycle notification on to the connection's subscriptions workflow (started again if it had ended). */
export async function signalSubscriptionLifecycle(deps: ControlDeps, connection: ConnectionDoc, event: SubscriptionLifecycle): Promise<void> {
  await deps.temporal.workflow.signalWithStart('connectionSubscriptions', {
    workflowId: connectionSubscriptionsWorkflowId(deps.settings.temporalIdPrefix, connection),
    taskQueue: deps.settings.syncTaskQueue,
    args: [inputOf(connection)],
    signal: LIFECYCLE,
    signalArgs: [event],
  });
}

/** Ends the connection's subscriptions workflow (the connection is being deleted); not running is fine. */
export async function endConnectionSubscriptions(deps: ControlDeps, connection: ConnectionDoc): Promise<void> {
  if (!deps.registry.get(connection.provider)?.subscriptions) return;
  await deps.temporal.workflow
    .getHandle(connectionSubscriptionsWorkflowId(deps.settings.temporalIdPrefix, connection))
    .terminate('connection deleted')
    .catch((err: unknown) => {
      if (outageOf(err) || !(err instanceof WorkflowNotFoundError)) throw err;
    });
}
