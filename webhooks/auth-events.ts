import type { AuthEventSink } from '../auth/credential-store';
import type { TokenRefreshDeps } from '../auth/oauth/token-refresh';
import type { Egresses } from '../egress/egress';
import type { Stores } from '../store/db';
import { queueAuthWebhook } from './auth-webhook';
import { reauthorizationAlerts } from './chat-alerts';
import type { WebhookDeliveryStarter } from './delivery-starter';
import type { OutboxDeps } from './outbox';

/** When no window is handed in: WEFT_ALERT_WINDOW_MINUTES' default. */
const DEFAULT_ALERT_WINDOW_MS = 60 * 60_000;

/**
 * auth/'s events as `auth` webhooks (a refused refresh is operation `refresh`, success false)
 * and, where the environment has an alert URL, a chat alert that the connection needs re-authorization.
 */
function authEventWebhooks(deps: OutboxDeps & { stores: Pick<Stores, 'alertStates'> }, alertWindowMs: number): AuthEventSink {
  const alerts = reauthorizationAlerts({ ...deps, windowMs: alertWindowMs });
  return {
    async refreshFailed({ connection, code, message }) {
      await queueAuthWebhook(deps, {
        environment: connection.environment,
        connection,
        operation: 'refresh',
        success: false,
        error: { type: code, description: message },
      });
      // For operators only: an alert that could not be stored must not hide the refusal from the caller.
      await alerts.needsReauthorization({ connection, code, message }).catch((err: unknown) => {
        deps.logger.warn({ err: (err as Error)?.message, connectionId: connection.connection_id }, 'could not queue the re-authorization chat alert');
      });
    },
  };
}

/** The token refresher's parts from the store, with its events sent as webhooks (each by its delivery workflow). */
export function tokenRefreshDeps(
  deps: Omit<TokenRefreshDeps, 'connections' | 'integrations' | 'events' | 'egress'> & {
    stores: Stores;
    /** `providers` for the token endpoint, `webhooks` for the refused refresh's webhook and chat alert. */
    egress: Egresses;
    startWebhookDelivery: WebhookDeliveryStarter;
    /** WEFT_ALERT_WINDOW_MINUTES in ms (default 60 min): re-authorization alerts of a connection within it are one message. */
    alertWindowMs?: number;
  },
): TokenRefreshDeps {
  const { stores, startWebhookDelivery, alertWindowMs, egress, ...rest } = deps;
  return {
    ...rest,
    egress: egress.providers,
    connections: stores.connections,
    integrations: stores.integrations,
    events: authEventWebhooks(
      { stores, cipher: deps.cipher, logger: deps.logger, egress: egress.webhooks, startDelivery: startWebhookDelivery },
      alertWindowMs ?? DEFAULT_ALERT_WINDOW_MS,
    ),
  };
}
