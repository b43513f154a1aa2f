/** Shared by the connectionSubscriptions workflow and its activities (types only in the workflow). */

/** The connection whose provider subscriptions the workflow keeps. */
export interface ConnectionSubscriptionsInput {
  environment: string;
  /** The connection's `_id`. */
  connection: string;
  connectionId: string;
  providerConfigKey: string;
  provider: string;
}

/** A lifecycle notification the processor passed on: renew the subscription, or make it again. */
export interface SubscriptionLifecycle {
  subscriptionId: string;
  action: 'renew' | 'remake';
}

/** When the workflow next has something to do (epoch ms), or null: the connection is gone, nothing more to keep. */
export type NextRenewal = number | null;
