import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookDeliveryActivities } from '../activities/webhook-delivery';
import type { WebhookDeliveryInput, WebhookDeliveryResult, WebhookTarget } from '../webhooks/delivery-contracts';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * When each attempt goes out, as the wait before it: at once, then backing off to 10 hours,
 * about 27.6 hours in all, so a receiver that is down for a whole day still gets the event. Part of the workflow's code: changing it
 * changes the commands of running histories, so a new schedule needs a patch.
 */
const WEBHOOK_RETRY_SCHEDULE_MS = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] as const;
/** Each wait is lengthened by up to this share, so events that failed together do not all come back at once. */
const JITTER = 0.1;

/**
 * Delivers one outbox event: an attempt
 * per step of the schedule, on durable timers, until every URL has answered 2xx; after the
 * last one the event is marked failed. Attempts are single activities that Temporal does not
 * retry (the schedule is the retry policy), each recorded by the activity. An attempt that
 * could not run at all (the database down) counts as a failed one. An event's first attempt
 * is usually made by the worker's dispatcher (webhooks/dispatcher.ts), which starts this
 * workflow at the second only when that one failed (`fromAttempt`).
 */
export async function webhookDelivery(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const { attemptWebhookDelivery } = proxyActivities<WebhookDeliveryActivities>({
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 1 },
  });
  // Marking the event failed only writes to the store: retried until it is done.
  const { failWebhookEvent } = proxyActivities<WebhookDeliveryActivities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '10 minutes' },
  });

  let targets: WebhookTarget[] | undefined = input.targets;
  let lastError = input.fromAttempt ? 'the first attempt failed' : '';
  for (const [i, waitMs] of WEBHOOK_RETRY_SCHEDULE_MS.entries()) {
    // Attempts made before the workflow began (the dispatcher's first) are not made again.
    if (i + 1 < (input.fromAttempt ?? 1)) continue;
    // Math.random is seeded per workflow: the same jitter on replay.
    if (waitMs > 0) await sleep(Math.round(waitMs * (1 + JITTER * Math.random())));
    try {
      const result = await attemptWebhookDelivery({ eventId: input.eventId, attempt: i + 1, ...(targets ? { targets } : {}) });
      if (result.outcome !== 'failed') return { outcome: result.outcome, attempts: i + 1 };
      if (result.pendingTargets) targets = result.pendingTargets;
      lastError = result.error;
    } catch (err) {
      const e = err as Error & { cause?: Error };
      lastError = `attempt could not run: ${e.cause?.message ?? e.message}`;
    }
  }
  const attempts = WEBHOOK_RETRY_SCHEDULE_MS.length;
  await failWebhookEvent({ eventId: input.eventId, error: `undelivered after ${attempts} attempts: ${lastError}`.slice(0, 500) });
  return { outcome: 'failed', attempts };
}
