import { z } from 'zod';

/** Stored credentials of a connection, one shape per auth mode (the API's `credentials`). */
export const apiKeyCredentialsSchema = z.object({ type: z.literal('API_KEY'), apiKey: z.string().min(1) });
export const oauth2CredentialsSchema = z.object({
  type: z.literal('OAUTH2'),
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
  raw: z.record(z.string(), z.unknown()).optional(),
  /** Microsoft's SharePoint team-site token (integrations.md, one-drive), refreshed with the main one. */
  teamsite: z.object({ access_token: z.string().min(1), expires_at: z.iso.datetime({ offset: true }).optional(), resource: z.string() }).optional(),
});
export const appCredentialsSchema = z.object({
  type: z.literal('APP'),
  app_id: z.string().regex(/^\d+$/, 'app_id must be numeric'),
  installation_id: z.string().regex(/^\d+$/, 'installation_id must be numeric'),
  /** The current installation token and its expiry, minted by Weft (never given by the app). */
  access_token: z.string().min(1).optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
});

export const credentialsSchema = z.discriminatedUnion('type', [apiKeyCredentialsSchema, oauth2CredentialsSchema, appCredentialsSchema]);
export type Credentials = z.infer<typeof credentialsSchema>;

/** What an app may give in `POST /connections`: Weft mints installation tokens itself. */
export const connectionCredentialsInputSchema = z.discriminatedUnion('type', [
  apiKeyCredentialsSchema,
  oauth2CredentialsSchema,
  appCredentialsSchema.pick({ type: true, app_id: true, installation_id: true }).strict(),
]);

/** True when the token expires within `marginMs` (a token without expiry never does). */
export function expiresWithin(credentials: { expires_at?: string }, marginMs: number, now = Date.now()): boolean {
  return credentials.expires_at !== undefined && Date.parse(credentials.expires_at) - now <= marginMs;
}
