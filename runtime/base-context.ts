import type { Logger } from '../common/logger';
import type { BaseContext, ConnectionInfo, HttpMethod, HttpResponse, ProviderTransport, RequestConfig } from './types';

/** Where connection metadata lives; the worker writes MongoDB, dry runs keep a stub. */
export interface MetadataStore {
  replace(metadata: Record<string, unknown>): Promise<void>;
  merge(metadata: Record<string, unknown>): Promise<void>;
}

export interface BaseContextDeps {
  connection: ConnectionInfo;
  transport: ProviderTransport;
  metadata: MetadataStore;
  logger: Logger;
}

/**
 * The part of `ctx` that syncs and actions share: requests to the provider, the
 * connection, its metadata and logging. Every backing (worker, dry run, mocks) builds on
 * this with its own transport and metadata store.
 */
export function createBaseContext(deps: BaseContextDeps): BaseContext {
  let metadataCache: Record<string, unknown> = { ...deps.connection.metadata };
  const send =
    (method: HttpMethod) =>
    <T>(config: RequestConfig): Promise<HttpResponse<T>> =>
      deps.transport.request<T>({ ...config, method });

  const base: Omit<BaseContext, 'paginate'> = {
    connectionId: deps.connection.connection_id,
    providerConfigKey: deps.connection.provider_config_key,
    get: send('GET'),
    post: send('POST'),
    put: send('PUT'),
    patch: send('PATCH'),
    delete: send('DELETE'),
    proxy: (config) => deps.transport.request(config),
    async getConnection() {
      return { ...deps.connection, connection_config: { ...deps.connection.connection_config }, metadata: { ...metadataCache } };
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
  };
  return base as BaseContext;
}
