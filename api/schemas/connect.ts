import { z } from 'zod';
import { API_KEY_MAX_LENGTH, headerSafeSecret } from '../../auth/credentials';
import { jsonObject, tagsObject } from './json-object';

const connectionId = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\s/]+$/, 'no spaces or slashes');

const integrationDefaultsSchema = z.strictObject({
  /** Scopes to request instead of the integration's (OAuth). */
  user_scopes: z.array(z.string().min(1).max(300)).max(100).optional(),
  /** Extra authorize parameters, e.g. `{ prompt: 'consent' }`: passed on to the provider's authorization page as they are. */
  authorization_params: z.record(z.string().regex(/^[a-z_]{1,40}$/), z.string().max(500)).optional(),
  /** Connection settings, e.g. Microsoft `tenant`. */
  connection_config: jsonObject().optional(),
});

/** Who connects: kept on the connection as the tags `end_user_id`, `end_user_email`, `end_user_display_name` (api/services/end-user-tags.ts). */
const endUserSchema = z.strictObject({ id: z.string().min(1).max(255), email: z.email().max(255).optional(), display_name: z.string().max(255).optional() });
/** Their organization: the tags `organization_id`, `organization_display_name`. */
const organizationSchema = z.strictObject({ id: z.string().min(1).max(255), display_name: z.string().max(255).optional() });
const integrationsConfigDefaults = z.record(z.string(), integrationDefaultsSchema);

export const createConnectSessionBody = z.strictObject({
  end_user: endUserSchema.optional(),
  organization: organizationSchema.optional(),
  allowed_integrations: z.array(z.string().min(1)).min(1).max(100).optional(),
  integrations_config_defaults: integrationsConfigDefaults.optional(),
  tags: tagsObject.optional(),
  /**
   * A reconnect session: its flows re-authorize this existing connection (of an allowed
   * integration) and nothing else; without it every flow creates a new connection.
   */
  connection_id: connectionId.optional(),
});

/**
 * `POST /connect/sessions/reconnect` as Nango's SDKs send it (`createReconnectSession`): a
 * reconnect session for one connection of one integration.
 */
export const createReconnectSessionBody = z.strictObject({
  connection_id: connectionId,
  integration_id: z.string().min(1),
  end_user: endUserSchema.optional(),
  organization: organizationSchema.optional(),
  integrations_config_defaults: integrationsConfigDefaults.optional(),
  tags: tagsObject.optional(),
});

/** The browser names only its session: the connection comes from the session (oauth-flow.ts). */
export const oauthConnectQuery = z.object({
  connect_session_token: z.string().min(1).max(200),
});

export const apiKeyBody = z.object({ apiKey: headerSafeSecret(API_KEY_MAX_LENGTH) });
