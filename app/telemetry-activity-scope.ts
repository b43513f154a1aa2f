import { trace } from '@opentelemetry/api';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, ActivityInterceptorsFactory, Next } from '@temporalio/worker';
import { runInWeftScope, scopeSpanAttributes, type WeftScope } from '../common/telemetry-scope';

/**
 * With telemetry on, each activity runs in the scope its input names (environment,
 * integration, connection, sync or action: the fields SyncRunInput and ActionRunInput share),
 * so its span and the provider spans and metric points recorded inside carry them. Listed
 * after the OpenTelemetry activity interceptor: its span is then the active one here.
 */
export const activityScopeInterceptor: ActivityInterceptorsFactory = () => ({ inbound: new ActivityScopeInbound() });

class ActivityScopeInbound implements ActivityInboundCallsInterceptor {
  execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const scope = scopeOf(input.args[0]);
    if (!scope) return next(input);
    return runInWeftScope(scope, () => {
      trace.getActiveSpan()?.setAttributes(scopeSpanAttributes());
      return next(input);
    });
  }
}

function scopeOf(arg: unknown): WeftScope | null {
  if (typeof arg !== 'object' || arg === null) return null;
  const a = arg as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const scope: WeftScope = {
    environment: text(a.environment),
    integration: text(a.providerConfigKey),
    connectionId: text(a.connectionId),
    sync: text(a.syncName),
    action: text(a.actionName),
  };
  return Object.values(scope).some((v) => v !== undefined) ? scope : null;
}
