import { BadRequestError, ConflictError, NotFoundError } from '../common/errors';
import type { ConnectionDoc } from '../store/connections';
import type { SyncDoc } from '../store/syncs';
import type { ControlDeps } from './deps';
import { outageOf } from '../common/outage';
import { connectionSyncWorkflowId } from './workflow-ids';
import { BASE_VARIANT } from '../activities/sync-contracts';
import { startSyncRun, type SyncSelector } from './sync-runs';
import { deleteSyncSchedules, putSyncSchedule } from './sync-schedules';
import { parseFrequency } from './sync-frequency';

/** Variants of one sync on one connection, besides its base: each has its own schedule, checkpoint and records. */
const MAX_VARIANTS_PER_SYNC = 20;

const VARIANT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A new variant of a connection's sync (POST /sync/:name/variant/:variant): its state and
 * its own schedule, scheduled and run right away if the sync is auto-start, paused otherwise,
 * as for a new connection. Refused (nothing created) when the name is not a variant name or
 * is taken, or the sync already has its maximum of variants.
 */
export async function createSyncVariant(deps: ControlDeps, connection: ConnectionDoc, syncName: string, variant: string): Promise<SyncDoc> {
  if (!VARIANT_NAME.test(variant) || variant === BASE_VARIANT) {
    throw new BadRequestError('invalid_variant', `"${variant}" is not a variant name: 1-64 letters, digits, "-" or "_", and not "${BASE_VARIANT}".`);
  }
  const def = deps.registry.getSync(connection.provider, syncName);
  if (!def) throw new BadRequestError('unknown_sync', `Integration "${connection.provider_config_key}" has no sync "${syncName}".`);
  // The limit holds across concurrent creates and API processes: each variant takes one of the sync's numbered slots.
  const state = await deps.stores.syncs.createVariant(
    {
      environment: connection.environment,
      connection: connection._id,
      connection_id: connection.connection_id,
      provider_config_key: connection.provider_config_key,
      name: syncName,
      variant,
    },
    { limit: MAX_VARIANTS_PER_SYNC, base: BASE_VARIANT },
  );
  if (state === 'exists') throw variantExists(connection, syncName, variant);
  if (state === 'full') throw tooManyVariants(connection, syncName);
  // A variant of this name deleted a moment ago may have had a run that wrote a last page or
  // checkpoint as it was stopped: the new one starts from nothing.
  await deps.stores.syncs.reset({ connection: connection._id, name: syncName, variant });
  await deleteVariantRecords(deps, connection, syncName, variant);
  const sel = { name: syncName, variant };
  await putSyncSchedule(deps, connection, sel, { paused: !def.autoStart, everyMs: parseFrequency(def.frequency) });
  if (def.autoStart) await startSyncRun(deps, connection, sel);
  return state;
}

/** Deletes a variant: its schedule first (nothing fires again), its state and checkpoint, its run, then its records. */
export async function deleteSyncVariant(deps: ControlDeps, connection: ConnectionDoc, syncName: string, variant: string): Promise<void> {
  if (variant === BASE_VARIANT) throw new BadRequestError('invalid_variant', `The base variant of a sync cannot be deleted; delete the connection instead.`);
  const sel: SyncSelector = { name: syncName, variant };
  const key = { connection: connection._id, name: syncName, variant };
  if (!(await deps.stores.syncs.get(key))) {
    throw new NotFoundError('unknown_sync_variant', `Connection "${connection.connection_id}" has no variant "${variant}" of sync "${syncName}".`);
  }
  await deleteSyncSchedules(deps, connection, [sel]);
  // The state next: a fire or trigger still on its way finds no variant and runs nothing.
  await deps.stores.syncs.delete(key);
  await deps.temporal.workflow
    .getHandle(connectionSyncWorkflowId(deps.settings.temporalIdPrefix, connection, sel))
    .terminate('sync variant deleted')
    // Not running is fine; Temporal out of reach is not.
    .catch((err: unknown) => {
      if (outageOf(err)) throw err;
    });
  await deleteVariantRecords(deps, connection, syncName, variant);
}

/** The variant's records: of the sync's own models only (another sync may have a variant of the same name). */
async function deleteVariantRecords(deps: Pick<ControlDeps, 'registry' | 'stores'>, connection: ConnectionDoc, syncName: string, variant: string) {
  for (const model of Object.keys(deps.registry.getSync(connection.provider, syncName)?.models ?? {})) {
    await deps.stores.records.deleteScope({ environment: connection.environment, connection: connection._id, model, variant });
  }
}

function variantExists(connection: ConnectionDoc, syncName: string, variant: string): ConflictError {
  return new ConflictError('sync_variant_already_exists', `Sync "${syncName}" of connection "${connection.connection_id}" already has a variant "${variant}".`);
}

function tooManyVariants(connection: ConnectionDoc, syncName: string): ConflictError {
  return new ConflictError(
    'too_many_variants',
    `Sync "${syncName}" of connection "${connection.connection_id}" has ${MAX_VARIANTS_PER_SYNC} variants, the most it may have.`,
  );
}
