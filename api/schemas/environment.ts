import { z } from 'zod';

/** An http(s) URL the app receives POSTs at, or null to stop sending there. */
const webhookUrl = z
  .url({ protocol: /^https?$/, message: 'an http(s) URL' })
  .max(2048)
  .nullable();

export const patchEnvironmentBody = z.strictObject({
  webhook_url: webhookUrl.optional(),
  secondary_webhook_url: webhookUrl.optional(),
  /** Slack-compatible incoming webhook for chat alerts. */
  alert_webhook_url: webhookUrl.optional(),
  send_auth_webhooks: z.boolean().optional(),
  send_sync_completion_always: z.boolean().optional(),
  send_sync_error_webhooks: z.boolean().optional(),
});

export type PatchEnvironmentBody = z.infer<typeof patchEnvironmentBody>;
