import type { ProviderSubscription, SecretPathWebhooks, SubscriptionContext, WebhookSubscriptionHooks } from '../../runtime/types';
import { listEvents } from './syncs/list-events';

/**
 * Luma's webhooks (docs/providers/luma.md): a POST of `{ type, data }` to a webhook's URL,
 * `type` the event (`event.created`, `event.updated`, `event.canceled`, …). Luma documents no
 * signature, so each connection's webhook gets a URL of its own, ending in a random secret,
 * and only deliveries to a live webhook's URL are taken in.
 */
export const lumaWebhooks: SecretPathWebhooks = { kind: 'secret-path', eventField: 'type' };

/** The events the webhook is made for: those that change what the `list-events` sync holds. */
const LUMA_EVENT_TYPES = listEvents.webhookSubscriptions ?? [];

interface LumaWebhookJson {
  id: string;
}

/** Luma's webhooks do not expire: nothing to renew, and the workflow looks again this often all the same. */
const NO_EXPIRY_MS = 7 * 86_400_000;

async function createWebhook(ctx: SubscriptionContext): Promise<ProviderSubscription & { clientState: string }> {
  const secret = ctx.newClientState();
  const url = `${ctx.getWebhookURL()}/${secret}`;
  const res = await ctx.post<LumaWebhookJson | { webhook: LumaWebhookJson }>({
    endpoint: '/public/v2/webhooks/create',
    data: { url, event_types: LUMA_EVENT_TYPES },
  });
  const webhook = 'webhook' in res.data ? res.data.webhook : res.data;
  return { id: webhook.id, resource: 'calendar', expiresAt: new Date(Date.now() + NO_EXPIRY_MS).toISOString(), clientState: secret };
}

/** One webhook per connection, on the calendar its key belongs to, for the events the sync holds. */
export const lumaSubscriptions: WebhookSubscriptionHooks = {
  renewBeforeMs: 0,
  onConnectionCreated: async (ctx) => [await createWebhook(ctx)],
  // Nothing expires at Luma: "renewing" only moves the next look.
  renew: async (_ctx, subscription) => ({ ...subscription, expiresAt: new Date(Date.now() + NO_EXPIRY_MS).toISOString() }),
  remake: (ctx) => createWebhook(ctx),
  async onConnectionDeleted(ctx, subscriptions) {
    for (const subscription of subscriptions) await ctx.post({ endpoint: '/public/v1/webhooks/delete', data: { id: subscription.id } });
  },
};
