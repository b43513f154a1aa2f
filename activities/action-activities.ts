import { Context } from '@temporalio/activity';
import { NotFoundError } from '../common/errors';
import type { Credentials } from '../auth/credentials';
import { sealedAt, type CredentialCipher } from '../auth/credential-cipher';
import type { OpenProviderSession } from './provider-session';
import type { Logger } from '../common/logger';
import type { Stores } from '../store/db';
import type { IntegrationRegistry } from '../runtime/registry';
import type { ActionContext, ModelSchemas } from '../runtime/types';
import type { ConnectionDoc } from '../store/connections';
import type { IntegrationDoc } from '../store/integrations';
import { createWorkerActionContext } from '../runtime/worker-context';
import { ActionError } from '../runtime/errors';
import { toValidationIssues } from '../runtime/validation';
import type { ActionRunInput } from './action-contracts';
import { connectionInfo } from './connection-info';
import { BASE_VARIANT } from './sync-contracts';
import { withActivityFailures } from './failures';

export interface ActionActivityDeps {
  stores: Stores;
  cipher: CredentialCipher;
  registry: IntegrationRegistry;
  logger: Logger;
  /** Provider calls: credentials, throttle, budget, request log, egress (app/provider-session.ts). */
  openProviderSession: OpenProviderSession;
}

/** The activity of an action run, given its dependencies (Temporal samples style). */
export function createActionActivities(deps: ActionActivityDeps) {
  const { stores, registry } = deps;

  // Whatever the activity throws reaches the workflow as toActivityFailure made it (stable code, retry decision).
  return withActivityFailures({
    /** Runs the action's exec(ctx, input) once; input and output are validated with its schemas. */
    async runAction(input: ActionRunInput): Promise<unknown> {
      const activity = Context.current();
      const def = registry.getAction(input.provider, input.actionName);
      if (!def) throw new NotFoundError('unknown_action', `Integration "${input.provider}" has no action "${input.actionName}".`);
      const connection = await stores.connections.getById(input.connection);
      if (!connection || connection.environment !== input.environment) {
        throw new NotFoundError('unknown_connection', `Connection "${input.connectionId}" no longer exists.`);
      }
      const integration = await stores.integrations.get(input.environment, input.providerConfigKey);
      if (!integration) throw new NotFoundError('unknown_provider_config', `Integration "${input.providerConfigKey}" no longer exists.`);

      const parsedInput = def.input.safeParse(input.input ?? {});
      if (!parsedInput.success) {
        throw new ActionError('invalid_action_input', `Invalid input for action ${def.name}.`, 400, { errors: toValidationIssues(parsedInput.error) });
      }
      const ctx = connectionActionContext(deps, {
        environment: input.environment,
        integration,
        connection,
        operation: `action:${input.actionName}`,
        runId: activity.info.workflowExecution?.workflowId ?? null,
        // One per attempt: a retried action's saves are new runs, never an earlier attempt's log.
        runIdPrefix: `action:${activity.info.workflowExecution?.workflowId ?? input.actionName}:${activity.info.attempt}`,
        signal: activity.cancellationSignal,
        logFields: { action: input.actionName, attempt: activity.info.attempt },
      });
      const output = await def.exec(ctx, parsedInput.data);
      const parsedOutput = def.output.safeParse(output);
      if (!parsedOutput.success) {
        throw new ActionError('invalid_action_output', `Action ${def.name} returned output that does not match its schema.`, 500, {
          errors: toValidationIssues(parsedOutput.error),
        });
      }
      return parsedOutput.data;
    },
  });
}

/**
 * The `ctx` of code that acts for one connection outside a sync run (an action, a sync's
 * onWebhook): its provider calls through the connection's session (credentials, request log,
 * egress), and saves into the records of the integration's syncs, committed at once.
 */
export function connectionActionContext(
  deps: ActionActivityDeps,
  args: {
    environment: string;
    integration: IntegrationDoc;
    connection: ConnectionDoc;
    /** For the request log: `action:<name>`, `webhook:<sync>`. */
    operation: string;
    runId: string | null;
    /** Names the saves: each is run `<runIdPrefix>:<n>`. */
    runIdPrefix: string;
    signal?: AbortSignal;
    logFields: Record<string, unknown>;
  },
): ActionContext {
  const { connection } = args;
  const session = deps.openProviderSession({
    environment: args.environment,
    integration: args.integration,
    connection,
    credentials: deps.cipher.open<Credentials>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection)),
    connectionId: connection.connection_id,
    operation: args.operation,
    runId: args.runId,
    ...(args.signal ? { signal: args.signal } : {}),
  });
  return createWorkerActionContext({
    transport: session.client,
    providerPagination: session.provider.definition.pagination,
    connection: connectionInfo(connection, deps.cipher),
    metadata: {
      replace: (m) => deps.stores.connections.updateMetadata(connection._id, m, 'replace'),
      merge: (m) => deps.stores.connections.updateMetadata(connection._id, m, 'merge'),
    },
    logger: deps.logger.child({ connectionId: connection.connection_id, ...args.logFields }),
    records: deps.stores.records,
    recordScope: {
      environment: args.environment,
      connection: connection._id,
      runIdPrefix: args.runIdPrefix,
      models: syncModels(deps.registry, connection.provider),
      defaultVariant: BASE_VARIANT,
    },
  });
}

/** Every model the integration's syncs declare: what an action may save, with the schema the sync validates it with. */
function syncModels(registry: IntegrationRegistry, provider: string): ModelSchemas {
  const models: ModelSchemas = {};
  for (const sync of registry.get(provider)?.syncs ?? []) for (const [name, schema] of Object.entries(sync.models)) models[name] ??= schema;
  return models;
}

export type ActionActivities = ReturnType<typeof createActionActivities>;
