import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { ConfigError } from './errors';
import { loadTemporalSettings, type TemporalSettings } from './temporal-settings';

/**
 * All configuration comes from the environment, parsed once here. No other module reads
 * process.env: they receive the parsed Config (or the part they need).
 */
const duration = z.coerce.number().int().positive();
/** A comma-separated list, empty entries dropped (the egress allow-lists). */
const allowList = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean),
  );

/** Express's `trust proxy`: false (req.ip is the peer), a number of proxy hops, or the proxies' addresses. */
export type TrustProxy = false | number | string[];
/** The names Express's `trust proxy` takes for ranges of addresses. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry) || ipaddr.isValid(entry)) return true;
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}
/**
 * WEFT_TRUST_PROXY: unset or `false`, a hop count, or comma-separated addresses, CIDRs and
 * loopback/linklocal/uniquelocal. `true` (trust every hop) is refused: the client writes the
 * first X-Forwarded-For entry, so it could pick the address it is limited by.
 */
const trustProxy = z
  .string()
  .trim()
  .optional()
  .transform((s, ctx): TrustProxy => {
    if (s === undefined || s === '' || s === 'false') return false;
    if (/^\d+$/.test(s)) return Number(s);
    const entries = s
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const bad = entries.filter((e) => !isProxyAddress(e));
    if (s === 'true' || bad.length) {
      ctx.addIssue({
        code: 'custom',
        message: `must be false, a number of proxy hops, or the proxies' addresses/CIDRs (loopback, linklocal, uniquelocal also work)${bad.length ? `; not an address: ${bad.join(', ')}` : ''}`,
      });
      return z.NEVER;
    }
    return entries;
  });
/** OTLP over HTTP only: the gRPC exporters are not installed. */
const otlpProtocol = z.enum(['http/protobuf', 'http/json'], {
  error: 'must be http/protobuf (the default) or http/json; grpc is not supported (OTLP over HTTP only)',
});

/**
 * Where a setting is listed in docs/configuration.md, and what that page says about it. Every
 * field of the schemas below carries one (`.meta(setting(…))`): `npm run docs:config` writes the
 * page from them, and a test fails when the page and the schemas differ.
 */
export type SettingGroup =
  'server' | 'protection' | 'worker' | 'temporal' | 'codec' | 'mongodb' | 'secrets' | 'egress' | 'telemetry' | 'local' | 'cli' | 'deploy';
export interface SettingDoc {
  group: SettingGroup;
  description: string;
  /** The value when unset, where the schema has no default of its own to show (e.g. "generated at first start"). */
  whenUnset?: string;
  /** What the variable takes, where the schema's type says too little (lists, special forms). */
  values?: string;
}
export function setting(group: SettingGroup, description: string, more: Omit<SettingDoc, 'group' | 'description'> = {}): SettingDoc & Record<string, unknown> {
  return { group, description, ...more };
}

export const configSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'production', 'test'])
    .default('development')
    .meta(setting('server', '`production` refuses to start without `WEFT_ENCRYPTION_KEY` (no key is generated).')),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .meta(setting('server', 'Level of the runtime logs (pino JSON on stdout). `npm start` uses `warn` unless this is set.')),
  PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(3003)
    .meta(setting('server', 'Port of the API (`--port` wins; `0`: any free port). `weft records` and the container health check read it too.')),
  WEFT_API_HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .meta(setting('server', 'The address `weft api` listens on: `0.0.0.0` behind a load balancer or in a container. `npm start` always listens on loopback.')),
  WEFT_PUBLIC_URL: z
    .string()
    .url()
    .optional()
    .meta(
      setting(
        'server',
        'Public base URL of the API: connect links, status URLs, the OAuth redirect URI (`{WEFT_PUBLIC_URL}/oauth/callback`) and the provider webhook intake. Set it behind a proxy, and on the workers: they give it to providers when they make webhook subscriptions (OneDrive), and make none without it.',
        {
          whenUnset: "the request's host",
        },
      ),
    ),
  WEFT_HTTP_HEADERS_TIMEOUT_MS: duration.default(10_000).meta(setting('server', 'The API closes a connection whose request headers are not in by then (408).')),
  WEFT_HTTP_REQUEST_TIMEOUT_MS: duration
    .default(30_000)
    .meta(setting('server', 'The API closes a connection whose whole request, body included, is not in by then (408).')),
  // Above the common load balancers' idle timeouts (60 s): the side that closes an idle
  // connection first must be the client, or a request sent as the server closes it is reset.
  WEFT_HTTP_KEEP_ALIVE_TIMEOUT_MS: duration
    .default(65_000)
    .meta(setting('server', "An idle keep-alive connection is closed after this; keep it above a load balancer's idle timeout (60 s on most).")),
  WEFT_API_DRAIN_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .meta(
      setting(
        'server',
        'After SIGTERM, `weft api` keeps serving this long with `GET /ready` at 503 `shutting_down` (a load balancer drains it), then closes; a second signal ends it at once.',
      ),
    ),
  WEFT_ACTION_TIMEOUT_MS: duration
    .default(60_000)
    .meta(
      setting(
        'server',
        'How long a sync-mode action call waits for its result before 504 `action_timeout` (the action keeps running); `X-Action-Timeout: <seconds>` (1–300) overrides it per call.',
      ),
    ),
  /**
   * The operator console's read-only sign-in (api/console/): whoever knows it may look at any
   * environment and change nothing. Unset, the console takes secret keys only.
   */
  WEFT_CONSOLE_PASSWORD: z
    .string()
    .min(12, 'at least 12 characters')
    .optional()
    .meta(
      setting(
        'server',
        'A password for read-only operators of the console (`/console`): they see every page of the environment they name and can change nothing.',
        {
          whenUnset: 'the console takes secret keys only',
        },
      ),
    ),
  /**
   * Rate limit of the app-facing API, per environment, shared by every API process: this many
   * requests per window (0 turns it off). 6,000 a minute is 100 a second on average.
   */
  WEFT_API_RATE_LIMIT: z.coerce
    .number()
    .int()
    .min(0)
    .default(6_000)
    .meta(setting('protection', 'Requests per window each environment may make to the API, across all API processes; `0` turns the limit off.')),
  WEFT_API_RATE_LIMIT_WINDOW_S: duration
    .default(60)
    .meta(setting('protection', "Length of that limit's window in seconds (windows are aligned to the clock).")),
  /**
   * Requests without a valid secret key (missing or wrong keys, the Connect page, OAuth
   * callbacks, unknown paths), and readiness probes in a budget of their own: this many per
   * window and client address, in each API process (0 turns it off). GET /health is not limited.
   */
  WEFT_PROVIDER_WEBHOOK_RATE_LIMIT: z.coerce
    .number()
    .int()
    .min(0)
    .default(60_000)
    .meta(
      setting(
        'protection',
        'Verified provider webhook deliveries each integration may send per minute, across all API processes (past it: 429 with `Retry-After`, which GitHub does not retry); `0` turns the limit off.',
      ),
    ),
  WEFT_API_CLIENT_RATE_LIMIT: z.coerce
    .number()
    .int()
    .min(0)
    .default(600)
    .meta(
      setting(
        'protection',
        'Requests without a valid secret key (missing or wrong keys, the Connect page, OAuth callbacks, docs, unknown paths) per window and client address, in each API process; `GET /ready` has a budget of its own of this size, `GET /health` none; `0` turns it off.',
      ),
    ),
  WEFT_API_CLIENT_RATE_LIMIT_WINDOW_S: duration
    .default(60)
    .meta(setting('protection', "That limit's window in seconds (a token bucket, refilled at the limit per window).")),
  /** Which proxies in front of the API may name the client (X-Forwarded-For, -Proto): see TrustProxy. Unset: none. */
  WEFT_TRUST_PROXY: trustProxy.meta(
    setting(
      'protection',
      "The proxies whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed. Set it behind a load balancer, or every client shares its address's rate limit. `true` (every hop) is refused: the client writes the first X-Forwarded-For entry.",
      { whenUnset: '`false`', values: '`false`, a number of proxy hops, or comma-separated addresses / CIDRs / `loopback`, `linklocal`, `uniquelocal`' },
    ),
  ),
  WEFT_SYNC_TASK_QUEUE: z
    .string()
    .default('weft-syncs')
    .meta(setting('worker', 'Temporal task queue of every workflow (sync and action runs) and of the sync activities.')),
  WEFT_ACTION_TASK_QUEUE: z
    .string()
    .default('weft-actions')
    .meta(setting('worker', "Temporal task queue of the action activities, apart so an action never waits behind a sync's work.")),
  WEFT_SYNC_HEARTBEAT_TIMEOUT_MS: duration
    .default(30_000)
    .meta(setting('worker', 'How long a sync activity may go without a heartbeat before Temporal retries it elsewhere.')),
  WEFT_MAX_INLINE_WAIT_MS: duration
    .default(10_000)
    .meta(setting('worker', 'Rate-limit waits shorter than this are slept inside the activity; longer ones become durable Temporal timers.')),
  WEFT_WORKER_HEALTH_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .optional()
    .meta(
      setting(
        'worker',
        "`weft worker`'s probes on this port: `GET /health` (liveness) and `GET /ready` (200 once its workers run; 503 while starting, draining or failed). `0`: any free port.",
        { whenUnset: 'no probes' },
      ),
    ),
  WEFT_WORKER_HEALTH_HOST: z.string().min(1).default('127.0.0.1').meta(setting('worker', 'The address of those probes (`0.0.0.0` in a container).')),
  /**
   * A folder of the operator's own integrations, one subfolder each in the shape of
   * `integrations/<name>/` (its index exports an IntegrationDefinition), registered next to
   * the pre-built ones (runtime/integration-loader.ts).
   */
  WEFT_INTEGRATIONS_DIR: z
    .string()
    .min(1)
    .optional()
    .meta(
      setting(
        'worker',
        'A folder of your own integrations, one subfolder each in the shape of `integrations/<name>/`, loaded next to the pre-built ones at start (API, worker and `weft dryrun`).',
      ),
    ),
  WEFT_WORKFLOW_BUNDLE: z
    .string()
    .optional()
    .meta(
      setting(
        'worker',
        'A prebuilt workflow bundle file (`npm run build` writes `dist/workflow-bundle.js`); without it the worker bundles `workflows/` at start.',
      ),
    ),
  WEFT_ALERT_WINDOW_MINUTES: duration
    .default(60)
    .meta(
      setting('worker', 'Chat alerts: one message per connection, sync and error code within this window; later failures are counted into the next message.'),
    ),
  /**
   * Where Temporal is: the `TEMPORAL_*` variables over a profile of Temporal's TOML file, read
   * by loadTemporalSettings (common/temporal-settings.ts) as Temporal's CLI and SDKs read them.
   * After loadConfig these two hold the resolved address and namespace; `temporal` has the rest.
   */
  TEMPORAL_ADDRESS: z
    .string()
    .min(1)
    .optional()
    .meta(
      setting(
        'temporal',
        'An existing Temporal frontend (`host:port`). `npm start` and the tests start a dev server only when neither this nor a profile names one.',
        {
          whenUnset: "the profile's address, else a dev server (`npm start`)",
        },
      ),
    ),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default').meta(setting('temporal', 'Temporal namespace.')),
  /**
   * First part of every workflow and schedule ID Weft makes (`weft-sync:…`). Two Weft
   * deployments sharing one Temporal namespace need different prefixes, or one's trigger
   * joins the other's run; the tests give each stack its own.
   */
  WEFT_TEMPORAL_ID_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'lowercase letters, digits and dashes, at most 32')
    .default('weft')
    .meta(
      setting(
        'temporal',
        "First part of every workflow and schedule ID (`weft-sync:…`, `weft-schedule:…`, `weft-action:…`). Deployments sharing one Temporal namespace need different prefixes, or a trigger in one joins the other's run.",
        { values: 'lowercase letters, digits and dashes, at most 32' },
      ),
    ),
  /**
   * Outages: how long a MongoDB operation waits for a reachable server, and a Temporal call
   * for an answer, before the API gives up with 503 database_unavailable /
   * orchestrator_unavailable (common/outage.ts).
   */
  WEFT_TEMPORAL_CALL_TIMEOUT_MS: duration
    .default(1_500)
    .meta(setting('temporal', 'Deadline of each Temporal call the API makes (retries included); past it the API answers 503 `orchestrator_unavailable`.')),
  WEFT_TEMPORAL_UI_URL: z
    .string()
    .url()
    .default('http://localhost:8233')
    .meta(setting('temporal', "The Temporal UI's base URL: chat alerts link to the failed run there.")),
  /**
   * The codec endpoint (api/routers/codec.ts): `POST /codec/decode` and `/codec/encode` of
   * Temporal's remote-codec protocol, for the Temporal UI and CLI to read the encrypted
   * payloads. Off unless true; on, it needs tokens or a JWKS file (or both).
   */
  WEFT_CODEC_ENDPOINT_ENABLED: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true')
    .meta(
      setting(
        'codec',
        "`true`: the API serves Temporal's remote-codec protocol at `POST /codec/decode` and `/codec/encode`, so the Temporal UI and CLI show the encrypted payloads; it then needs tokens or the JWT settings (or both). Off, those paths are 404.",
      ),
    ),
  WEFT_CODEC_ENDPOINT_TOKENS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().min(32, 'each token must be at least 32 characters (e.g. openssl rand -base64 32)')))
    .meta(
      setting('codec', 'Bearer tokens the codec endpoint accepts (`temporal … --codec-auth "Bearer <token>"`).', {
        whenUnset: 'none',
        values: 'comma-separated, each at least 32 characters (`openssl rand -base64 32`)',
      }),
    ),
  WEFT_CODEC_ENDPOINT_JWKS_FILE: z
    .string()
    .min(1)
    .optional()
    .meta(
      setting(
        'codec',
        "A JSON Web Key Set file (the identity provider's keys): the codec endpoint also accepts the Temporal UI's sign-in access tokens, JWTs signed by one of its keys. Set all three JWT settings or none.",
      ),
    ),
  WEFT_CODEC_ENDPOINT_JWT_ISSUER: z.string().min(1).optional().meta(setting('codec', 'The issuer (`iss`) those JWTs must name.')),
  WEFT_CODEC_ENDPOINT_JWT_AUDIENCE: z.string().min(1).optional().meta(setting('codec', 'The audience (`aud`) those JWTs must name.')),
  WEFT_CODEC_ENDPOINT_CORS_ORIGINS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((o) => o.trim().replace(/\/$/, ''))
        .filter(Boolean),
    )
    .pipe(z.array(z.string().refine(isOrigin, 'each must be an origin: scheme, host and port only (e.g. https://temporal.example.com)')))
    .meta(
      setting('codec', "Browser origins (the Temporal UI's, e.g. `http://localhost:8233`) allowed to call the codec endpoint.", {
        whenUnset: 'none',
        values: 'comma-separated origins (scheme, host and port)',
      }),
    ),
  /** The UI sends one event's payloads; Temporal caps a payload at 2 MB. */
  WEFT_CODEC_ENDPOINT_MAX_BODY_BYTES: duration
    .default(4 * 1024 * 1024)
    .meta(setting('codec', 'The largest request body the codec endpoint reads, in bytes (413 above).')),
  MONGODB_URI: z
    .string()
    .min(1)
    .optional()
    .meta(
      setting(
        'mongodb',
        "An existing MongoDB (7+) or FerretDB, taken as the driver takes it (TLS, replica sets, `mongodb+srv://`). Weft's defaults (`w=majority`, `retryWrites=false`, the timeout below) apply only to options the URI does not name.",
        { whenUnset: 'a FerretDB started by `npm start` and the tests' },
      ),
    ),
  MONGODB_DB: z.string().min(1).default('weft').meta(setting('mongodb', 'Database name.')),
  WEFT_MONGODB_SELECTION_TIMEOUT_MS: duration
    .default(1_500)
    .meta(setting('mongodb', 'How long a MongoDB operation looks for a reachable server before failing (the API then answers 503 `database_unavailable`).')),
  WEFT_REQUEST_LOG_TTL_DAYS: duration.default(14).meta(setting('mongodb', 'Days the log of third-party requests is kept (a TTL index).')),
  /** 32 bytes, base64: the AES-256-GCM key that encrypts stored credentials. */
  WEFT_ENCRYPTION_KEY: z
    .string()
    .optional()
    .meta(
      setting(
        'secrets',
        'AES-256-GCM key(s) for stored credentials and, through a key derived from each, for every Temporal payload. Several keys rotate: the first encrypts, all decrypt.',
        { whenUnset: 'generated into `WEFT_STATE_DIR/encryption-key` outside production', values: 'base64 of 32 bytes; several comma-separated, newest first' },
      ),
    ),
  WEFT_DEV_SECRET_KEY: z
    .string()
    .min(16)
    .optional()
    .meta(
      setting('secrets', 'Secret key of the `dev` environment; replaces the stored one if different.', {
        whenUnset: 'generated at the first start and printed once',
        values: 'at least 16 characters',
      }),
    ),
  WEFT_PROD_SECRET_KEY: z
    .string()
    .min(16)
    .optional()
    .meta(
      setting('secrets', 'The same for the `prod` environment.', {
        whenUnset: 'generated at the first start and printed once',
        values: 'at least 16 characters',
      }),
    ),
  WEFT_STATE_DIR: z
    .string()
    .default('.weft')
    .meta(
      setting(
        'local',
        "Where a dev start (`npm start`, `weft start`, `weft dev`) keeps its state: the generated encryption key, the Temporal dev server's database, FerretDB's data, and the lock that keeps a second start off them. Relative to the checkout. Two starts side by side each need their own, and their own ports.",
      ),
    ),
  /**
   * Destinations the egress policy lets through although they are loopback, private or
   * link-local, per purpose (egress/purposes.ts): comma-separated CIDRs, IP addresses or
   * host:port (egress/address-policy.ts). PROVIDERS: provider APIs and the proxy, token and
   * authorization endpoints, credential checks; plain http carries credentials only to a
   * host:port named here. WEBHOOKS: the app's webhook receivers and chat alert URLs. ASSETS:
   * images fetched once to be served by Weft (the Connect page's logo).
   */
  WEFT_EGRESS_ALLOW_PROVIDERS: allowList.meta(
    setting(
      'egress',
      'Provider calls (APIs, `/proxy`, token endpoints, credential checks) allowed although the address is loopback, private or link-local; plain http carries credentials only to a `host:port` named here. `npm start --sandbox` adds its simulators.',
      { whenUnset: 'none', values: 'comma-separated CIDRs, IP addresses or `host:port`' },
    ),
  ),
  WEFT_EGRESS_ALLOW_WEBHOOKS: allowList.meta(
    setting('egress', "The same for the app's webhook receivers and chat alert URLs.", {
      whenUnset: 'none',
      values: 'comma-separated CIDRs, IP addresses or `host:port`',
    }),
  ),
  WEFT_EGRESS_ALLOW_ASSETS: allowList.meta(
    setting('egress', "The same for images Weft fetches once to serve itself (the Connect page's logo, `branding.logo_url`): a logo on an internal server.", {
      whenUnset: 'none',
      values: 'comma-separated CIDRs, IP addresses or `host:port`',
    }),
  ),
  WEFT_EGRESS_ALLOW: allowList.meta(
    setting(
      'egress',
      'Deprecated: the single list of earlier versions, applied to provider calls and webhooks with a warning at start; move its entries to the two lists for those.',
      {
        whenUnset: 'none',
        values: 'comma-separated CIDRs, IP addresses or `host:port`',
      },
    ),
  ),
  WEFT_EGRESS_CONNECT_TIMEOUT_MS: duration.default(10_000).meta(setting('egress', 'Outbound calls: time to connect, DNS included.')),
  WEFT_EGRESS_HEADERS_TIMEOUT_MS: duration
    .default(30_000)
    .meta(setting('egress', 'Outbound calls: time from sending the request to the end of the response headers.')),
  WEFT_EGRESS_BODY_TIMEOUT_MS: duration.default(60_000).meta(setting('egress', 'Outbound calls: time from the headers to the end of the response body.')),
  /**
   * OpenTelemetry (app/telemetry.ts), by the standard variables: traces and metrics over
   * OTLP/HTTP, on only when an OTLP endpoint is set (and OTEL_SDK_DISABLED is not true).
   */
  OTEL_SDK_DISABLED: z
    .string()
    .default('false')
    .transform((s) => s.trim().toLowerCase() === 'true')
    .meta(setting('telemetry', '`true` turns OpenTelemetry off even when an endpoint is set.', { values: '`true` or anything else (false)' })),
  OTEL_SERVICE_NAME: z
    .string()
    .min(1)
    .optional()
    .meta(setting('telemetry', 'The service name on traces and metrics.', { whenUnset: '`weft-api` or `weft-worker` by process; `weft` under `npm start`' })),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .url()
    .optional()
    .meta(
      setting(
        'telemetry',
        'Base URL of the OTLP/HTTP collector (`/v1/traces` and `/v1/metrics` are appended). Telemetry is on only when this or a signal endpoint is set.',
      ),
    ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z
    .string()
    .url()
    .optional()
    .meta(setting('telemetry', 'The traces URL, used as it is (overrides the base endpoint for traces).')),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: z
    .string()
    .url()
    .optional()
    .meta(setting('telemetry', 'The metrics URL, used as it is (overrides the base endpoint for metrics).')),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol
    .default('http/protobuf')
    .meta(setting('telemetry', "OTLP/HTTP encoding of both signals unless a signal's own variable says otherwise; gRPC is not supported.")),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol
    .optional()
    .meta(setting('telemetry', 'Encoding of the traces.', { whenUnset: '`OTEL_EXPORTER_OTLP_PROTOCOL`' })),
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: otlpProtocol
    .optional()
    .meta(setting('telemetry', 'Encoding of the metrics.', { whenUnset: '`OTEL_EXPORTER_OTLP_PROTOCOL`' })),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).default('otlp').meta(setting('telemetry', '`none` turns traces off.')),
  OTEL_METRICS_EXPORTER: z.enum(['otlp', 'none']).default('otlp').meta(setting('telemetry', '`none` turns metrics off.')),
  OTEL_METRIC_EXPORT_INTERVAL: duration.default(60_000).meta(setting('telemetry', 'Milliseconds between metric exports.')),
});

/** `http(s)://host[:port]` and nothing more: what a browser sends as Origin. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

export type Config = z.infer<typeof configSchema> & {
  /** How to reach Temporal: address, namespace, TLS, API key (Temporal's environment configuration). */
  temporal: TemporalSettings;
};

const telemetrySchema = configSchema.pick({
  OTEL_SDK_DISABLED: true,
  OTEL_SERVICE_NAME: true,
  OTEL_EXPORTER_OTLP_ENDPOINT: true,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: true,
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: true,
  OTEL_EXPORTER_OTLP_PROTOCOL: true,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: true,
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: true,
  OTEL_TRACES_EXPORTER: true,
  OTEL_METRICS_EXPORTER: true,
  OTEL_METRIC_EXPORT_INTERVAL: true,
});

/** The OTEL_* settings alone, for app/telemetry-preload.ts (before the rest loads); null when one is invalid (loadConfig reports it). */
export function loadTelemetryConfig(env: NodeJS.ProcessEnv): z.infer<typeof telemetrySchema> | null {
  const parsed = telemetrySchema.safeParse(env);
  return parsed.success ? parsed.data : null;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(configIssuesMessage(parsed.error.issues, configSchema.shape), parsed.error.issues);
  let temporal: TemporalSettings;
  try {
    temporal = loadTemporalSettings(env);
  } catch (err) {
    // A profile the file lacks, a TOML syntax error: the SDK's message names the profile or the line, never a secret.
    throw new ConfigError(
      `Invalid configuration: the Temporal environment configuration (TEMPORAL_CONFIG_FILE / TEMPORAL_PROFILE): ${oneLine((err as Error).message)}`,
    );
  }
  return { ...parsed.data, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace, temporal };
}

/**
 * The issues of a schema's parse as one line: each variable, what is wrong with it, and the
 * fix (what it takes, and whether unsetting it is a way out). For loadConfig and the
 * infrastructure scripts' own variables alike.
 */
export function configIssuesMessage(issues: readonly z.core.$ZodIssue[], shape: Record<string, z.ZodType>): string {
  const parts = issues.map((issue) => {
    const name = String(issue.path[0] ?? '');
    const field = shape[name];
    const doc = field?.meta() as Partial<SettingDoc> | undefined;
    const message = oneLine(issue.message);
    const fixes = [
      doc?.values && !message.includes(doc.values) ? `set it to ${doc.values}` : 'correct it',
      field?.safeParse(undefined).success && 'unset it',
    ].filter(Boolean);
    return `${name || '(environment)'}: ${message} (${fixes.join(', or ')})`;
  });
  return `Invalid configuration: ${parts.join('; ')}. docs/configuration.md lists every setting.`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
