import { z } from 'zod';
import { connectionCredentialsInputSchema } from '../../auth/credentials';
import { jsonObject, tagsObject } from './json-object';

const connectionId = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\s/]+$/, 'no spaces or slashes');

/** The path parameter of the routes about one connection: any id (an unknown one is a 404, as an id the app never made). */
export const connectionIdParams = z.object({ connectionId: z.string() });

export const createConnectionBody = z.strictObject({
  provider_config_key: z.string().min(1),
  connection_id: connectionId.optional(),
  credentials: connectionCredentialsInputSchema,
  metadata: jsonObject().optional(),
  connection_config: jsonObject().optional(),
  tags: tagsObject.optional(),
});

/** Nango's query, as its SDKs send it: `tags[<key>]=<value>` (every one must match), ids of integrations joined by commas. */
export const listConnectionsQuery = z.object({
  connectionId: z.string().optional(),
  search: z.string().max(255).optional(),
  integrationId: z.string().max(10_000).optional().describe('An integration’s unique key, or several joined by commas: connections of any of them.'),
  endUserId: z.string().min(1).max(255).optional().describe('Connections whose `end_user_id` tag is this (a connect session’s `end_user.id`).'),
  endUserOrganizationId: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('Connections whose `organization_id` tag is this (a connect session’s `organization.id`).'),
  tags: tagsObject
    .optional()
    .describe('`tags[<key>]=<value>`: connections carrying every tag given (keys without regard to case, values exactly).')
    .meta({ param: { style: 'deepObject', explode: true } }),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  page: z.coerce.number().int().min(0).default(0),
});

export const providerConfigKeyQuery = z.object({
  provider_config_key: z.string().min(1),
  refresh_token: z.enum(['true', 'false']).optional(),
  force_refresh: z.enum(['true', 'false']).optional(),
});

export const metadataBody = z.strictObject({
  connection_id: z.union([connectionId, z.array(connectionId).min(1).max(1000)]),
  provider_config_key: z.string().min(1),
  metadata: jsonObject(),
});

/** An http(s) URL Weft POSTs the connection's webhooks to, or null to use the environment's again. */
const webhookUrlOverride = z
  .url({ protocol: /^https?$/, message: 'an http(s) URL' })
  .max(2048)
  .nullable();

export const patchConnectionQuery = z.strictObject({
  provider_config_key: z.string().min(1),
});

export const patchConnectionBody = z
  .strictObject({
    tags: tagsObject.optional(),
    webhook_url_override: webhookUrlOverride.optional(),
  })
  .refine((b) => b.tags !== undefined || b.webhook_url_override !== undefined, 'nothing to change: give tags or webhook_url_override');
