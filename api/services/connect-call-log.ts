import type { Logger } from '../../common/logger';
import type { OAuthCallOperation, OAuthEndpoints } from '../../auth/oauth/code-flow';
import type { EgressCall } from '../../egress/recorded-egress';
import type { Stores } from '../../store/db';

export interface AuthCallScope {
  environment: string;
  integration: string;
  /** The connection id the calls are for (in a connect flow it may not exist yet). */
  connectionId: string | null;
  /** The stored connection's key, once there is one. */
  connection?: string;
}

type LogDeps = { stores: Pick<Stores, 'requestLogs'>; logger: Logger };

/**
 * Writes the token endpoint calls and resource lookups the API makes (outside any provider
 * session) to the request log, as `auth:token` / `auth:resource-host` entries of the
 * connection: a connect flow or refresh that fails at the provider leaves the same trace a
 * failing sync does. The write runs in the background, batched like every request log line.
 */
export function authCallRecorder(deps: LogDeps, scope: AuthCallScope): (operation: OAuthCallOperation, call: EgressCall) => void {
  const onFailure = (err: unknown) => deps.logger.warn({ err }, 'could not write request log');
  return (operation, call) => {
    deps.stores.requestLogs.append(
      {
        at: new Date(),
        environment: scope.environment,
        connection: scope.connection ?? null,
        connection_id: scope.connectionId,
        integration: scope.integration,
        operation,
        run_id: null,
        method: call.method,
        url: call.url,
        status: call.status,
        duration_ms: call.durationMs,
        attempt: 1,
        rate_limit_wait_ms: 0,
        error: call.error,
        provider_request_id: null,
      },
      onFailure,
    );
  };
}

/** The endpoints of a connect flow, their calls recorded for the connection being made. */
export function recordedConnectCalls(deps: LogDeps, ep: OAuthEndpoints, scope: AuthCallScope): OAuthEndpoints {
  return { ...ep, record: authCallRecorder(deps, scope) };
}
