import { z } from 'zod';

/**
 * The bodies Weft POSTs to the app's webhook URL (and chat alerts to `alert_webhook_url`),
 * as the OpenAPI document's `webhooks` describe them. The senders (webhooks/auth-webhook.ts,
 * webhooks/sync-webhooks.ts, activities/action-completion.ts, webhooks/chat-alert-messages.ts)
 * sit below api/ and keep their own interfaces; tests/api/openapi-document.test.ts checks
 * that what they build matches these.
 */
const isoTime = z.iso.datetime({ offset: true });

export const authWebhookPayload = z.object({
  from: z.literal('weft'),
  type: z.literal('auth'),
  connectionId: z.string(),
  providerConfigKey: z.string(),
  provider: z.string(),
  authMode: z.enum(['OAUTH2', 'API_KEY', 'APP']),
  environment: z.string(),
  operation: z.enum(['creation', 'override', 'refresh']),
  success: z.boolean(),
  error: z.object({ type: z.string(), description: z.string() }).optional(),
});

export const syncWebhookPayload = z.object({
  from: z.literal('weft'),
  type: z.literal('sync'),
  connectionId: z.string(),
  providerConfigKey: z.string(),
  syncName: z.string(),
  syncVariant: z.string(),
  model: z.string(),
  syncType: z.enum(['INITIAL', 'INCREMENTAL']),
  success: z.boolean(),
  /** The run's start: records modified at or after it are the run's (`GET /records?modified_after=`). */
  modifiedAfter: isoTime,
  /** Success: the records cursor where the run's changes begin (`GET /records?cursor=`). */
  cursor: z.string().optional(),
  responseResults: z.object({ added: z.number().int(), updated: z.number().int(), deleted: z.number().int() }).optional(),
  error: z.object({ type: z.string(), description: z.string(), detail: z.unknown().optional() }).optional(),
  startedAt: isoTime.optional(),
  failedAt: isoTime.optional(),
});

export const asyncActionWebhookPayload = z.object({
  from: z.literal('weft'),
  type: z.literal('async_action'),
  connectionId: z.string(),
  providerConfigKey: z.string(),
  /** Where the ended call's output is read: `GET /action/{id}`. */
  payload: z.object({ id: z.string(), statusUrl: z.string() }),
});

const textObject = z.object({ type: z.enum(['plain_text', 'mrkdwn']), text: z.string() });

/** A chat alert: a Slack-compatible incoming-webhook message (`text` plus Block Kit `blocks`). */
export const alertWebhookPayload = z.object({
  text: z.string(),
  blocks: z.array(
    z.union([
      z.object({ type: z.literal('header'), text: textObject }),
      z.object({ type: z.literal('section'), text: textObject.optional(), fields: z.array(textObject).optional() }),
      z.object({ type: z.literal('context'), elements: z.array(textObject) }),
      z.object({ type: z.literal('actions'), elements: z.array(z.object({ type: z.literal('button'), text: textObject, url: z.string() })) }),
    ]),
  ),
});
