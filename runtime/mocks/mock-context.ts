import { relative } from 'node:path';
import { createLogger } from '../../common/logger';
import { createBaseContext } from '../base-context';
import { IntegrationCodeError } from '../errors';
import { plainListing } from '../paginate';
import type {
  ActionContext,
  ActionDefinition,
  BaseContext,
  ConnectionInfo,
  HttpResponse,
  IntegrationDefinition,
  Listing,
  LogFields,
  ModelSchemas,
  PaginateConfig,
  RequestConfig,
  SyncContext,
  SyncDefinition,
} from '../types';
import { validateRecords } from '../validation';
import { functionFolder, platformFixture, readFixture } from './fixture-files';
import { createMockTransport } from './mock-transport';
import { armNetworkGuard } from './network-guard';
import { redactDeep } from './redaction';

export interface MockOptions {
  /** The integration the function belongs to (its provider definition and functions). */
  integration: IntegrationDefinition;
  /** The integration's mocks folder: `tests/mocks/<integration>/mocks`. */
  mocksDir: string;
}

export interface SyncMockOptions extends MockOptions {
  sync: string;
  variant?: string;
  lastSyncDate?: Date | null;
  /** What `getCheckpoint` returns (a later run's start); null by default, a first run. */
  checkpoint?: unknown;
}

export interface ActionMockOptions extends MockOptions {
  action: string;
}

/**
 * The saved-mocks backing of `ctx`: the
 * same BaseContext the worker and the dry run build on, with a transport that answers from
 * the function's mock files, the connection and metadata of its recording, and the real
 * pagination code. Building one arms the network guard for the rest of the test file.
 */
abstract class MockContext implements BaseContext {
  readonly connectionId: string;
  readonly providerConfigKey: string;
  /** Every provider call the function made, `METHOD /path?query (hash)`, in order. */
  readonly calls: string[];
  protected readonly base: BaseContext;
  protected readonly functionDir: string;
  private readonly integration: IntegrationDefinition;
  private metadata: Record<string, unknown>;

  protected constructor(opts: MockOptions, name: string, kind: 'sync' | 'action') {
    armNetworkGuard();
    this.integration = opts.integration;
    this.functionDir = functionFolder(opts.mocksDir, name);
    const connection = platformFixture<ConnectionInfo | null>(opts.mocksDir, name, 'getConnection.json', null) ?? defaultConnection(opts.integration);
    this.metadata = platformFixture<Record<string, unknown>>(opts.mocksDir, name, 'getMetadata.json', connection.metadata ?? {});
    const provider = opts.integration.provider;
    const transport = createMockTransport({
      functionDir: this.functionDir,
      providerBaseUrl: provider.baseUrl,
      secretHeaders: [provider.apiKey?.header, ...(provider.secretHeaders ?? [])].filter((h): h is string => !!h).map((h) => h.toLowerCase()),
      recordCommand: recordCommand(name, kind, connection.connection_id, this.functionDir),
    });
    this.calls = transport.calls;
    this.base = createBaseContext({
      connection: { ...connection, metadata: this.metadata },
      transport,
      metadata: {
        replace: async (m) => void (this.metadata = { ...m }),
        merge: async (m) => void (this.metadata = { ...this.metadata, ...m }),
      },
      logger: createLogger(process.env.WEFT_MOCK_LOG_LEVEL ?? 'silent'),
    });
    this.connectionId = this.base.connectionId;
    this.providerConfigKey = this.base.providerConfigKey;
  }

  get<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>> {
    return this.base.get<T>(config);
  }
  post<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>> {
    return this.base.post<T>(config);
  }
  put<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>> {
    return this.base.put<T>(config);
  }
  patch<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>> {
    return this.base.patch<T>(config);
  }
  delete<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>> {
    return this.base.delete<T>(config);
  }
  proxy<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>> {
    return this.base.proxy<T>(config);
  }
  /** Through runtime/paginate.ts with the provider's pagination rules, as in production. */
  paginate<T = unknown>(config: PaginateConfig): Listing<T> {
    return plainListing<T>({ request: (c) => this.base.proxy(c) }, config, this.integration.provider.pagination);
  }
  getConnection(): Promise<ConnectionInfo> {
    return this.base.getConnection();
  }
  getMetadata<T = Record<string, unknown>>(): Promise<T> {
    return this.base.getMetadata<T>();
  }
  setMetadata(metadata: Record<string, unknown>): Promise<void> {
    return this.base.setMetadata(metadata);
  }
  updateMetadata(metadata: Record<string, unknown>): Promise<void> {
    return this.base.updateMetadata(metadata);
  }
  log(message: string, fields?: LogFields): void {
    this.base.log(message, fields);
  }

  /** The metadata as the function left it. */
  getMetadataNow(): Record<string, unknown> {
    return { ...this.metadata };
  }

  protected fixture<T>(file: string, fallback: T): T {
    return readFixture<T>(`${this.functionDir}/${file}`, fallback);
  }
}

/** A sync's `ctx` backed by its saved mocks; records passed to batchSave/batchDelete are kept for the test. */
export class SyncMock extends MockContext implements SyncContext {
  readonly sync: SyncDefinition;
  readonly variant: string;
  readonly lastSyncDate: Date | null;
  private readonly saved = new Map<string, unknown[]>();
  private readonly deleted = new Map<string, unknown[]>();
  private readonly tracked = new Set<string>();
  private checkpoint: unknown;

  constructor(opts: SyncMockOptions) {
    const sync = opts.integration.syncs.find((s) => s.name === opts.sync);
    if (!sync) throw unknownFunction(opts.integration, 'sync', opts.sync);
    super(opts, opts.sync, 'sync');
    this.sync = sync;
    this.variant = opts.variant ?? 'base';
    this.lastSyncDate = opts.lastSyncDate ?? null;
    this.checkpoint = opts.checkpoint ?? null;
  }

  /** Validated with the model's schema (the first invalid record throws `invalid_sync_record`), as the worker does. */
  async batchSave<T extends { id: string }>(records: T[], model: string): Promise<void> {
    const valid = validateRecords(model, schemaOf(this.sync.models, model, 'this sync'), records);
    push(this.saved, model, valid);
  }

  async batchDelete<T extends { id: string }>(records: T[], model: string): Promise<void> {
    schemaOf(this.sync.models, model, 'this sync');
    push(this.deleted, model, records);
  }

  trackDeletes(model: string): void {
    schemaOf(this.sync.models, model, 'this sync');
    this.tracked.add(model);
  }

  async getCheckpoint<T = unknown>(): Promise<T | null> {
    return (this.checkpoint ?? null) as T | null;
  }

  async saveCheckpoint(checkpoint: unknown): Promise<void> {
    this.checkpoint = checkpoint;
  }

  /** Every record the run passed to batchSave for `model`, in call order, as a mock file holds it (JSON, redacted). */
  getBatchSaveData(model: string): unknown[] {
    return asSaved(this.saved.get(model) ?? []);
  }

  /** Every record the run passed to batchDelete for `model`, in call order, as a mock file holds it. */
  getBatchDeleteData(model: string): unknown[] {
    return asSaved(this.deleted.get(model) ?? []);
  }

  /** The recording's `<Model>/batchSave.json` (empty when the recorded run saved none). */
  expectedBatchSave(model: string): unknown[] {
    return this.fixture<unknown[]>(`${model}/batchSave.json`, []);
  }

  /** The recording's `<Model>/batchDelete.json` (empty when the recorded run deleted none). */
  expectedBatchDelete(model: string): unknown[] {
    return this.fixture<unknown[]>(`${model}/batchDelete.json`, []);
  }

  /** Models the run declared it enumerates in full (`trackDeletes`). */
  getTrackedDeletes(): string[] {
    return [...this.tracked];
  }

  /** The last checkpoint the run saved. */
  getSavedCheckpoint(): unknown {
    return this.checkpoint;
  }
}

/** An action's `ctx` backed by its saved mocks, with its recorded input and output. */
export class ActionMock extends MockContext implements ActionContext {
  readonly action: ActionDefinition;
  private readonly models: ModelSchemas;
  private readonly saved = new Map<string, unknown[]>();

  constructor(opts: ActionMockOptions) {
    const action = opts.integration.actions.find((a) => a.name === opts.action);
    if (!action) throw unknownFunction(opts.integration, 'action', opts.action);
    super(opts, opts.action, 'action');
    this.action = action;
    this.models = Object.assign({}, ...opts.integration.syncs.map((s) => s.models)) as ModelSchemas;
  }

  async batchSave<T extends { id: string }>(records: T[], model: string): Promise<void> {
    const valid = validateRecords(model, schemaOf(this.models, model, 'a sync of this integration'), records);
    push(this.saved, model, valid);
  }

  getBatchSaveData(model: string): unknown[] {
    return asSaved(this.saved.get(model) ?? []);
  }

  /** `input.json`, validated with the action's input schema as the API does before exec runs. */
  getInput(): unknown {
    const raw = this.fixture<unknown>('input.json', undefined);
    if (raw === undefined) throw new IntegrationCodeError('mock_input_missing', `No input.json in ${relative(process.cwd(), this.functionDir)}.`);
    const parsed = this.action.input.safeParse(raw);
    if (!parsed.success) throw new IntegrationCodeError('invalid_action_input', `input.json does not match the action's input schema: ${parsed.error.message}`);
    return parsed.data;
  }

  /** `output.json`. */
  getExpectedOutput(): unknown {
    return this.fixture<unknown>('output.json', null);
  }

  /** An action's result as output.json holds it (JSON, redacted): what a test compares. */
  asRecorded(output: unknown): unknown {
    return output === undefined ? null : redactDeep(JSON.parse(stringifyPlain(output)) as unknown, []);
  }
}

function schemaOf(models: ModelSchemas, model: string, what: string) {
  const schema = models[model];
  if (!schema) throw new IntegrationCodeError('unknown_model', `Model "${model}" is not declared by ${what} (declared: ${Object.keys(models).join(', ')}).`);
  return schema;
}

function push(target: Map<string, unknown[]>, model: string, records: unknown[]): void {
  const list = target.get(model) ?? [];
  list.push(...records);
  target.set(model, list);
}

/** Records as `--save` wrote them: through JSON (dates as strings, no undefined fields) and redacted the same way. */
function asSaved(records: unknown[]): unknown[] {
  return redactDeep(JSON.parse(stringifyPlain(records)) as unknown[], []);
}

function stringifyPlain(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

function unknownFunction(integration: IntegrationDefinition, kind: 'sync' | 'action', name: string): IntegrationCodeError {
  const known = (kind === 'sync' ? integration.syncs : integration.actions).map((f) => f.name);
  return new IntegrationCodeError('unknown_function', `${integration.provider.name} has no ${kind} "${name}" (${kind}s: ${known.join(', ') || 'none'}).`);
}

function defaultConnection(integration: IntegrationDefinition): ConnectionInfo {
  const p = integration.provider;
  return { connection_id: 'mock-connection', provider_config_key: p.name, provider: p.name, auth_mode: p.authMode, connection_config: {}, metadata: {} };
}

function recordCommand(name: string, kind: 'sync' | 'action', connectionId: string, functionDir: string): string {
  const input = kind === 'action' ? ` --input @${relative(process.cwd(), `${functionDir}/input.json`)}` : '';
  return `weft dryrun ${name} ${connectionId}${input} --save`;
}
