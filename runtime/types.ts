import type { z } from 'zod';
import type { AuthMode } from '../common/stored-documents';

/**
 * The contract between Weft and integration code. An integration folder imports only
 * from here: the same `SyncContext` is backed by the worker, by `weft dryrun` and by the
 * saved mocks of generated tests.
 */

// Integration code reads how a connection authenticates from here, as everything else.
export type { AuthMode };
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | Array<string | number>;

export interface RequestConfig {
  method?: HttpMethod;
  /** Path relative to the provider's base URL (or a full URL on an allowed host). */
  endpoint: string;
  params?: Record<string, QueryValue | undefined>;
  headers?: Record<string, string>;
  data?: unknown;
  /** Extra attempts on network errors and 5xx (default from the provider). */
  retries?: number;
  /**
   * The URL carries its own authorization (Graph's upload session URL): sent without the
   * connection's credentials, which such a URL may refuse.
   */
  preAuthenticated?: boolean;
}

export interface HttpResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  data: T;
}

/** How `ctx.paginate` walks a listing. One shape per style real APIs use. */
export type PaginationConfig =
  | {
      type: 'cursor';
      /** Dotted path to the next cursor in the response body (e.g. `next_cursor`). */
      cursorPathInResponse: string;
      /** Query parameter that carries the cursor (e.g. `pagination_cursor`). */
      cursorNameInRequest: string;
      /** Dotted path to a boolean that says whether more pages follow (optional). */
      hasMorePathInResponse?: string;
      responsePath?: string;
      limitNameInRequest?: string;
      limit?: number;
    }
  | {
      type: 'link';
      /** `header` reads RFC 8288 `Link: <...>; rel="next"`; otherwise a dotted body path such as `@odata.nextLink`. */
      linkRelInResponseHeader?: string;
      linkPathInResponseBody?: string;
      responsePath?: string;
      limitNameInRequest?: string;
      limit?: number;
    }
  | {
      type: 'offset';
      offsetNameInRequest: string;
      responsePath?: string;
      limitNameInRequest?: string;
      limit?: number;
    };

export interface PaginateConfig extends RequestConfig {
  paginate?: Partial<PaginationConfig> & { type?: PaginationConfig['type'] };
  /**
   * Fetch the next page while the current one is being handled. For listings read to the
   * end (an enumeration); not for walks that stop early, where it would spend a request.
   */
  prefetch?: boolean;
}

/**
 * What `ctx.paginate` returns: the pages, one array of items at a time, and afterwards
 * what the last page said besides its items (`@odata.deltaLink`, a sync token, ...). A
 * listing that an earlier attempt already finished is not fetched again: it yields no
 * pages, and `end` is what that attempt saw.
 */
export interface Listing<T> extends AsyncIterable<T[]> {
  /** The last page's body without its items; null until the listing has finished. */
  readonly end: Record<string, unknown> | null;
}

/** How a context reaches the provider: the worker's HTTP client, the dry run's proxy, saved mocks. */
export interface ProviderTransport {
  request<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>>;
}

export interface ConnectionInfo {
  connection_id: string;
  provider_config_key: string;
  provider: string;
  /** How the connection authenticates (GitHub: `APP` installation or `OAUTH2` user token). */
  auth_mode: AuthMode;
  connection_config: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export interface LogFields {
  [key: string]: unknown;
}

/** What sync and action code sees. */
export interface BaseContext {
  readonly connectionId: string;
  readonly providerConfigKey: string;
  get<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>>;
  post<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>>;
  put<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>>;
  patch<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>>;
  delete<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>>;
  proxy<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>>;
  /** Yields one page of items at a time; resumes from the last checkpoint after a crash. */
  paginate<T = unknown>(config: PaginateConfig): Listing<T>;
  getConnection(): Promise<ConnectionInfo>;
  getMetadata<T = Record<string, unknown>>(): Promise<T>;
  setMetadata(metadata: Record<string, unknown>): Promise<void>;
  updateMetadata(metadata: Record<string, unknown>): Promise<void>;
  log(message: string, fields?: LogFields): void;
}

export interface SyncContext extends BaseContext {
  readonly variant: string;
  /** Start of the last successful run, or null on the first run / after a reset. */
  readonly lastSyncDate: Date | null;
  batchSave<T extends { id: string }>(records: T[], model: string): Promise<void>;
  batchDelete<T extends { id: string }>(records: T[], model: string): Promise<void>;
  /**
   * Declares that this run passes every live record of `model` to batchSave (a full
   * enumeration, e.g. the first run of a delta sync or a resync after the provider lost
   * the delta token). When the run completes, records of the model it did not save are
   * marked deleted. Full syncs (`syncType: 'full'`) do this for every model already.
   */
  trackDeletes(model: string): void;
  getCheckpoint<T = unknown>(): Promise<T | null>;
  saveCheckpoint(checkpoint: unknown): Promise<void>;
}

/** What action code sees: the base calls, and the records cache its integration's syncs fill. */
export interface ActionContext extends BaseContext {
  /**
   * Saves what the action wrote to the provider into the records cache, as the sync that
   * declares `model` would (validated with its schema, same hash), committed at once: GET
   * /records shows it now, and the sync's next run finds it unchanged. To the sync's `base`
   * variant unless `options.variant` names another.
   */
  batchSave<T extends { id: string }>(records: T[], model: string, options?: { variant?: string }): Promise<void>;
}

export type ModelSchemas = Record<string, z.ZodType<{ id: string }>>;

/**
 * How a model maps onto its provider-neutral shape (`UnifiedFile`, ...), so an app reads
 * the same type from every provider of a kind. Schemas live in `runtime/unified-models`.
 */
export interface UnifiedMapping {
  /** The unified model's name, e.g. `UnifiedFile`. */
  name: string;
  map(record: Record<string, unknown>): Record<string, unknown>;
}

export interface SyncDefinition {
  kind: 'sync';
  name: string;
  description: string;
  /** The operation's own endpoint (`GET /<path>`, e.g. `GET /user-files`), where apps read its records. */
  endpoint: { method: 'GET'; path: string };
  models: ModelSchemas;
  /** Per model name: its unified mapping, where the model has one. */
  unified?: Record<string, UnifiedMapping>;
  /** full: every run sees everything, so records it did not see are deleted at the end. */
  syncType: 'full' | 'incremental';
  /** Human frequency such as "every 1h"; minimum 30 s. */
  frequency: string;
  autoStart: boolean;
  /**
   * Provider webhook events (GitHub: `pull_request`) that mean this sync's data changed: a
   * delivery of one starts the sync's run for each connection it is about, coalesced (a
   * delivery during a run makes one more run after it, however many arrive).
   */
  webhookSubscriptions?: string[];
  /**
   * Acts on such a delivery directly instead of running the sync: saves what the delivery
   * carries into the sync's records (`ctx.batchSave`, committed at once, as an action saves),
   * with no run and no call to the provider unless it makes one. Called once per delivery and
   * connection; a delivery that fails here is taken again later.
   */
  onWebhook?(ctx: ActionContext, delivery: ProviderDelivery): Promise<void>;
  exec(ctx: SyncContext): Promise<void>;
}

/** A provider's webhook delivery, as a sync's onWebhook sees it. */
export interface ProviderDelivery {
  /** The provider's event (GitHub: `pull_request`; Graph: `change`; Luma: `event.created`). */
  event: string;
  /** The body as JSON (one notification, for Graph). */
  payload: unknown;
}

export interface ActionDefinition<I = unknown, O = unknown> {
  kind: 'action';
  name: string;
  description: string;
  endpoint: { method: 'GET' | 'POST'; path: string };
  input: z.ZodType<I>;
  output: z.ZodType<O>;
  /**
   * How AI agents see the action as an MCP tool (docs/mcp.md). `effect`: `read` tools are
   * marked read-only, `write` tools destructive (default: a GET endpoint reads, any other
   * writes). `exposed: false` keeps the action from agents altogether, e.g. one that returns a
   * credential.
   */
  agentTool?: { effect?: 'read' | 'write'; exposed?: boolean };
  exec(ctx: ActionContext, input: I): Promise<O>;
}

/** Proactive request budget of a provider (e.g. Luma: 300 per sliding minute per key). */
export interface RequestBudget {
  requests: number;
  windowMs: number;
  /** How long the provider locks a key out once the budget is exceeded. */
  lockoutMs?: number;
}

/**
 * Declarative throttling rules; the runtime implements each kind.
 * - `retry-after`: the listed statuses carry `Retry-After` in (decimal) seconds.
 * - `lockout`: a 429 locks the key out for the budget's `lockoutMs` (no header to read).
 */
export type ThrottleRule = { kind: 'retry-after'; statuses: number[]; defaultWaitMs: number } | { kind: 'lockout'; statuses: number[] } | RateLimitHeadersRule;

/**
 * A provider that reports its budget on every response (GitHub's `x-ratelimit-*`): the
 * runtime paces itself as `remaining` nears zero, waits for `reset` once it is exhausted,
 * and tells a secondary limit (throttled while budget remains) by `retry-after` or, failing
 * that, backs off from `secondaryDefaultWaitMs`, doubling on repeats.
 */
export interface RateLimitHeadersRule {
  kind: 'rate-limit-headers';
  /** Statuses that may mean "rate limited" (GitHub: 403 and 429). */
  statuses: number[];
  remainingHeader: string;
  /** Epoch seconds at which the budget refills. */
  resetHeader: string;
  /** Below this many remaining requests, spread the rest over the time left until reset. */
  slowDownBelow: number;
  secondaryDefaultWaitMs: number;
  /** A 403/429 body matching this is a secondary limit even without `retry-after`. */
  secondaryMessage?: RegExp;
}

/**
 * How a provider's webhook deliveries are verified, named and attributed, as data of the
 * integration folder: the intake (`POST /webhooks/providers/:environment/:integration`)
 * checks each delivery with it before anything is stored. Two kinds:
 * - `signed`: an HMAC of the raw body with the integration's webhook secret (GitHub);
 * - `subscription-notifications`: notifications of subscriptions Weft made for each
 *   connection (`IntegrationDefinition.subscriptions`), each carrying the secret Weft gave
 *   its subscription (Microsoft Graph's `clientState`), after a handshake that echoes a token;
 * - `secret-path`: a provider that signs nothing (Luma): each subscription Weft makes is given
 *   its own URL, the intake's with a random secret as its last segment, and only a delivery to
 *   a live subscription's URL is taken in.
 */
export type ProviderWebhooks = SignedWebhooks | SubscriptionNotifications | SecretPathWebhooks;

export interface SignedWebhooks {
  kind: 'signed';
  /**
   * An HMAC of the raw body with the integration's webhook secret (`credentials.webhook_secret`),
   * hex-encoded in `header` after `prefix` (GitHub: `X-Hub-Signature-256: sha256=<hex>`).
   */
  signature: { header: string; prefix: string; algorithm: 'sha256' };
  /** The header naming the delivery: a redelivery carries the same value, and is stored once. */
  deliveryIdHeader: string;
  /** The header naming the event (GitHub: `X-GitHub-Event`: `pull_request`, `push`, …). */
  eventHeader: string;
  /**
   * Which connections a delivery is about: the value at `bodyPath` of its (signed) JSON body
   * is matched against the value a connection's credentials hold in `credentialField`, as the
   * route key `<kind>:<value>` (GitHub: `installation.id` ↔ an App connection's
   * `installation_id`). Never a value the sender chooses freely: the body is the provider's,
   * signed. A delivery without it, or whose value no connection holds, is kept as unmatched.
   */
  attribution: { kind: string; bodyPath: string; credentialField: string };
}

export interface SubscriptionNotifications {
  kind: 'subscription-notifications';
  /** The handshake: a request with this query parameter is answered 200 `text/plain` with its value. */
  validationQuery: string;
  /** Where the body lists its notifications (Graph: `value`). */
  listField: string;
  /** Each notification's subscription (the route `subscription:<id>`). */
  subscriptionIdField: string;
  /** Each notification's copy of its subscription's secret. */
  clientStateField: string;
  /** Set on a notification about the subscription itself (Graph: `lifecycleEvent`), which is then its event. */
  lifecycleField: string;
  /** The event of a notification that is about data (Graph: `change`). */
  changeEvent: string;
  /** Lifecycle events after which the subscription is renewed (Graph: `reauthorizationRequired`). */
  renewOn: string[];
  /** Lifecycle events after which the subscription is gone and is made again (Graph: `subscriptionRemoved`). */
  remakeOn: string[];
}

export interface SecretPathWebhooks {
  kind: 'secret-path';
  /** Where the body names its event (Luma: `type`, e.g. `event.created`). */
  eventField: string;
}

/** A subscription a connection holds at its provider, made by the integration's hooks. */
export interface ProviderSubscription {
  id: string;
  /** What it watches, as the provider names it (Graph: `/drives/<id>/root`). */
  resource: string;
  /** ISO 8601: renewed before then. */
  expiresAt: string;
}

/** What subscription hooks see: the connection's provider calls, and where notifications go. */
export interface SubscriptionContext extends Pick<BaseContext, 'connectionId' | 'providerConfigKey' | 'get' | 'post' | 'patch' | 'delete' | 'log'> {
  /** The integration's public intake URL (`{WEFT_PUBLIC_URL}/webhooks/providers/<environment>/<integration>`). */
  getWebhookURL(): string;
  /**
   * A new random secret for one subscription, which the provider sends back with each
   * notification (Graph: `clientState`); for a `secret-path` provider, the last segment of
   * the subscription's URL (`${ctx.getWebhookURL()}/${secret}`).
   */
  newClientState(): string;
}

/**
 * Subscriptions are part of a connection's life: made when it is created (a durable
 * workflow retries until the provider accepts), renewed `renewBeforeMs` before each
 * expires, remade when the provider removes one, and deleted with the connection.
 */
export interface WebhookSubscriptionHooks {
  renewBeforeMs: number;
  /** Makes the connection's subscriptions; each secret from ctx.newClientState() goes with the subscription it was given to. */
  onConnectionCreated(ctx: SubscriptionContext): Promise<Array<ProviderSubscription & { clientState: string }>>;
  /** Extends one; resolves with its new expiry. */
  renew(ctx: SubscriptionContext, subscription: ProviderSubscription): Promise<ProviderSubscription>;
  /** Makes a new subscription of the same resource as one the provider removed. */
  remake(ctx: SubscriptionContext, removed: ProviderSubscription): Promise<ProviderSubscription & { clientState: string }>;
  /** Deletes them at the provider (the connection is being deleted). */
  onConnectionDeleted(ctx: SubscriptionContext, subscriptions: ProviderSubscription[]): Promise<void>;
}

export interface ProviderDefinition {
  name: string;
  displayName: string;
  /** The provider's own API documentation (a URL): shown in the provider catalog (`GET /providers`). */
  docs?: string;
  /** What kind of service it is (`storage`, `dev-tools`, ...): lower-case words joined by dashes, shown in `GET /providers`. */
  categories?: string[];
  /** The auth mode of a connection when the integration does not choose another. */
  authMode: AuthMode;
  /** Every mode the provider supports; the integration's client credentials pick one (GitHub: App or OAuth App). */
  authModes?: AuthMode[];
  baseUrl: string;
  /** Hosts a request may target besides the base URL's (full-URL pagination links, downloads). */
  allowedHosts?: string[];
  defaultHeaders?: Record<string, string>;
  apiKey?: {
    /** The header that carries the key, e.g. `x-luma-api-key`. */
    header: string;
  };
  /** A cheap call that proves new credentials work before they are stored; 401/403 means they do not. */
  verify?: { method: HttpMethod; endpoint: string; params?: Record<string, QueryValue> };
  /** App-installation auth (GitHub App): an app JWT is exchanged for an installation token. */
  app?: {
    /** Where the token is minted; `{installation_id}` is replaced. */
    accessTokenEndpoint: string;
    /** Re-mint this long before the token expires. */
    refreshMarginMs: number;
    /**
     * Proving who installed the App: the listing of installations a user token can reach
     * (paginated as the provider paginates), and where the installations are in its body.
     */
    userInstallations?: { endpoint: string; responsePath: string };
  };
  /** OAuth 2.0 authorization code flow (OAUTH2 integrations). */
  oauth?: OAuthConfig;
  pagination?: PaginationConfig;
  requestBudget?: RequestBudget;
  /** How the provider says "slow down" (429/503 and friends), so the runtime can wait. */
  throttle?: ThrottleRule;
  /** The provider's own webhooks (deliveries to Weft's intake): how each is signed and named. */
  webhooks?: ProviderWebhooks;
  /** Default extra attempts on network errors and 5xx. */
  retries?: number;
  /**
   * Request headers that carry a secret besides `authorization` and `apiKey.header` (which
   * count already): the logger redacts every one a registered provider names.
   */
  secretHeaders?: string[];
  /** The response header with the provider's id of a request (GitHub: `x-github-request-id`): kept in the request log and in errors. */
  requestIdHeader?: string;
}

/**
 * The provider's rules for the scopes of an authorization request, checked before the end
 * user is redirected (Microsoft: `.default` alone, `offline_access` always).
 */
export interface ScopeRules {
  /** Scopes that grant no resource permission (OIDC) and so combine with any other. */
  neutral?: string[];
  /**
   * A scope ending in `suffix` stands for every permission granted beforehand and may not
   * be combined with explicit scopes (nor with another such scope): `invalid_scopes_default_mixed`.
   */
  exclusive?: { suffix: string; meaning: string };
  /** Added when missing, with the warning that says why. */
  required?: Array<{ scope: string; warning: string }>;
  /** A prefix a granted scope may carry or omit: `https://graph.microsoft.com/Sites.Read.All` is `Sites.Read.All`. Compared case-insensitively. */
  implicitPrefix?: string;
}

/** A provider's numbered authorization errors (read from the token endpoint's `error_codes` or the description). */
export interface AuthorizationErrorCodes {
  /** How a code is written in `error_description` and messages: `AADSTS` for `AADSTS65001: ...`. */
  prefix: string;
  /** Codes that mean an administrator must consent first, and what the end user does next then. */
  adminConsentRequired: { codes: number[]; next: string };
  /** Codes that mean consent was declined (besides OAuth's `access_denied`). */
  accessDenied?: number[];
}

/**
 * A token for another resource than the provider API's, obtained right after the code
 * exchange (a post-connection step) and refreshed together with the main token (Microsoft's
 * SharePoint team-site token). Stored sealed with the connection's credentials; integration
 * code reads it as `connection_config.<name>AccessToken` and `<name>AccessTokenExpiresAt`.
 */
export interface ExtraTokenDefinition {
  name: string;
  /** Obtained only when this scope was both requested and granted. */
  whenScopeGranted: string;
  /**
   * Where the token's resource is named: a GET of this provider API endpoint with the new
   * access token, and the dotted path to the resource's host in its answer.
   */
  resourceHost: { endpoint: string; path: string };
  /** The scope of the refresh-token grant that mints the token; `{resource}` is `https://<host>`. */
  scope: string;
}

/** How Weft runs a provider's OAuth 2.0 authorization code flow. */
export interface OAuthConfig {
  /** Full URLs; `{tenant}` is replaced (Microsoft). An integration may move their origin (sandbox). */
  authorizationUrl: string;
  tokenUrl: string;
  /** `{tenant}` when neither the integration nor the connection names one. */
  defaultTenant?: string;
  /** Scopes when neither the connect session nor the integration gives any. */
  defaultScopes: string[];
  /** Send a PKCE S256 challenge. */
  pkce: boolean;
  /** Provider-specific scope rules checked before redirecting. */
  scopeRules?: ScopeRules;
  /** Tokens for other resources, obtained after the code exchange and refreshed with the main one. */
  extraTokens?: ExtraTokenDefinition[];
  /** How the provider numbers its authorization errors (Microsoft's AADSTS codes), so failures are told apart by code, never by text. */
  errorCodes?: AuthorizationErrorCodes;
  /** Refresh this long before the access token expires. */
  refreshMarginMs: number;
  /** Proves OAuth credentials when it differs from the provider's `verify` (GitHub: `GET /user`). */
  verify?: { method: HttpMethod; endpoint: string };
  /** Rules for the app registration the integration's client credentials come from. */
  registration?: { appNameMaxLength: number; homepageUrlRequired: boolean };
}

export interface IntegrationDefinition {
  provider: ProviderDefinition;
  syncs: SyncDefinition[];
  actions: ActionDefinition[];
  /** Webhook subscriptions each connection holds at the provider (OneDrive: Graph change notifications). */
  subscriptions?: WebhookSubscriptionHooks;
  /** How the Connect page presents it to the person connecting (the folder's `connect-ui.ts`). */
  connectUi?: ConnectUi;
}

/**
 * How the Connect page shows an integration to the person connecting an account: its logo,
 * which Weft serves from its own origin (the end user's browser fetches nothing elsewhere),
 * and what the app gets, in plain words. Data, kept in the integration's folder.
 */
export interface ConnectUi {
  /**
   * The provider's logo: a small SVG document (square viewBox, at most 16 KB) drawn with
   * presentation attributes only: no `style`, script, links or external references.
   */
  logoSvg?: string;
  /**
   * An OAuth scope → what it lets the app do, in plain words ("Read your files"), matched
   * case-insensitively (and without the scope rules' `implicitPrefix`). A scope not listed is
   * shown as it is; one mapped to '' is not shown (OpenID's `openid`).
   */
  scopes?: Record<string, string>;
  /** What the app gets with an API key (which has no scopes to list). */
  apiKeyAccess?: string[];
  /** What the app gets through an App installation (the provider shows the permissions itself). */
  appAccess?: string[];
}

/**
 * Declares an action with its input and output types checked against its schemas; the
 * registry keeps actions type-erased (it validates input before exec runs).
 */
export function defineAction<I, O>(def: ActionDefinition<I, O>): ActionDefinition {
  return def as unknown as ActionDefinition;
}
