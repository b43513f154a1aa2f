/**
 * Options of the Microsoft identity platform simulator: one strict zod schema with defaults,
 * so a typo in a test's options fails loudly instead of silently running with a default.
 * Registered apps and users have their own schemas, shared with registerApp / addUser.
 */
import { z } from 'zod';
import type { AccessTokenEvent } from './tokens';

/** The default app: a confidential web app (it has a secret), like Weft's registration. */
export const MS_IDENTITY_DEFAULT_CLIENT_ID = 'c0ffee00-0000-4000-8000-00000000a001';
export const MS_IDENTITY_DEFAULT_CLIENT_SECRET = 'Wft8Q~sandbox-client-secret-0123456789abc';
const MS_IDENTITY_DEFAULT_TENANT_NAME = 'contoso';
/** Default users: `admin@{domain}` (an admin) and `user@{domain}` (not an admin). */
export const MS_IDENTITY_DEFAULT_ADMIN_PASSWORD = 'Sandbox-Admin-Passw0rd!';
export const MS_IDENTITY_DEFAULT_USER_PASSWORD = 'Sandbox-User-Passw0rd!';

const GUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HOST_RE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+(?::\d{1,5})?$/i;

export function isGuid(s: string): boolean {
  return GUID_RE.test(s);
}

/** A bare host name such as `contoso.sharepoint.com` (no scheme, no path). */
export const HostnameSchema = z.string().regex(HOST_RE, 'must be a host name such as contoso.sharepoint.com (no scheme, no path)');

function isAbsoluteUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hash === '';
  } catch {
    return false;
  }
}

const fn = <T extends (...args: never[]) => unknown>(name: string) => z.custom<T>((v) => typeof v === 'function', { message: `${name} must be a function` });

export const AppRegistrationSchema = z
  .object({
    /** Application (client) ID: a GUID, as Entra issues them. */
    clientId: z.string().regex(GUID_RE, 'clientId must be a GUID'),
    /** Absent ⇒ a public client (which must not send a secret, AADSTS700025). */
    clientSecret: z.string().min(1).optional(),
    /** Registered redirect URIs, matched exactly (scheme, host, port, path, case). */
    redirectUris: z.array(z.string().refine(isAbsoluteUrl, 'redirect URIs must be absolute http(s) URLs without a fragment')).default([]),
    displayName: z.string().min(1).default('Weft'),
    /**
     * Statically registered delegated permissions: what `{resource}/.default` stands for.
     * Bare names are Graph permissions; other resources as full URIs.
     */
    permissions: z.array(z.string().min(1)).default(['User.Read']),
  })
  .strict();

export type AppRegistration = z.input<typeof AppRegistrationSchema>;
export type ResolvedAppRegistration = z.output<typeof AppRegistrationSchema>;

export const UserSchema = z
  .object({
    /** Sign-in name (UPN), e.g. `adele@contoso.onmicrosoft.com`; matched case-insensitively. */
    username: z
      .string()
      .min(3)
      .regex(/^[^\s@]+@[^\s@]+$/, 'username must look like name@domain'),
    password: z.string().min(1),
    /** Admins can consent to admin-only scopes, on behalf of the organization too. */
    isAdmin: z.boolean().default(false),
    displayName: z.string().min(1).optional(),
    /** Object id (`oid`); defaults to a GUID derived from the seed and the username. */
    id: z.string().regex(GUID_RE, 'id must be a GUID').optional(),
    email: z.string().optional(),
  })
  .strict();

export type UserRegistration = z.input<typeof UserSchema>;

const DefaultAppSchema = z
  .object({
    clientId: z.string().regex(GUID_RE, 'clientId must be a GUID').default(MS_IDENTITY_DEFAULT_CLIENT_ID),
    clientSecret: z.string().min(1).default(MS_IDENTITY_DEFAULT_CLIENT_SECRET),
    redirectUris: AppRegistrationSchema.shape.redirectUris,
    displayName: z.string().min(1).default('Weft Sandbox'),
    permissions: z.array(z.string().min(1)).default(['User.Read', 'Files.Read.All', 'Sites.Read.All']),
  })
  .strict();

export const MicrosoftIdentitySimulatorOptionsSchema = z
  .object({
    /** Seed for ids (tenant id, user object ids, trace ids). Credentials are always random. */
    seed: z.number().finite().default(1),
    tenant: z
      .object({
        /** Tenant id (`tid`); defaults to a GUID derived from the seed. */
        id: z.string().regex(GUID_RE, 'tenant.id must be a GUID').optional(),
        /** Short name: the `{name}.onmicrosoft.com` domain and the default SharePoint host derive from it. */
        name: z
          .string()
          .regex(/^[a-z0-9](?:[a-z0-9-]{0,25}[a-z0-9])?$/, 'tenant.name must be lower-case letters, digits and inner hyphens')
          .default(MS_IDENTITY_DEFAULT_TENANT_NAME),
        displayName: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    /**
     * The SharePoint host whose `https://{host}/.default` tokens are issued (the picker's
     * "team-site token"). Defaults to `{tenant.name}.sharepoint.com`; set it to what the
     * Graph simulator reports as `siteCollection.hostname` of `GET /v1.0/sites/root` (or call
     * setSharePointHost). `{name}-my.sharepoint.com` (OneDrive) is accepted alongside it.
     */
    sharePointHost: HostnameSchema.optional(),
    /**
     * Consent to any of these (Graph) permissions lets `https://{sharePointHost}/.default`
     * give a SharePoint token. A simplification: in Entra the SharePoint permissions are
     * registered and consented separately, but Weft asks for Sites.Read.All and expects the
     * team-site token to follow from it.
     */
    sharePointConsentFrom: z.array(z.string().min(1)).default(['Sites.Read.All']),
    /** The SharePoint scopes such a token carries. */
    sharePointScopes: z.array(z.string().min(1)).min(1).default(['AllSites.Read', 'MyFiles.Read']),
    /** The registered app every test can use; `false` for none. */
    defaultApp: z.union([z.literal(false), DefaultAppSchema]).prefault({}),
    /** More registered apps (see also registerApp). */
    apps: z.array(AppRegistrationSchema).default([]),
    /** `admin@{domain}` and `user@{domain}` with the documented passwords. */
    defaultUsers: z.boolean().default(true),
    /** More users (see also addUser). */
    users: z.array(UserSchema).default([]),
    /**
     * Scopes only an admin may consent to. A non-admin asking for one that is not granted
     * tenant-wide gets the "Need admin approval" page (AADSTS90094). Bare names are Graph.
     */
    adminConsentScopes: z.array(z.string().min(1)).default(['Sites.Read.All', 'User.Read.All']),
    /** `expires_in` / `ext_expires_in` of access tokens (see also setAccessTokenLifetime). */
    accessTokenLifetimeSeconds: z
      .number()
      .int()
      .min(1)
      .max(86_400 * 2)
      .default(3600),
    /** Authorization codes live this long (Microsoft: about 10 minutes). */
    codeLifetimeMs: z.number().int().positive().default(600_000),
    /** A refresh token unused for this long answers AADSTS70008 (Microsoft: 90 days). */
    refreshTokenInactivityMs: z
      .number()
      .int()
      .positive()
      .default(90 * 86_400_000),
    /** Artificial delay (ms) before every response; see also `setLatency`. */
    latencyMs: z.number().min(0).default(0),
    /**
     * Clock (epoch ms) for code / token / session expiry and the request log. Defaults to
     * Date.now. With a manual clock, an access token's lapse is announced to
     * onAccessTokenRevoked at the next request or sweepExpiredAccessTokens() call.
     */
    now: fn<() => number>('now').optional(),
    /** Called for every access token issued; wire it to Graph's addAccessToken. */
    onAccessToken: fn<(event: AccessTokenEvent) => void>('onAccessToken').optional(),
    /** Called when an access token expires or is revoked; wire it to Graph's revokeAccessToken. */
    onAccessTokenRevoked: fn<(event: AccessTokenEvent) => void>('onAccessTokenRevoked').optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    const ids = new Set<string>();
    if (o.defaultApp) ids.add(o.defaultApp.clientId.toLowerCase());
    o.apps.forEach((a, i) => {
      const id = a.clientId.toLowerCase();
      if (ids.has(id)) ctx.addIssue({ code: 'custom', path: ['apps', i, 'clientId'], message: 'duplicate clientId' });
      ids.add(id);
    });
    const names = new Set<string>();
    if (o.defaultUsers) {
      names.add(`admin@${o.tenant.name}.onmicrosoft.com`);
      names.add(`user@${o.tenant.name}.onmicrosoft.com`);
    }
    o.users.forEach((u, i) => {
      const n = u.username.toLowerCase();
      if (names.has(n)) ctx.addIssue({ code: 'custom', path: ['users', i, 'username'], message: 'duplicate username' });
      names.add(n);
    });
  });

export type MicrosoftIdentitySimulatorOptions = z.input<typeof MicrosoftIdentitySimulatorOptionsSchema>;
export type ResolvedMicrosoftIdentitySimulatorOptions = z.output<typeof MicrosoftIdentitySimulatorOptionsSchema>;
