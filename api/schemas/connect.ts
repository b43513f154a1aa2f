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

export const createConnectSessionBody = z.strictObject({
  end_user: z.strictObject({ id: z.string().min(1).max(255), email: z.email().optional(), display_name: z.string().max(255).optional() }).optional(),
  allowed_integrations: z.array(z.string().min(1)).min(1).max(100).optional(),
  integrations_config_defaults: z.record(z.string(), integrationDefaultsSchema).optional(),
  tags: tagsObject.optional(),
  /**
   * A reconnect session: its flows re-authorize this existing connection (of an allowed
   * integration) and nothing else; without it every flow creates a new connection.
   */
  connection_id: connectionId.optional(),
});

/** The browser names only its session: the connection comes from the session (oauth-flow.ts). */
export const oauthConnectQuery = z.object({
  connect_session_token: z.string().min(1).max(200),
});

export const apiKeyBody = z.object({ apiKey: headerSafeSecret(API_KEY_MAX_LENGTH) });
