import type { Logger } from '../../common/logger';
import type { OAuthEndpoints } from '../../auth/oauth/code-flow';
import type { Stores } from '../../store/db';

export interface ConnectCallScope {
  environment: string;
  integration: string;
  /** The connection id the flow is for (it may not exist yet). */
  connectionId: string | null;
}

/**
 * Endpoints whose calls (token endpoint, resource lookups) are written to the request log
 * as `auth:token` / `auth:resource-host` entries of the connection being made: a connect
 * flow that fails at the provider leaves the same trace a failing sync does. The write runs
 * in the background, like every request log line: a flow never waits on its log.
 */
export function recordedConnectCalls(
  deps: { stores: Pick<Stores, 'requestLogs'>; logger: Logger },
  ep: OAuthEndpoints,
  scope: ConnectCallScope,
): OAuthEndpoints {
  return {
    ...ep,
    record: (operation, call) => {
      deps.stores.requestLogs
        .insert({
          at: new Date(),
          environment: scope.environment,
          connection: null,
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
        })
        .catch((err: unknown) => deps.logger.warn({ err }, 'could not write request log'));
    },
  };
}
