import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Credentials } from '../auth/credentials';
import { sealedAt } from '../auth/credential-cipher';
import { openProviderSession, type ProviderSessionDeps } from '../common/provider-session';
import { createWorkerActionContext } from '../runtime/worker-context';
import { ActionError } from '../runtime/errors';
import { toValidationIssues } from '../runtime/validation';
import type { ActionRunInput } from './action-contracts';
import { connectionInfo } from './connection-info';
import { toActivityFailure } from './failures';

export type ActionActivityDeps = ProviderSessionDeps;

/** The activity of an action run, given its dependencies (Temporal samples style). */
export function createActionActivities(deps: ActionActivityDeps) {
  const { stores, registry } = deps;

  return {
    /** Runs the action's exec(ctx, input) once; input and output are validated with its schemas. */
    async runAction(input: ActionRunInput): Promise<unknown> {
      const activity = Context.current();
      const def = registry.getAction(input.provider, input.actionName);
      if (!def) throw ApplicationFailure.nonRetryable(`Integration "${input.provider}" has no action "${input.actionName}".`, 'unknown_action');
      const connection = await stores.connections.getById(input.connection);
      if (!connection || connection.environment !== input.environment) {
        throw ApplicationFailure.nonRetryable(`Connection "${input.connectionId}" no longer exists.`, 'unknown_connection');
      }
      const integration = await stores.integrations.get(input.environment, input.providerConfigKey);
      if (!integration) throw ApplicationFailure.nonRetryable(`Integration "${input.providerConfigKey}" no longer exists.`, 'unknown_provider_config');

      try {
        const parsedInput = def.input.safeParse(input.input ?? {});
        if (!parsedInput.success) {
          throw new ActionError('invalid_action_input', `Invalid input for action ${def.name}.`, 400, { errors: toValidationIssues(parsedInput.error) });
        }
        const session = openProviderSession(deps, {
          environment: input.environment,
          integration,
          connection,
          credentials: deps.cipher.open<Credentials>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection._id)),
          connectionId: input.connectionId,
          operation: `action:${input.actionName}`,
          runId: activity.info.workflowExecution?.workflowId ?? null,
          signal: activity.cancellationSignal,
        });
        const logger = deps.logger.child({ action: input.actionName, connectionId: input.connectionId, attempt: activity.info.attempt });
        const ctx = createWorkerActionContext({
          transport: session.client,
          providerPagination: session.provider.definition.pagination,
          connection: connectionInfo(connection, deps.cipher),
          metadata: {
            replace: (m) => stores.connections.updateMetadata(connection._id, m, 'replace'),
            merge: (m) => stores.connections.updateMetadata(connection._id, m, 'merge'),
          },
          logger,
        });
        const output = await def.exec(ctx, parsedInput.data);
        const parsedOutput = def.output.safeParse(output);
        if (!parsedOutput.success) {
          throw new ActionError('invalid_action_output', `Action ${def.name} returned output that does not match its schema.`, 500, { errors: toValidationIssues(parsedOutput.error) });
        }
        return parsedOutput.data;
      } catch (err) {
        throw toActivityFailure(err);
      }
    },
  };
}

export type ActionActivities = ReturnType<typeof createActionActivities>;
