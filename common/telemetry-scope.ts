import { AsyncLocalStorage } from 'node:async_hooks';
import type { Attributes } from '@opentelemetry/api';

/**
 * What a piece of Weft's work is about, for its spans and metric points: set around each
 * activity (app/telemetry-activity-scope.ts), read where provider calls and sync runs are
 * recorded. Its own AsyncLocalStorage rather than the OTel context, which only travels while a
 * tracer provider is registered: with metrics alone on, the points still get their scope.
 * Nothing here is secret: connection ids are the app's own identifiers.
 */
export interface WeftScope {
  environment?: string;
  /** The integration's unique key (provider config key). */
  integration?: string;
  connectionId?: string;
  sync?: string;
  action?: string;
}

const storage = new AsyncLocalStorage<WeftScope>();
let enabled = false;

/** Set while the process's telemetry runs (app/telemetry.ts): scopes are only made then. */
export function setWeftScopesEnabled(on: boolean): void {
  enabled = on;
}

export function weftScopesEnabled(): boolean {
  return enabled;
}

export function runInWeftScope<T>(scope: WeftScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** The scope of each API request by its request object, for its server span, which ends outside it (on the response's close). */
const requestScopes = new WeakMap<object, WeftScope>();

export function setRequestScope(request: object, scope: WeftScope): void {
  requestScopes.set(request, scope);
}

export function requestScopeSpanAttributes(request: object): Attributes {
  const scope = requestScopes.get(request);
  return scope ? storage.run(scope, scopeSpanAttributes) : {};
}

/** All of the scope, for spans (one per operation: a connection id is fine there). */
export function scopeSpanAttributes(): Attributes {
  const scope = storage.getStore();
  if (!scope) return {};
  return { ...scopeMetricAttributes(), ...(scope.connectionId !== undefined && { 'weft.connection_id': scope.connectionId }) };
}

/** The bounded part of the scope, for metric points: never the connection id (one series per connection would not scale). */
export function scopeMetricAttributes(): Attributes {
  const scope = storage.getStore();
  if (!scope) return {};
  const attrs: Attributes = {};
  if (scope.environment !== undefined) attrs['weft.environment'] = scope.environment;
  if (scope.integration !== undefined) attrs['weft.integration'] = scope.integration;
  if (scope.sync !== undefined) attrs['weft.sync'] = scope.sync;
  if (scope.action !== undefined) attrs['weft.action'] = scope.action;
  return attrs;
}
