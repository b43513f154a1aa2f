import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { alertWebhookPayload, asyncActionWebhookPayload, authWebhookPayload, syncWebhookPayload } from '../schemas/webhook-payloads';

/** Standard Webhooks signing, and Nango's, on every delivery (webhooks/deliver.ts). */
const SIGNATURE_HEADERS = z.object({
  'webhook-id': z.string().describe('The event’s id: the same on every retry and replay.'),
  'webhook-timestamp': z.string().describe('Unix seconds of this try.'),
  'webhook-signature': z
    .string()
    .describe('`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` with the environment’s signing key (two during a rotation’s grace period).'),
  'x-nango-hmac-sha256': z
    .string()
    .describe(
      'Hex HMAC-SHA256 of the raw body keyed with the whole `whsec_…` signing key (the current one only), as Nango’s SDKs verify it (`verifyIncomingWebhookRequest`).',
    ),
});

/** What Weft POSTs to the app (OpenAPI 3.1 `webhooks`), one entry per event type. */
export function registerWebhooks(registry: OpenAPIRegistry): void {
  const events = [
    ['auth', authWebhookPayload, 'AuthWebhook', 'A connection was created, re-authorized, or failed to refresh.'],
    ['sync', syncWebhookPayload, 'SyncWebhook', 'A sync run ended: one per model (success with counts, or failure).'],
    ['async_action', asyncActionWebhookPayload, 'AsyncActionWebhook', 'An `X-Async: true` action call ended; read its output at `payload.statusUrl`.'],
    ['alert', alertWebhookPayload, 'AlertWebhook', 'A chat alert to `alert_webhook_url` (Slack-compatible message).'],
  ] as const;
  for (const [type, schema, id, description] of events) {
    registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `${type.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase())}Webhook`,
      summary: description,
      request: {
        headers: SIGNATURE_HEADERS,
        body: { required: true, content: { 'application/json': { schema: schema.meta({ id }) } } },
      },
      responses: { 200: { description: 'Any 2xx: delivered. Anything else (or no answer) is retried.' } },
    });
  }
}
