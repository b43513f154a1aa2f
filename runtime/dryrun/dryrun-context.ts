import type { z } from 'zod';
import type { Logger } from '../../common/logger';
import { createBaseContext, type MetadataStore } from '../base-context';
import { IntegrationCodeError, InvalidRecordError, type InvalidRecordDetail } from '../errors';
import { plainListing } from '../paginate';
import type { ActionContext, ConnectionInfo, Listing, ModelSchemas, PaginateConfig, PaginationConfig, ProviderTransport, SyncContext } from '../types';
import { toValidationIssues } from '../validation';

/** What a dry run would have written, kept in memory: nothing reaches Weft's database. */
export interface DryRunWrites {
  /** Per model, every record passed to batchSave, in call order (valid ones as their schema parsed them). */
  batchSave: Record<string, unknown[]>;
  batchDelete: Record<string, unknown[]>;
  /** Models whose unseen records the run would mark deleted (ctx.trackDeletes). */
  trackDeletes: string[];
  /** The last checkpoint the function saved, if any. */
  checkpoint: unknown;
  /** The metadata as the function left it (setMetadata/updateMetadata applied to the copy). */
  metadata: Record<string, unknown>;
  /** Whether the function wrote metadata at all. */
  metadataChanged: boolean;
}

/** What the command shows while the function runs. */
export interface DryRunObserver {
  page?(model: { endpoint: string; items: number }): void;
  saved?(model: string, count: number): void;
  deleted?(model: string, count: number): void;
  /** An invalid record (or action input/output) when validation does not halt the run (no `--validate`); `id` when it has one. */
  invalid?(detail: InvalidRecordDetail, id: string | undefined): void;
}

export interface DryRunContextDeps {
  connection: ConnectionInfo;
  transport: ProviderTransport;
  providerPagination: PaginationConfig | undefined;
  /** The models batchSave may name: the sync's own, or for an action every sync's of its integration. */
  models: ModelSchemas;
  /** With `--validate`, the first invalid record halts the run (InvalidRecordError); otherwise the observer hears of it. */
  validate: boolean;
  observer: DryRunObserver;
  logger: Logger;
}

function emptyWrites(metadata: Record<string, unknown>): DryRunWrites {
  return { batchSave: {}, batchDelete: {}, trackDeletes: [], checkpoint: null, metadata: { ...metadata }, metadataChanged: false };
}

/** The metadata store of a dry run: a copy in memory, the connection's real metadata untouched. */
function memoryMetadata(writes: DryRunWrites): MetadataStore {
  return {
    async replace(metadata) {
      writes.metadata = { ...metadata };
      writes.metadataChanged = true;
    },
    async merge(metadata) {
      writes.metadata = { ...writes.metadata, ...metadata };
      writes.metadataChanged = true;
    },
  };
}

function schemaOf(models: ModelSchemas, model: string, what: string): z.ZodType<{ id: string }> {
  const schema = models[model];
  if (!schema) throw new IntegrationCodeError('unknown_model', `Model "${model}" is not declared by ${what} (declared: ${Object.keys(models).join(', ')}).`);
  return schema;
}

/** Validates records as the worker would; an invalid one halts (`validate`) or is reported and kept as it came. */
function checkRecords(deps: DryRunContextDeps, model: string, schema: z.ZodType<{ id: string }>, records: unknown[]): unknown[] {
  return records.map((record) => {
    const parsed = schema.safeParse(record);
    if (parsed.success) return parsed.data;
    const detail: InvalidRecordDetail = { validation: toValidationIssues(parsed.error), model };
    if (deps.validate) throw new InvalidRecordError(detail, record);
    const id = (record as { id?: unknown } | null)?.id;
    deps.observer.invalid?.(detail, id === undefined || id === null ? undefined : String(id));
    return record;
  });
}

/** A listing through the real pagination code, each page reported to the observer. */
function observedListing<T>(deps: DryRunContextDeps, config: PaginateConfig): Listing<T> {
  const listing = plainListing<T>(deps.transport, config, deps.providerPagination);
  return {
    get end() {
      return listing.end;
    },
    async *[Symbol.asyncIterator]() {
      for await (const page of listing) {
        deps.observer.page?.({ endpoint: config.endpoint, items: page.length });
        yield page;
      }
    },
  };
}

function append(target: Record<string, unknown[]>, model: string, records: unknown[]): void {
  (target[model] ??= []).push(...records);
}

/** The dry-run backing of a sync's `ctx`: the provider through the proxy, every write kept in memory. */
export function createDryRunSyncContext(deps: DryRunContextDeps & { variant: string; lastSyncDate: Date | null }): { ctx: SyncContext; writes: DryRunWrites } {
  const writes = emptyWrites(deps.connection.metadata);
  const base = createBaseContext({ connection: deps.connection, transport: deps.transport, metadata: memoryMetadata(writes), logger: deps.logger });
  const ctx: SyncContext = Object.assign(base, {
    variant: deps.variant,
    lastSyncDate: deps.lastSyncDate,
    paginate: <T>(config: PaginateConfig) => observedListing<T>(deps, config),
    async batchSave<T extends { id: string }>(records: T[], model: string) {
      const checked = checkRecords(deps, model, schemaOf(deps.models, model, 'this sync'), records);
      append(writes.batchSave, model, checked);
      deps.observer.saved?.(model, checked.length);
    },
    async batchDelete<T extends { id: string }>(records: T[], model: string) {
      schemaOf(deps.models, model, 'this sync');
      append(writes.batchDelete, model, records);
      deps.observer.deleted?.(model, records.length);
    },
    trackDeletes(model: string) {
      schemaOf(deps.models, model, 'this sync');
      if (!writes.trackDeletes.includes(model)) writes.trackDeletes.push(model);
    },
    async getCheckpoint<T>() {
      return (writes.checkpoint ?? null) as T | null;
    },
    async saveCheckpoint(checkpoint: unknown) {
      writes.checkpoint = checkpoint;
    },
  });
  return { ctx, writes };
}

/** The dry-run backing of an action's `ctx`: its batchSave (the records cache) kept in memory too. */
export function createDryRunActionContext(deps: DryRunContextDeps): { ctx: ActionContext; writes: DryRunWrites } {
  const writes = emptyWrites(deps.connection.metadata);
  const base = createBaseContext({ connection: deps.connection, transport: deps.transport, metadata: memoryMetadata(writes), logger: deps.logger });
  const ctx: ActionContext = Object.assign(base, {
    paginate: <T>(config: PaginateConfig) => observedListing<T>(deps, config),
    async batchSave<T extends { id: string }>(records: T[], model: string) {
      const checked = checkRecords(deps, model, schemaOf(deps.models, model, 'a sync of this integration'), records);
      append(writes.batchSave, model, checked);
      deps.observer.saved?.(model, checked.length);
    },
  });
  return { ctx, writes };
}
