import type { ProviderSubscription, SubscriptionContext, SubscriptionNotifications, WebhookSubscriptionHooks } from '../../runtime/types';
import type { GraphDrive } from './models';

/**
 * Microsoft Graph change notifications (docs/providers/onedrive.md): Graph checks the
 * notification URL first with a POST carrying `?validationToken=`, which must be answered
 * 200 `text/plain` with the token within 10 s; then each POST lists notifications in
 * `value`, each naming its `subscriptionId` and carrying the `clientState` the subscription
 * was made with. Notifications about a subscription itself carry `lifecycleEvent`:
 * `reauthorizationRequired` (renew it), `subscriptionRemoved` (make it again), `missed`
 * (changes were not sent: the syncs run). OneDrive's notifications carry no item data: the
 * sync's delta query fetches the changes.
 */
export const graphNotifications: SubscriptionNotifications = {
  kind: 'subscription-notifications',
  validationQuery: 'validationToken',
  listField: 'value',
  subscriptionIdField: 'subscriptionId',
  clientStateField: 'clientState',
  lifecycleField: 'lifecycleEvent',
  changeEvent: 'change',
  renewOn: ['reauthorizationRequired'],
  remakeOn: ['subscriptionRemoved'],
};

/** A drive item subscription may live up to 42,300 minutes; Weft asks for 3 days and renews a day before. */
const SUBSCRIPTION_LIFETIME_MS = 3 * 86_400_000;
const RENEW_BEFORE_MS = 86_400_000;

const expiry = () => new Date(Date.now() + SUBSCRIPTION_LIFETIME_MS).toISOString();

interface GraphSubscriptionJson {
  id: string;
  expirationDateTime: string;
}

/** A subscription to changes anywhere under `resource`, notifications and lifecycle notifications to the intake. */
async function subscribe(ctx: SubscriptionContext, resource: string): Promise<ProviderSubscription & { clientState: string }> {
  const clientState = ctx.newClientState();
  const url = ctx.getWebhookURL();
  const res = await ctx.post<GraphSubscriptionJson>({
    endpoint: '/v1.0/subscriptions',
    data: { changeType: 'updated', notificationUrl: url, lifecycleNotificationUrl: url, resource, expirationDateTime: expiry(), clientState },
  });
  return { id: res.data.id, resource, expiresAt: res.data.expirationDateTime, clientState };
}

/**
 * One subscription per drive the user sees (`/me/drives`: their OneDrive and the document
 * libraries shared with them), on its root: Graph then notifies of a change anywhere in it.
 */
export const oneDriveSubscriptions: WebhookSubscriptionHooks = {
  renewBeforeMs: RENEW_BEFORE_MS,
  async onConnectionCreated(ctx: SubscriptionContext) {
    const drives = (await ctx.get<{ value: GraphDrive[] }>({ endpoint: '/v1.0/me/drives' })).data.value;
    const made: Array<ProviderSubscription & { clientState: string }> = [];
    for (const drive of drives) made.push(await subscribe(ctx, `/drives/${drive.id}/root`));
    return made;
  },
  remake: (ctx, removed) => subscribe(ctx, removed.resource),
  async renew(ctx, subscription) {
    const res = await ctx.patch<GraphSubscriptionJson>({
      endpoint: `/v1.0/subscriptions/${encodeURIComponent(subscription.id)}`,
      data: { expirationDateTime: expiry() },
    });
    return { ...subscription, expiresAt: res.data.expirationDateTime };
  },
  async onConnectionDeleted(ctx, subscriptions) {
    for (const subscription of subscriptions) await ctx.delete({ endpoint: `/v1.0/subscriptions/${encodeURIComponent(subscription.id)}` });
  },
};
