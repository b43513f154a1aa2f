import { z } from 'zod';

/** An http(s) URL the app receives POSTs at, or null to stop sending there. */
const webhookUrl = z
  .url({ protocol: /^https?$/, message: 'an http(s) URL' })
  .max(2048)
  .nullable();

/** `#rrggbb` (or `#rgb`), stored lower-case as `#rrggbb`. */
const hexColor = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'a colour as #rrggbb (hex)')
  .transform((c) => (c.length === 4 ? `#${[...c.slice(1)].map((d) => d + d).join('')}` : c).toLowerCase());

/**
 * How the Connect page presents the app: each field given replaces that one (null clears it),
 * the others stay. `logo_url` is fetched once, now, through the egress policy (purpose
 * `assets`), and served by Weft from then on.
 */
export const brandingPatch = z.strictObject({
  app_name: z.string().trim().min(1).max(80).nullable().optional().describe('The name the Connect page shows for the app (null: none).'),
  logo_url: z
    .url({ protocol: /^https?$/, message: 'an http(s) URL' })
    .max(2048)
    .nullable()
    .optional()
    .describe('A PNG, JPEG or WebP image of at most 256 KB, fetched once when set (null: no logo). SVG is refused.'),
  primary_color: hexColor.nullable().optional().describe('The buttons’ and accents’ colour, `#rrggbb` (null: Weft’s blue).'),
  theme: z.enum(['light', 'dark', 'auto']).optional().describe('`auto` follows the end user’s system setting.'),
});
export type BrandingPatch = z.infer<typeof brandingPatch>;

export const patchEnvironmentBody = z.strictObject({
  webhook_url: webhookUrl.optional(),
  secondary_webhook_url: webhookUrl.optional(),
  /** Slack-compatible incoming webhook for chat alerts. */
  alert_webhook_url: webhookUrl.optional(),
  send_auth_webhooks: z.boolean().optional(),
  send_sync_completion_always: z.boolean().optional(),
  send_sync_error_webhooks: z.boolean().optional(),
  branding: brandingPatch.optional(),
  mcp_enabled: z
    .boolean()
    .nullable()
    .optional()
    .describe('Serve this environment’s connections as MCP tools at `/mcp` (null: the default, on everywhere but in `prod`).'),
});

export type PatchEnvironmentBody = z.infer<typeof patchEnvironmentBody>;
