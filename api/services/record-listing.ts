import { decodeRecordCursor, encodeRecordCursor } from '../../store/record-cursor';
import type { IntegrationRegistry } from '../../runtime/registry';
import type { UnifiedMapping } from '../../runtime/types';
import type { ConnectionDoc } from '../../store/connections';
import type { RecordAction, RecordDoc } from '../../store/records';
import type { Stores } from '../../store/db';
import { findRecentConnection } from '../../store/connection-lookup';
import type { ListRecordsQuery } from '../schemas/records';

/**
 * One page of a connection's records, as `GET /records` and the sync endpoints
 * (`GET /v1/user-files`, ...) return them. A unified model name (`UnifiedFile`) reads the
 * provider's model it maps from and converts each record on the way out.
 */
export async function listRecordsPage(stores: Stores, registry: IntegrationRegistry, connection: ConnectionDoc, q: ListRecordsQuery) {
  const { model, mapping } = resolveModel(registry, connection.provider, q.model);
  const actions = q.filter?.split(',').map((s) => s.trim().toUpperCase() as RecordAction);
  const ids = q.ids === undefined ? undefined : ([] as string[]).concat(q.ids);
  const page = await stores.records.list(
    { environment: connection.environment, connection: connection._id, model, variant: q.variant },
    {
      after: q.cursor ? decodeRecordCursor(q.cursor) : undefined,
      limit: q.limit,
      modifiedAfter: q.modified_after ? new Date(q.modified_after) : undefined,
      actions,
      ids,
    },
  );
  return {
    records: page.records.map((doc) => present(doc, mapping)),
    // Set while there may be more: a page cut short by the per-request scan bound has one too.
    next_cursor: page.next ? encodeRecordCursor(page.next) : null,
  };
}

/**
 * The connection a records read names, as connection-lookup.ts finds it (same errors, the
 * unknown integration first), read through the stores' caches of a few seconds as the
 * proxy's lookups are (store/read-cache.ts): every page of a read needs both documents,
 * and two point reads of each (key, then document) were four of a page's ten database
 * commands. A connection another process deleted meanwhile is read for at most
 * READ_CACHE_TTL_MS more, and has no records left by then: its records go with it.
 */
export async function findReadConnection(
  stores: Pick<Stores, 'integrations' | 'connections'>,
  environment: string,
  providerConfigKey: string,
  connectionId: string,
): Promise<ConnectionDoc> {
  return (await findRecentConnection(stores, environment, providerConfigKey, connectionId)).connection;
}

export function resolveModel(registry: IntegrationRegistry, provider: string, requested: string): { model: string; mapping?: UnifiedMapping } {
  for (const sync of registry.get(provider)?.syncs ?? []) {
    if (sync.models[requested]) return { model: requested };
    for (const [model, mapping] of Object.entries(sync.unified ?? {})) if (mapping.name === requested) return { model, mapping };
  }
  // An unknown model simply has no records (as on Nango); a custom sync may add it later.
  return { model: requested };
}

/** The models a connection's records can be read as: each sync's own, and the unified shape where one exists. */
export function recordModels(registry: IntegrationRegistry, provider: string): Array<{ model: string; unified: boolean }> {
  const models = new Map<string, boolean>();
  for (const sync of registry.get(provider)?.syncs ?? []) {
    for (const model of Object.keys(sync.models)) models.set(model, false);
    for (const mapping of Object.values(sync.unified ?? {})) models.set(mapping.name, true);
  }
  return [...models].map(([model, unified]) => ({ model, unified }));
}

/** Whether some sync of the provider stores `requested` (by its own or its unified name). */
export function isKnownModel(registry: IntegrationRegistry, provider: string, requested: string): boolean {
  return (registry.get(provider)?.syncs ?? []).some((s) => s.models[requested] || Object.values(s.unified ?? {}).some((m) => m.name === requested));
}

function present(doc: RecordDoc, mapping?: UnifiedMapping) {
  // A pruned record (PATCH /records/prune) is its id and metadata: there is no payload to map.
  const payload = doc.pruned_at ? { id: doc.id } : mapping ? mapping.map(doc.data) : doc.data;
  return {
    ...payload,
    _weft_metadata: {
      first_seen_at: doc.first_seen_at.toISOString(),
      last_modified_at: doc.last_modified_at.toISOString(),
      last_action: doc.last_action,
      deleted_at: doc.deleted_at ? doc.deleted_at.toISOString() : null,
      cursor: encodeRecordCursor(doc),
      pruned_at: doc.pruned_at ? doc.pruned_at.toISOString() : null,
    },
  };
}
