import type { AuthEventSink } from '../auth/credential-store';
import type { TokenRefreshDeps } from '../auth/oauth/token-refresh';
import type { Egress } from '../egress/egress';
import type { Stores } from '../store/db';
import { queueAuthWebhook } from './auth-webhook';
import type { WebhookDeliveryStarter } from './delivery-starter';
import type { OutboxDeps } from './outbox';

/** auth/'s events as `auth` webhooks: a refused refresh is operation `refresh`, success false. */
function authEventWebhooks(deps: OutboxDeps): AuthEventSink {
  return {
    async refreshFailed({ connection, code, message }) {
      await queueAuthWebhook(deps, {
        environment: connection.environment,
        connection,
        operation: 'refresh',
        success: false,
        error: { type: code, description: message },
      });
    },
  };
}

/** The token refresher's parts from the store, with its events sent as webhooks (each by its delivery workflow). */
export function tokenRefreshDeps(
  deps: Omit<TokenRefreshDeps, 'connections' | 'integrations' | 'events'> & { stores: Stores; egress: Egress; startWebhookDelivery: WebhookDeliveryStarter },
): TokenRefreshDeps {
  const { stores, startWebhookDelivery, ...rest } = deps;
  return {
    ...rest,
    connections: stores.connections,
    integrations: stores.integrations,
    events: authEventWebhooks({ stores, cipher: deps.cipher, logger: deps.logger, egress: deps.egress, startDelivery: startWebhookDelivery }),
  };
}
