/**
 * `weft/integration`: the one import source of integration code written outside Weft
 * (`weft init`, `weft clone`). It re-exports the integration-facing contract of
 * runtime/types.ts, the errors integration code throws or tests for, the unified models
 * and zod's `z`, so an author's folder needs no node_modules of its own: at load time the
 * loader maps this name (and `zod`) to Weft's own modules (runtime/sdk-resolution.ts), at
 * compile and test time the scaffold's tsconfig `paths` and jest `moduleNameMapper` do.
 */
import type { z } from 'zod';
import type { ActionDefinition, IntegrationDefinition, ModelSchemas, ProviderDefinition, SyncContext, SyncDefinition } from './types';
import type { IntegrationExtension } from './integration-loader';

export { z } from 'zod';
export type {
  ActionContext,
  ActionDefinition,
  AuthMode,
  AuthorizationErrorCodes,
  BaseContext,
  ConnectionInfo,
  ExtraTokenDefinition,
  HttpMethod,
  HttpResponse,
  IntegrationDefinition,
  Listing,
  LogFields,
  ModelSchemas,
  OAuthConfig,
  PaginateConfig,
  PaginationConfig,
  ProviderDefinition,
  ProviderDelivery,
  ProviderSubscription,
  ProviderWebhooks,
  QueryValue,
  RateLimitHeadersRule,
  RequestBudget,
  RequestConfig,
  ScopeRules,
  SecretPathWebhooks,
  SignedWebhooks,
  SubscriptionContext,
  SubscriptionNotifications,
  SyncContext,
  SyncDefinition,
  ThrottleRule,
  UnifiedMapping,
  WebhookSubscriptionHooks,
} from './types';
export { defineAction } from './types';
export { ActionError, IntegrationCodeError, isProviderStatus, ProviderHttpError } from './errors';
export { UnifiedCommit, UnifiedEvent, UnifiedFile, UnifiedPullRequest, UnifiedRepository } from './unified-models';
export type { IntegrationExtension } from './integration-loader';

/** A record of model `K` of a sync's models, as its schema accepts it. */
type ModelRecord<M extends ModelSchemas, K extends keyof M> = z.input<M[K]> & { id: string };

/**
 * The sync context with the sync's own models: `batchSave(records, 'Event')` is checked
 * against the `Event` schema's type, and a model the sync does not declare is a compile error.
 */
export interface TypedSyncContext<M extends ModelSchemas> extends Omit<SyncContext, 'batchSave' | 'batchDelete' | 'trackDeletes'> {
  batchSave<K extends keyof M & string>(records: Array<ModelRecord<M, K>>, model: K): Promise<void>;
  batchDelete<K extends keyof M & string>(records: Array<ModelRecord<M, K>>, model: K): Promise<void>;
  trackDeletes(model: keyof M & string): void;
}

/** A sync whose `exec` sees its own models' types (see TypedSyncContext). */
export type TypedSyncDefinition<M extends ModelSchemas> = Omit<SyncDefinition, 'models' | 'exec'> & {
  models: M;
  exec(ctx: TypedSyncContext<M>): Promise<void>;
};

/** Declares a sync with its records typed by its models; the registry keeps syncs untyped. */
export function defineSync<M extends ModelSchemas>(def: TypedSyncDefinition<M>): SyncDefinition {
  return def as unknown as SyncDefinition;
}

/** Declares an integration (a provider of its own, its syncs and actions); typed for the author's compiler. */
export function defineIntegration(def: IntegrationDefinition): IntegrationDefinition {
  return def;
}

interface ExtensionInput {
  extends: string;
  provider?: ProviderDefinition;
  syncs?: SyncDefinition[];
  actions?: ActionDefinition[];
}

/**
 * Declares a folder that keeps a loaded integration's provider and replaces or adds functions
 * (see IntegrationExtension). With the extended integration's `provider` (`weft clone` imports
 * it from `weft/integrations/<name>/provider`) it is also an IntegrationDefinition of the
 * functions it holds, which the folder's tests (SyncMock, ActionMock) take.
 */
export function extendIntegration(def: ExtensionInput & { provider: ProviderDefinition }): IntegrationExtension & IntegrationDefinition;
export function extendIntegration(def: ExtensionInput): IntegrationExtension;
export function extendIntegration(def: ExtensionInput): IntegrationExtension {
  return { syncs: [], actions: [], ...def };
}
