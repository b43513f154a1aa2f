import type { z } from 'zod';
import { redactJson } from '../../common/secrets';
import type { Logger } from '../../common/logger';
import { ActionError, type InvalidRecordDetail } from '../errors';
import type { ActionDefinition, ConnectionInfo, IntegrationDefinition, ModelSchemas, ProviderTransport, SyncDefinition } from '../types';
import { toValidationIssues } from '../validation';
import { createDryRunActionContext, createDryRunSyncContext, type DryRunObserver, type DryRunWrites } from './dryrun-context';

export interface DryRunOptions {
  integration: IntegrationDefinition;
  fn: SyncDefinition | ActionDefinition;
  connection: ConnectionInfo;
  transport: ProviderTransport;
  /** `--validate` (and `--save`): the first invalid record, input or output halts the run. */
  validate: boolean;
  observer: DryRunObserver;
  logger: Logger;
  variant?: string;
  lastSyncDate?: Date | null;
  /** The action's input (actions only). */
  input?: unknown;
}

export interface DryRunResult {
  kind: 'sync' | 'action';
  writes: DryRunWrites;
  /** The action's output (actions only). */
  output?: unknown;
}

/**
 * Runs one sync or action the way the worker would, but through the dry-run backing of `ctx`:
 * the provider reached through Weft's proxy, every write kept in memory and returned.
 */
export async function runDryRun(opts: DryRunOptions): Promise<DryRunResult> {
  const common = {
    connection: opts.connection,
    transport: opts.transport,
    providerPagination: opts.integration.provider.pagination,
    validate: opts.validate,
    observer: opts.observer,
    logger: opts.logger,
  };
  if (opts.fn.kind === 'sync') {
    const { ctx, writes } = createDryRunSyncContext({
      ...common,
      models: opts.fn.models,
      variant: opts.variant ?? 'base',
      lastSyncDate: opts.lastSyncDate ?? null,
    });
    await opts.fn.exec(ctx);
    // A full sync marks what it did not see as deleted, as if it had called trackDeletes for each model.
    if (opts.fn.syncType === 'full') for (const model of Object.keys(opts.fn.models)) if (!writes.trackDeletes.includes(model)) writes.trackDeletes.push(model);
    return { kind: 'sync', writes };
  }

  const action = opts.fn;
  const input = checkAction(action, 'input', action.input, opts.input, opts);
  const { ctx, writes } = createDryRunActionContext({ ...common, models: syncModels(opts.integration) });
  const output = await action.exec(ctx, input);
  return { kind: 'action', writes, output: checkAction(action, 'output', action.output, output, opts) };
}

/** Every model a sync of the integration declares: what an action's batchSave may name. */
function syncModels(integration: IntegrationDefinition): ModelSchemas {
  return Object.assign({}, ...integration.syncs.map((s) => s.models)) as ModelSchemas;
}

/**
 * An action's input or output against its schema: with `validate` a mismatch
 * halts with `invalid_action_input`/`invalid_action_output` and the validation failure
 * record's shape; without it the observer hears of it and the value goes on as it is.
 */
function checkAction(action: ActionDefinition, which: 'input' | 'output', schema: z.ZodType, value: unknown, opts: DryRunOptions): unknown {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const detail: InvalidRecordDetail = { validation: toValidationIssues(parsed.error), model: `${action.name} ${which}` };
  if (!opts.validate) {
    opts.observer.invalid?.(detail, undefined);
    return value;
  }
  throw new ActionError(
    `invalid_action_${which}`,
    which === 'input' ? `Invalid input for action ${action.name}.` : `Action ${action.name} returned output that does not match its schema.`,
    400,
    detail,
  );
}

/**
 * A record, input, output or log line fit to print, by common/secrets' rules: the secrets the
 * caller knows scrubbed wherever they appear, secret-named fields' values, and the secrets of
 * any URL in a text (a signed download URL, a webhook URL) replaced.
 */
export function redactValue(value: unknown, secrets: string[]): unknown {
  return redactJson(value, { secrets });
}
