import type { Logger } from '../common/logger';
import { createBaseContext, type MetadataStore } from './base-context';
import type { AttemptCheckpoint } from './checkpoint';
import { listingKey } from './checkpoint';
import { IntegrationCodeError } from './errors';
import { paginatePages, plainListing } from './paginate';
import type { ActionContext, ConnectionInfo, Listing, ModelSchemas, PaginateConfig, PaginationConfig, ProviderTransport, SyncContext } from './types';
import { validateRecords } from './validation';

/** Which records a sync writes: one model (and variant) of one connection. */
export interface RecordScope {
  environment: string;
  connection: string;
  model: string;
  variant: string;
}

/** Writes one run's records of one scope; it also remembers which ids the run saw (delete detection). */
export interface RecordBatchWriter {
  saveBatch(records: Array<{ id: string; data: Record<string, unknown> }>): Promise<unknown>;
  deleteByIds(ids: string[]): Promise<unknown>;
}

/** Where an action's records go: each save one small run of its own, committed at once (RecordStore.saveNow). */
export interface ActionRecordSink {
  saveNow(scope: RecordScope, runId: string, records: Array<{ id: string; data: Record<string, unknown> }>): Promise<unknown>;
}

/** Where a sync's records go (store/records.ts `RecordStore` is the MongoDB one). */
export interface RecordSink {
  openWriter(scope: RecordScope, runId: string): Promise<RecordBatchWriter>;
}

export interface SyncRunScope {
  environment: string;
  connection: string;
  variant: string;
  runId: string;
  lastSyncDate: Date | null;
  models: ModelSchemas;
}

export interface WorkerContextDeps {
  scope: SyncRunScope;
  transport: ProviderTransport;
  providerPagination: PaginationConfig | undefined;
  records: RecordSink;
  connection: ConnectionInfo;
  metadata: MetadataStore;
  checkpointStore: { get(): Promise<unknown>; save(value: unknown): Promise<void> };
  attempt: AttemptCheckpoint;
  heartbeat(details: AttemptCheckpoint): void;
  logger: Logger;
}

export interface WorkerSync {
  ctx: SyncContext;
}

/** The worker backing of `ctx` for syncs: real HTTP, records in MongoDB, progress in heartbeats. */
export function createWorkerSyncContext(deps: WorkerContextDeps): WorkerSync {
  const { scope, transport, records, attempt } = deps;
  // Listings currently being iterated, innermost last. A listing that has saved records
  // is checkpointed page by page; one that only drives control flow (a list of repos to
  // visit) is re-read on resume, because the code after it needs its items.
  const openListings: Array<{ key: string; saving: boolean }> = [];
  attempt.trackDeletes ??= [];

  const writers = new Map<string, Promise<RecordBatchWriter>>();
  function writerFor(target: RecordScope): Promise<RecordBatchWriter> {
    let w = writers.get(target.model);
    if (!w) {
      w = records.openWriter(target, scope.runId);
      writers.set(target.model, w);
    }
    return w;
  }

  function recordScope(model: string): RecordScope {
    if (!scope.models[model]) {
      throw new IntegrationCodeError('unknown_model', `Model "${model}" is not declared by this sync (declared: ${Object.keys(scope.models).join(', ')}).`);
    }
    return { environment: scope.environment, connection: scope.connection, model, variant: scope.variant };
  }

  function markSaving(): void {
    const top = openListings[openListings.length - 1];
    if (top) top.saving = true;
  }

  function checkpointedListing<T>(config: PaginateConfig): Listing<T> {
    const key = listingKey(config);
    let end: Record<string, unknown> | null = null;
    async function* pages(): AsyncGenerator<T[]> {
      const resume = attempt.pages[key];
      if (resume?.type === 'done') {
        deps.logger.info({ endpoint: config.endpoint }, 'listing already completed by an earlier attempt; skipping');
        end = resume.end;
        return;
      }
      const frame = { key, saving: false };
      openListings.push(frame);
      try {
        for await (const page of paginatePages<T>((c) => transport.request(c), config, deps.providerPagination, resume)) {
          if (!page.next) end = page.rest;
          yield page.items;
          // The consumer has processed the page (its records are saved): move the checkpoint.
          if (frame.saving) {
            attempt.pages[key] = page.next ?? { type: 'done', end: page.rest };
            deps.heartbeat(attempt);
          }
        }
      } finally {
        openListings.pop();
      }
    }
    return {
      get end() {
        return end;
      },
      [Symbol.asyncIterator]: () => pages(),
    };
  }

  const base = createBaseContext({ connection: deps.connection, transport, metadata: deps.metadata, logger: deps.logger });
  const ctx: SyncContext = Object.assign(base, {
    variant: scope.variant,
    lastSyncDate: scope.lastSyncDate,
    paginate: checkpointedListing,

    async batchSave<T extends { id: string }>(input: T[], model: string) {
      const target = recordScope(model);
      const valid = validateRecords(model, scope.models[model], input);
      const incoming = valid.map((r) => ({ id: String(r.id), data: r as unknown as Record<string, unknown> }));
      // The writer also logs which ids the run saw, so a full run (or one that declared
      // trackDeletes) can tell, when it completes, which records are gone.
      await (await writerFor(target)).saveBatch(incoming);
      markSaving();
      attempt.savedRecords += incoming.length;
      // Inside a listing the heartbeat goes out once its cursor has moved past this page
      // (a heartbeat now would carry the old cursor and could be the last one sent).
      if (openListings.length === 0) deps.heartbeat(attempt);
    },

    async batchDelete<T extends { id: string }>(input: T[], model: string) {
      const target = recordScope(model);
      await (await writerFor(target)).deleteByIds(input.map((r) => String(r.id)));
      markSaving();
      if (openListings.length === 0) deps.heartbeat(attempt);
    },

    trackDeletes(model: string) {
      recordScope(model);
      if (!attempt.trackDeletes!.includes(model)) {
        attempt.trackDeletes!.push(model);
        deps.heartbeat(attempt);
      }
    },

    async getCheckpoint<T>() {
      return ((await deps.checkpointStore.get()) ?? null) as T | null;
    },
    async saveCheckpoint(value: unknown) {
      await deps.checkpointStore.save(value);
    },
  });
  return { ctx };
}

export interface ActionRecordScope {
  environment: string;
  connection: string;
  /** Names this action's saves: each is run `<runIdPrefix>:<n>`. */
  runIdPrefix: string;
  /** Every model the integration's syncs declare, with their schemas. */
  models: ModelSchemas;
  /** The variant saves go to unless they name one (the syncs' `base`). */
  defaultVariant: string;
}

export interface WorkerActionContextDeps {
  transport: ProviderTransport;
  providerPagination: PaginationConfig | undefined;
  connection: ConnectionInfo;
  metadata: MetadataStore;
  logger: Logger;
  records: ActionRecordSink;
  recordScope: ActionRecordScope;
}

/** The worker backing of `ctx` for actions: one short call, nothing to checkpoint. */
export function createWorkerActionContext(deps: WorkerActionContextDeps): ActionContext {
  const { recordScope } = deps;
  let saves = 0;
  const base = createBaseContext(deps);
  return Object.assign(base, {
    paginate: <T>(config: PaginateConfig) => plainListing<T>(deps.transport, config, deps.providerPagination),

    async batchSave<T extends { id: string }>(input: T[], model: string, options: { variant?: string } = {}) {
      const schema = recordScope.models[model];
      if (!schema) {
        throw new IntegrationCodeError(
          'unknown_model',
          `Model "${model}" is not declared by a sync of this integration (declared: ${Object.keys(recordScope.models).join(', ')}).`,
        );
      }
      const valid = validateRecords(model, schema, input);
      const scope = { environment: recordScope.environment, connection: recordScope.connection, model, variant: options.variant ?? recordScope.defaultVariant };
      saves += 1;
      await deps.records.saveNow(
        scope,
        `${recordScope.runIdPrefix}:${saves}`,
        valid.map((r) => ({ id: String(r.id), data: r as unknown as Record<string, unknown> })),
      );
    },
  });
}
