import { lazyInstruments } from '../common/telemetry';

/** Webhook delivery metrics on the global OpenTelemetry API (no-ops unless app/telemetry.ts started the SDK). */
const instruments = lazyInstruments('weft.webhooks', (meter) => ({
  attempts: meter.createCounter('weft.webhook.attempts', {
    description: 'Delivery attempts of stored webhook events, by outcome (delivered, failed: retried later, settled: nothing to send)',
  }),
}));

export function recordWebhookAttempt(outcome: 'delivered' | 'failed' | 'settled', attempt: number): void {
  instruments().attempts.add(1, { 'weft.outcome': outcome, 'weft.first_attempt': attempt <= 1 });
}
