import type { Logger } from '../common/logger';
import type { RecordStore, RecordScope, RecordWriter } from '../store/records';
import type { AttemptCheckpoint } from './checkpoint';
import { listingKey } from './checkpoint';
import { IntegrationCodeError } from './errors';
import type { ProviderClient } from './http/provider-client';
import { paginatePages } from './paginate';
import type { ConnectionInfo, ModelSchemas, PaginateConfig, PaginationConfig, RequestConfig, SyncContext } from './types';
import { validateRecords } from './validation';

export interface SyncRunScope {
  environment: string;
  connection: string;
  connectionId: string;
  providerConfigKey: string;
  variant: string;
  runId: string;
  lastSyncDate: Date | null;
  models: ModelSchemas;
  /** Full syncs record which ids they saw, for delete detection at the end. */
  detectDeletes: boolean;
}

export interface WorkerContextDeps {
  scope: SyncRunScope;
  client: ProviderClient;
  providerPagination: PaginationConfig | undefined;
  records: RecordStore;
  connection: ConnectionInfo;
  metadata: {
    replace(metadata: Record<string, unknown>): Promise<void>;
    merge(metadata: Record<string, unknown>): Promise<void>;
  };
  checkpointStore: { get(): Promise<unknown>; save(value: unknown): Promise<void> };
  attempt: AttemptCheckpoint;
  heartbeat(details: AttemptCheckpoint): void;
  logger: Logger;
}

/** The worker backing of `ctx`: real HTTP, records in MongoDB, progress in heartbeats. */
export function createWorkerSyncContext(deps: WorkerContextDeps): SyncContext {
  const { scope, client, records, attempt } = deps;
  // Listings currently being iterated, innermost last. A listing that has saved records
  // is checkpointed page by page; one that only drives control flow (a list of repos to
  // visit) is re-read on resume, because the code after it needs its items.
  const openListings: Array<{ key: string; saving: boolean }> = [];
  let metadataCache: Record<string, unknown> = { ...deps.connection.metadata };

  const send = <T>(method: RequestConfig['method']) => (config: RequestConfig) => client.request<T>({ ...config, method });

  const writers = new Map<string, Promise<RecordWriter>>();
  function writerFor(target: RecordScope): Promise<RecordWriter> {
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

  const ctx: SyncContext = {
    connectionId: scope.connectionId,
    providerConfigKey: scope.providerConfigKey,
    variant: scope.variant,
    lastSyncDate: scope.lastSyncDate,
    get: send('GET'),
    post: send('POST'),
    put: send('PUT'),
    patch: send('PATCH'),
    delete: send('DELETE'),
    proxy: (config) => client.request(config),

    async *paginate<T>(config: PaginateConfig): AsyncGenerator<T[], void, undefined> {
      const key = listingKey(config);
      const resume = attempt.pages[key];
      if (resume === 'done') {
        deps.logger.info({ endpoint: config.endpoint }, 'listing already completed by an earlier attempt; skipping');
        return;
      }
      const frame = { key, saving: false };
      openListings.push(frame);
      try {
        for await (const page of paginatePages<T>((c) => client.request(c), config, deps.providerPagination, resume)) {
          yield page.items;
          // The consumer has processed the page (its records are saved): move the checkpoint.
          if (frame.saving) {
            attempt.pages[key] = page.next ?? 'done';
            deps.heartbeat(attempt);
          }
        }
      } finally {
        openListings.pop();
      }
    },

    async batchSave(input, model) {
      const target = recordScope(model);
      const valid = validateRecords(model, scope.models[model], input);
      const incoming = valid.map((r) => ({ id: String(r.id), data: r as unknown as Record<string, unknown> }));
      await (await writerFor(target)).saveBatch(incoming);
      if (scope.detectDeletes) await records.markSeen(target, scope.runId, incoming.map((r) => r.id));
      markSaving();
      attempt.savedRecords += incoming.length;
      // Inside a listing the heartbeat goes out once its cursor has moved past this page
      // (a heartbeat now would carry the old cursor and could be the last one sent).
      if (openListings.length === 0) deps.heartbeat(attempt);
    },

    async batchDelete(input, model) {
      const target = recordScope(model);
      await (await writerFor(target)).deleteByIds(input.map((r) => String(r.id)));
      markSaving();
      if (openListings.length === 0) deps.heartbeat(attempt);
    },

    async getConnection() {
      return { ...deps.connection, metadata: { ...metadataCache } };
    },
    async getMetadata<T>() {
      return { ...metadataCache } as T;
    },
    async setMetadata(metadata) {
      await deps.metadata.replace(metadata);
      metadataCache = { ...metadata };
    },
    async updateMetadata(metadata) {
      await deps.metadata.merge(metadata);
      metadataCache = { ...metadataCache, ...metadata };
    },
    log(message, fields) {
      deps.logger.info({ ...fields, integrationLog: true }, message);
    },
    async getCheckpoint<T>() {
      return ((await deps.checkpointStore.get()) ?? null) as T | null;
    },
    async saveCheckpoint(value) {
      await deps.checkpointStore.save(value);
    },
  };
  return ctx;
}
