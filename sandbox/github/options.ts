/**
 * Options of the GitHub App simulator: one strict zod schema with defaults, so a typo in a
 * test's options fails loudly instead of silently running with a default.
 */
import { z } from 'zod';

/** GitHub logins: alphanumerics and single hyphens, no leading/trailing hyphen, ≤ 39 chars. */
const LOGIN_RE = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

const GitHubInstallationOptionSchema = z
  .object({
    id: z.number().int().positive(),
    account: z
      .object({
        login: z.string().regex(LOGIN_RE, 'account.login must be a valid GitHub login'),
        type: z.enum(['Organization', 'User']),
      })
      .strict(),
    /** Repositories generated for this installation (all visible to it: selection "all"). */
    repositoryCount: z.number().int().min(0).max(10_000),
  })
  .strict();

/**
 * A person who can sign in to the simulated github.com (OAuth authorize and App install
 * pages). Their account gets `repositoryCount` seeded repositories, deterministic from the
 * seed and the login, whether or not the App is installed on it.
 */
export const GitHubUserOptionSchema = z
  .object({
    login: z.string().regex(LOGIN_RE, 'login must be a valid GitHub login'),
    password: z.string().min(1),
    /** Display name (GET /user `name`); defaults to the login. */
    name: z.string().min(1).optional(),
    /** Public email (GET /user `email`); null hides it, as a GitHub user may. */
    email: z.email().nullable().optional(),
    repositoryCount: z.number().int().min(0).max(10_000).default(3),
    /**
     * Organizations (logins of Organization installations) the user belongs to: their
     * installations are listed by `GET /user/installations` for the user's App user tokens.
     */
    organizations: z.array(z.string().regex(LOGIN_RE, 'organizations: valid GitHub logins')).default([]),
  })
  .strict();

/** An OAuth App registered on the simulated github.com. */
export const GitHubOAuthAppOptionSchema = z
  .object({
    clientId: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, 'clientId: letters, digits, ".", "_" and "-" only'),
    clientSecret: z.string().min(1),
    name: z.string().min(1),
    homepageUrl: z.url({ protocol: /^https?$/ }),
    /** The "Authorization callback URL": redirect_uri must be it or below it (GitHub's rules). */
    callbackUrl: z.url({ protocol: /^https?$/ }),
  })
  .strict();

/** Signs in on the simulated github.com unless the options name other users. */
export const DEFAULT_USER = Object.freeze({
  login: 'sandbox-user',
  password: 'sandbox-password',
  name: 'Sandbox User',
  email: 'sandbox-user@example.com',
  repositoryCount: 3,
});

/**
 * Registered unless the options name other OAuth Apps. Its callback is on 127.0.0.1, where
 * GitHub ignores the port (loopback rule), so any local server's `/oauth/callback` (or a
 * path below it) matches.
 */
export const DEFAULT_OAUTH_APP = Object.freeze({
  clientId: 'Ov23liWeftSandbox001',
  clientSecret: 'weft-sandbox-oauth-client-secret',
  name: 'Weft Sandbox OAuth',
  homepageUrl: 'https://weft.example.com',
  callbackUrl: 'http://127.0.0.1/oauth/callback',
});

/** The simulated App's OAuth client secret unless the options name another. */
const DEFAULT_APP_CLIENT_SECRET = 'weft-sandbox-app-client-secret';

/** The App's "Webhook URL" and "Webhook secret" (GitHub sends no signature without a secret). */
export const GitHubAppWebhookSchema = z
  .object({
    url: z.url({ protocol: /^https?$/ }),
    secret: z.string().min(1).nullable().optional(),
  })
  .strict();
export type GitHubAppWebhook = z.input<typeof GitHubAppWebhookSchema>;

export const GitHubSimulatorOptionsSchema = z
  .object({
    /** Seed for all generated data. Same seed + same operations ⇒ identical responses. */
    seed: z.number().finite().default(1),
    app: z
      .object({
        id: z.number().int().positive().default(123456),
        /** Defaults to `Iv1.` + 16 hex digits derived from the seed. */
        clientId: z.string().min(1).optional(),
        slug: z.string().min(1).default('weft-sandbox'),
        name: z.string().min(1).default('Weft Sandbox'),
        /** The App's OAuth client secret (user authorization: `ghu_` user tokens). */
        clientSecret: z.string().min(1).default(DEFAULT_APP_CLIENT_SECRET),
        /**
         * "User authorization callback URL"s (GitHub allows up to 10): where the App's user
         * authorization sends the browser with a `code`; the first one when no redirect_uri is given.
         */
        callbackUrls: z
          .array(z.url({ protocol: /^https?$/ }))
          .max(10)
          .default([]),
        /**
         * "Request user authorization (OAuth) during installation": the install page then sends
         * the browser to the first callback URL (not the Setup URL) with `code`, `installation_id`,
         * `setup_action` and `state`. Needs a callback URL, as on GitHub.
         */
        requestOAuthOnInstall: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    /**
     * The App's private key (PKCS#1 or PKCS#8 PEM, RSA). When absent a fresh RSA-2048 pair is
     * generated at creation (keys are not data: they need not be reproducible).
     */
    privateKeyPem: z.string().min(1).optional(),
    installations: z.array(GitHubInstallationOptionSchema).default([{ id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 5 }]),
    /** Who can sign in on the web pages (default: DEFAULT_USER). Logins must be unique. */
    users: z.array(GitHubUserOptionSchema).default(() => [{ ...DEFAULT_USER, organizations: [] }]),
    /** OAuth Apps for the web flow (default: DEFAULT_OAUTH_APP). Client ids must be unique. */
    oauthApps: z.array(GitHubOAuthAppOptionSchema).default(() => [{ ...DEFAULT_OAUTH_APP }]),
    /**
     * The App's "Setup URL": where the install page sends the browser after an install or an
     * update. Null (the default) shows a plain "installed" page instead; see `setAppSetupUrl`.
     */
    setupUrl: z
      .url({ protocol: /^https?$/ })
      .nullable()
      .default(null),
    /**
     * The App's webhook: where github.com POSTs `pull_request` and `installation_repositories`
     * deliveries (see `setAppWebhook`). Null (the default) sends none.
     */
    webhook: GitHubAppWebhookSchema.nullable().default(null),
    /**
     * GitHub skips the authorize page when the user already granted the OAuth App every
     * requested scope and redirects with a code at once. False always shows the page.
     */
    rememberOAuthGrants: z.boolean().default(true),
    /** Pull requests generated per repository. */
    pullsPerRepo: z.number().int().min(0).max(1_000_000).default(30),
    /** Inclusive range of commits per generated pull request. */
    commitsPerPull: z
      .tuple([z.number().int().min(1), z.number().int().min(1)])
      .default([1, 12])
      .refine(([min, max]) => min <= max, { message: 'commitsPerPull: min must not exceed max' }),
    /** Pull requests (spread over the repositories) given 300 commits, past the 250 cap. */
    oversizedPulls: z.number().int().min(0).default(0),
    /**
     * Primary rate limit, one fixed window per installation, one per user (shared by all OAuth
     * tokens of that user) and one for the App's JWT calls.
     */
    rateLimit: z
      .object({
        limit: z.number().int().positive().default(5000),
        windowMs: z.number().int().positive().default(3_600_000),
        exhaustedStatus: z.union([z.literal(403), z.literal(429)]).default(403),
      })
      .strict()
      .prefault({}),
    /** Lifetime of installation access tokens (GitHub: one hour). */
    tokenTtlMs: z.number().int().positive().default(3_600_000),
    /** Artificial delay (ms) before every response; see also `setLatency`. */
    latencyMs: z.number().min(0).default(0),
    /**
     * Clock (epoch ms) for JWT checks, token expiry, rate-limit windows, mutation timestamps
     * and the request log. Defaults to Date.now. Never used for the seeded data.
     */
    now: z.custom<() => number>((v) => typeof v === 'function', { message: 'now must be a function' }).optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    const ids = new Set<number>();
    const logins = new Set<string>();
    o.installations.forEach((inst, i) => {
      if (ids.has(inst.id)) ctx.addIssue({ code: 'custom', path: ['installations', i, 'id'], message: 'duplicate installation id' });
      ids.add(inst.id);
      const login = inst.account.login.toLowerCase();
      if (logins.has(login)) {
        ctx.addIssue({ code: 'custom', path: ['installations', i, 'account', 'login'], message: 'duplicate account login' });
      }
      logins.add(login);
    });
    const orgLogins = new Set(o.installations.filter((i) => i.account.type === 'Organization').map((i) => i.account.login.toLowerCase()));
    const userLogins = new Set<string>();
    o.users.forEach((u, i) => {
      const login = u.login.toLowerCase();
      if (userLogins.has(login)) ctx.addIssue({ code: 'custom', path: ['users', i, 'login'], message: 'duplicate user login' });
      if (orgLogins.has(login)) ctx.addIssue({ code: 'custom', path: ['users', i, 'login'], message: 'login belongs to an Organization installation' });
      userLogins.add(login);
      u.organizations.forEach((org, j) => {
        if (!orgLogins.has(org.toLowerCase()))
          ctx.addIssue({ code: 'custom', path: ['users', i, 'organizations', j], message: 'not the account of an Organization installation' });
      });
    });
    if (o.app.requestOAuthOnInstall && o.app.callbackUrls.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['app', 'requestOAuthOnInstall'],
        message: 'requesting user authorization during installation needs a callback URL',
      });
    }
    const clientIds = new Set<string>();
    o.oauthApps.forEach((a, i) => {
      if (clientIds.has(a.clientId)) ctx.addIssue({ code: 'custom', path: ['oauthApps', i, 'clientId'], message: 'duplicate clientId' });
      clientIds.add(a.clientId);
    });
    const totalPulls = o.installations.reduce((n, inst) => n + inst.repositoryCount, 0) * o.pullsPerRepo;
    if (o.oversizedPulls > totalPulls) {
      ctx.addIssue({ code: 'custom', path: ['oversizedPulls'], message: `oversizedPulls exceeds the ${totalPulls} generated pull requests` });
    }
  });

export type GitHubUserOptions = z.input<typeof GitHubUserOptionSchema>;
export type GitHubOAuthAppOptions = z.input<typeof GitHubOAuthAppOptionSchema>;
export type GitHubSimulatorOptions = z.input<typeof GitHubSimulatorOptionsSchema>;
export type ResolvedGitHubSimulatorOptions = z.output<typeof GitHubSimulatorOptionsSchema>;
