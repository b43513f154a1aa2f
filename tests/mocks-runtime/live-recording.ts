import { createLogger } from '../../common/logger';
import { createBaseContext } from '../../runtime/base-context';
import { ProviderHttpError } from '../../runtime/errors';
import type { RecordedExchange } from '../../runtime/mocks/fixture-files';
import { plainListing } from '../../runtime/paginate';
import type { ActionContext, ConnectionInfo, HttpMethod, IntegrationDefinition, RequestConfig, SyncContext } from '../../runtime/types';
import { validateRecords } from '../../runtime/validation';

/**
 * A stand-in for `weft dryrun --save` in the mock backing's own tests: runs a function
 * against a simulator over real HTTP (the provider's base URL replaced by the simulator's)
 * and keeps every exchange and write as the dry run hands them to writeMockRecording.
 */
export interface LiveRun {
  exchanges: RecordedExchange[];
  batchSave: Record<string, unknown[]>;
  batchDelete: Record<string, unknown[]>;
}

export function liveContext(opts: { integration: IntegrationDefinition; simulatorUrl: string; headers: Record<string, string>; connection: ConnectionInfo }): {
  ctx: SyncContext & ActionContext;
  run: LiveRun;
} {
  const run: LiveRun = { exchanges: [], batchSave: {}, batchDelete: {} };
  const base = new URL(opts.integration.provider.baseUrl);
  const transport = {
    async request<T>(config: RequestConfig) {
      const method: HttpMethod = config.method ?? 'GET';
      const target = /^https?:\/\//i.test(config.endpoint)
        ? new URL(config.endpoint)
        : new URL(`${base.pathname.replace(/\/+$/, '')}/${config.endpoint.replace(/^\/+/, '')}`, opts.simulatorUrl);
      for (const [k, v] of Object.entries(config.params ?? {})) if (v !== undefined) target.searchParams.set(k, String(v));
      const body = config.data === undefined ? undefined : Buffer.isBuffer(config.data) ? config.data : JSON.stringify(config.data);
      const res = await fetch(target, {
        method,
        // A pre-authenticated URL (an upload session's) carries its own credentials, as in the provider client.
        headers: { ...(!config.preAuthenticated && opts.headers), ...config.headers, ...(typeof body === 'string' && { 'content-type': 'application/json' }) },
        body,
      });
      const headers = Object.fromEntries(res.headers.entries());
      const text = await res.text();
      const data = text && headers['content-type']?.includes('json') ? JSON.parse(text) : text || null;
      run.exchanges.push({ request: { ...config, method }, response: { status: res.status, headers, data } });
      if (res.status >= 400) throw new ProviderHttpError(res.status, data, headers, method, target.pathname);
      return { status: res.status, headers, data: data as T };
    },
  };
  const models = Object.assign({}, ...opts.integration.syncs.map((s) => s.models));
  let checkpoint: unknown = null;
  const ctx = Object.assign(
    createBaseContext({ connection: opts.connection, transport, metadata: { replace: async () => {}, merge: async () => {} }, logger: createLogger('silent') }),
    {
      variant: 'base',
      lastSyncDate: null,
      paginate: <T>(config: RequestConfig) => plainListing<T>(transport, config, opts.integration.provider.pagination),
      async batchSave(records: Array<{ id: string }>, model: string) {
        (run.batchSave[model] ??= []).push(...validateRecords(model, models[model], records));
      },
      async batchDelete(records: Array<{ id: string }>, model: string) {
        (run.batchDelete[model] ??= []).push(...records);
      },
      trackDeletes() {},
      async getCheckpoint<T>() {
        return checkpoint as T | null;
      },
      async saveCheckpoint(value: unknown) {
        checkpoint = value;
      },
    },
  );
  return { ctx: ctx as SyncContext & ActionContext, run };
}
