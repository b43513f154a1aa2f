import { condition, continueAsNew, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { SubscriptionActivities } from '../activities/subscription-activities';
import type { ConnectionSubscriptionsInput, SubscriptionLifecycle } from '../activities/subscription-contracts';

/** The provider says a subscription needs renewing or is gone (a lifecycle notification). */
export const subscriptionLifecycleSignal = defineSignal<[SubscriptionLifecycle], 'subscriptionLifecycle'>('subscriptionLifecycle');

/** Rounds per history before it continues as new (each round is a timer and an activity). */
const ROUNDS_PER_HISTORY = 200;

/**
 * Keeps a connection's webhook subscriptions at its provider for as long as the connection
 * lives: makes them (the integration's onConnectionCreated, retried until the provider
 * accepts), renews each before it expires, and renews or remakes one when the provider says
 * so. Ends when the connection is gone; deleting a connection ends it first
 * (control/connections.ts). Provider calls are the activities'; this only keeps time.
 */
export async function connectionSubscriptions(input: ConnectionSubscriptionsInput): Promise<void> {
  const { ensureSubscriptions, renewDueSubscriptions, applySubscriptionLifecycle } = proxyActivities<SubscriptionActivities>({
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
  });
  const pending: SubscriptionLifecycle[] = [];
  setHandler(subscriptionLifecycleSignal, (event) => {
    pending.push(event);
  });
  let next = await ensureSubscriptions(input);
  // A signal taken while the last round's activity ran is applied before the history continues as new.
  for (let round = 0; next !== null && (round < ROUNDS_PER_HISTORY || pending.length > 0); round++) {
    const due: number = next;
    const signalled = await condition(() => pending.length > 0, Math.max(1, due - Date.now()));
    next = signalled ? await applySubscriptionLifecycle(input, pending.splice(0)) : await renewDueSubscriptions(input);
  }
  if (next !== null) await continueAsNew<typeof connectionSubscriptions>(input);
}
