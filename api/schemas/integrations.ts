import { z } from 'zod';

/** The path parameter of the routes about one integration. */
export const integrationKeyParams = z.object({ key: z.string().describe('The integration’s unique key.') });

const uniqueKey = z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,99}$/, 'letters, digits, _ . - (max 100)');

export const providerOverridesSchema = z.strictObject({
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  auth_base_url: z.url({ protocol: /^https?$/ }).optional(),
  rate_limit: z
    .strictObject({
      requests: z.number().int().min(1).max(100_000),
      window_ms: z.number().int().min(100),
      lockout_ms: z.number().int().min(0).optional(),
    })
    .optional(),
});

/**
 * The secret the provider signs its webhook deliveries with (GitHub: the App's or OAuth App's
 * webhook secret), sealed with the other credentials; the intake refuses what it does not verify.
 */
const webhookSecret = z.string().min(16, 'at least 16 characters').max(256).optional();

export const integrationCredentialsSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('OAUTH2'),
    client_id: z.string().min(1),
    client_secret: z.string().min(1),
    /** Space- or comma-separated; the provider's defaults when absent. */
    scopes: z.string().optional(),
    /** The OAuth app registration, where the provider sets rules for it (GitHub OAuth App). */
    app_name: z.string().min(1).optional(),
    homepage_url: z.url({ protocol: /^https?$/ }).optional(),
    description: z.string().max(400).optional(),
    /** Microsoft: `common`, `organizations`, `consumers`, or a tenant id or domain. */
    tenant: z
      .string()
      .regex(/^[A-Za-z0-9.-]{1,100}$/, 'a tenant id, domain, common, organizations or consumers')
      .optional(),
    webhook_secret: webhookSecret,
  }),
  z
    .strictObject({
      type: z.literal('APP'),
      app_id: z.string().regex(/^\d+$/, 'App ID is numeric'),
      app_link: z.url(),
      private_key: z.string().min(1),
      /**
       * The App's OAuth client id and secret: the Connect page's install flow needs them to
       * prove who installed the App (a user token lists that user's installations).
       */
      client_id: z.string().min(1).max(100).optional(),
      client_secret: z.string().min(1).max(200).optional(),
      webhook_secret: webhookSecret,
    })
    .refine((c) => (c.client_id === undefined) === (c.client_secret === undefined), {
      message: 'client_id and client_secret go together',
      path: ['client_secret'],
    }),
]);

/** Where the Connect page sends a person who wants help connecting this integration (the app's own guide). */
const docsUrl = z
  .url({ protocol: /^https?$/, message: 'an http(s) URL' })
  .max(2048)
  .describe('An http(s) page the Connect page links to for help with this integration (null: none).');

export const createIntegrationBody = z.strictObject({
  unique_key: uniqueKey,
  provider: z.string().min(1),
  display_name: z.string().min(1).max(200).optional(),
  docs_url: docsUrl.nullable().optional(),
  credentials: integrationCredentialsSchema.optional(),
  provider_overrides: providerOverridesSchema.optional(),
});

export const patchIntegrationBody = z.strictObject({
  display_name: z.string().min(1).max(200).optional(),
  docs_url: docsUrl.nullable().optional(),
  credentials: integrationCredentialsSchema.optional(),
  provider_overrides: providerOverridesSchema.optional(),
});

/** `GET /integrations/:key/status`: how many of the latest errors to list. */
export const integrationStatusQuery = z.object({
  errors: z.coerce.number().int().min(1).max(100).default(10),
});

/** `GET /integrations/:key/webhook-deliveries` */
export const providerDeliveryListQuery = z.object({
  status: z.enum(['unmatched', 'processed']).default('unmatched').describe('What became of them: `unmatched` (no connection) or `processed`.'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
