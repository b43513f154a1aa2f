import { z } from 'zod';

/**
 * A secret Weft puts into an HTTP header of a provider call (`x-luma-api-key: …`,
 * `Authorization: Bearer …`): printable ASCII, spaces only inside. Anything else (a control
 * character, a line break, a non-Latin-1 letter) cannot be sent as a header value: the HTTP
 * client throws and the provider is never asked, so it is refused here with a 400 instead of
 * surfacing as a failed verification (424) after the fact.
 */
export function headerSafeSecret(maxLength: number) {
  return z
    .string()
    .min(1)
    .max(maxLength)
    .regex(
      /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/,
      'printable ASCII characters only, no control characters or surrounding spaces (it is sent in an HTTP header)',
    );
}

/** Provider API keys are short; 4 KB leaves room for any real one. */
export const API_KEY_MAX_LENGTH = 4096;
/** Microsoft's JWT access tokens reach several KB with group claims; 16 KB leaves room. */
const TOKEN_MAX_LENGTH = 16_384;

const extraTokenSchema = z.object({
  access_token: headerSafeSecret(TOKEN_MAX_LENGTH),
  expires_at: z.iso.datetime({ offset: true }).optional(),
  resource: z.string().max(2048),
});
export type ExtraToken = z.infer<typeof extraTokenSchema>;

/** Stored credentials of a connection, one shape per auth mode (the API's `credentials`). */
const apiKeyCredentialsSchema = z.object({ type: z.literal('API_KEY'), apiKey: headerSafeSecret(API_KEY_MAX_LENGTH) });
const oauth2CredentialsSchema = z.object({
  type: z.literal('OAUTH2'),
  access_token: headerSafeSecret(TOKEN_MAX_LENGTH),
  refresh_token: z.string().min(1).max(TOKEN_MAX_LENGTH).optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
  raw: z.record(z.string(), z.unknown()).optional(),
  /** Tokens for other resources (the provider's `oauth.extraTokens`, e.g. Microsoft's team-site token), by name; refreshed with the main one. */
  extra_tokens: z.record(z.string().max(64), extraTokenSchema).optional(),
});
const appCredentialsSchema = z.object({
  type: z.literal('APP'),
  app_id: z.string().regex(/^\d+$/, 'app_id must be numeric'),
  installation_id: z.string().regex(/^\d+$/, 'installation_id must be numeric'),
  /** The current installation token and its expiry, minted by Weft (never given by the app). */
  access_token: z.string().min(1).optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
});

export const credentialsSchema = z.discriminatedUnion('type', [apiKeyCredentialsSchema, oauth2CredentialsSchema, appCredentialsSchema]);
export type Credentials = z.infer<typeof credentialsSchema>;
export type OAuth2Credentials = Extract<Credentials, { type: 'OAUTH2' }>;

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

/**
 * The extra tokens of stored credentials. Credentials sealed before extra tokens were
 * declared as data kept their one extra token at the top level, under its name.
 */
export function extraTokensOf(credentials: OAuth2Credentials): Record<string, ExtraToken> {
  const legacy = Object.fromEntries(
    Object.entries(credentials as Record<string, unknown>).filter(([k, v]) => !KNOWN_FIELDS.has(k) && isExtraToken(v)),
  ) as Record<string, ExtraToken>;
  return { ...legacy, ...credentials.extra_tokens };
}

/** The extra tokens as integration code reads them: `connection_config.<name>AccessToken` (+ `ExpiresAt`). */
export function extraTokenConfig(credentials: OAuth2Credentials): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, token] of Object.entries(extraTokensOf(credentials))) {
    out[`${name}AccessToken`] = token.access_token;
    out[`${name}AccessTokenExpiresAt`] = token.expires_at ?? null;
  }
  return out;
}

/** Credentials without their extra tokens (they are shown in connection_config instead). */
export function withoutExtraTokens(credentials: OAuth2Credentials): OAuth2Credentials {
  const names = new Set(Object.keys(extraTokensOf(credentials)));
  return Object.fromEntries(Object.entries(credentials).filter(([k]) => k !== 'extra_tokens' && !names.has(k))) as OAuth2Credentials;
}

const KNOWN_FIELDS = new Set(['type', 'access_token', 'refresh_token', 'expires_at', 'raw', 'extra_tokens']);

function isExtraToken(v: unknown): v is ExtraToken {
  return typeof v === 'object' && v !== null && typeof (v as ExtraToken).access_token === 'string' && typeof (v as ExtraToken).resource === 'string';
}
