import ipaddr from 'ipaddr.js';
import { z } from 'zod';
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

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3003),
  /** The address `weft api` listens on (npm start: always loopback). 0.0.0.0 behind a load balancer or in a container. */
  WEFT_API_HOST: z.string().min(1).default('127.0.0.1'),
  /** The public base URL of the API (used in connect links and status URLs). */
  WEFT_PUBLIC_URL: z.string().url().optional(),
  /**
   * Where Temporal is: the `TEMPORAL_*` variables over a profile of Temporal's TOML file, read
   * by loadTemporalSettings (common/temporal-settings.ts) as Temporal's CLI and SDKs read them.
   * After loadConfig these two hold the resolved address and namespace; `temporal` has the rest.
   */
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  MONGODB_URI: z.string().min(1).optional(),
  MONGODB_DB: z.string().min(1).default('weft'),
  /** 32 bytes, base64: the AES-256-GCM key that encrypts stored credentials. */
  WEFT_ENCRYPTION_KEY: z.string().optional(),
  WEFT_DEV_SECRET_KEY: z.string().min(16).optional(),
  WEFT_PROD_SECRET_KEY: z.string().min(16).optional(),
  WEFT_STATE_DIR: z.string().default('.weft'),
  WEFT_SYNC_TASK_QUEUE: z.string().default('weft-syncs'),
  WEFT_ACTION_TASK_QUEUE: z.string().default('weft-actions'),
  /**
   * First part of every workflow and schedule ID Weft makes (`weft-sync:…`). Two Weft
   * deployments sharing one Temporal namespace need different prefixes, or one's trigger
   * joins the other's run; the tests give each stack its own.
   */
  WEFT_TEMPORAL_ID_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'lowercase letters, digits and dashes, at most 32')
    .default('weft'),
  /** How long a sync activity may go without a heartbeat before Temporal retries it elsewhere. */
  WEFT_SYNC_HEARTBEAT_TIMEOUT_MS: duration.default(30_000),
  /** Waits shorter than this are slept inside the activity; longer ones become durable timers. */
  WEFT_MAX_INLINE_WAIT_MS: duration.default(10_000),
  WEFT_REQUEST_LOG_TTL_DAYS: duration.default(14),
  /**
   * Rate limit of the app-facing API, per environment, shared by every API process: this many
   * requests per window (0 turns it off). 6,000 a minute is 100 a second on average.
   */
  WEFT_API_RATE_LIMIT: z.coerce.number().int().min(0).default(6_000),
  WEFT_API_RATE_LIMIT_WINDOW_S: duration.default(60),
  /**
   * Requests without a valid secret key (missing or wrong keys, the Connect page, OAuth
   * callbacks, unknown paths), and readiness probes in a budget of their own: this many per
   * window and client address, in each API process (0 turns it off). GET /health is not limited.
   */
  WEFT_API_CLIENT_RATE_LIMIT: z.coerce.number().int().min(0).default(600),
  WEFT_API_CLIENT_RATE_LIMIT_WINDOW_S: duration.default(60),
  /** Which proxies in front of the API may name the client (X-Forwarded-For, -Proto): see TrustProxy. Unset: none. */
  WEFT_TRUST_PROXY: trustProxy,
  /**
   * A folder of the operator's own integrations, one subfolder each in the shape of
   * `integrations/<name>/` (its index exports an IntegrationDefinition), registered next to
   * the pre-built ones (runtime/integration-loader.ts).
   */
  WEFT_INTEGRATIONS_DIR: z.string().min(1).optional(),
  /** A prebuilt workflow bundle (file path); without it the worker bundles workflows/ at start. */
  WEFT_WORKFLOW_BUNDLE: z.string().optional(),
  /**
   * Outages: how long a MongoDB operation waits for a reachable server, and a Temporal call
   * for an answer, before the API gives up with 503 database_unavailable /
   * orchestrator_unavailable (api/outage.ts).
   */
  WEFT_MONGODB_SELECTION_TIMEOUT_MS: duration.default(1_500),
  WEFT_TEMPORAL_CALL_TIMEOUT_MS: duration.default(1_500),
  /** How long a sync-mode action call waits for its result before answering 504 action_timeout (X-Action-Timeout overrides it per call). */
  WEFT_ACTION_TIMEOUT_MS: duration.default(60_000),
  /** The API's HTTP server: how long a client may take to send its headers, its whole request, and how long an idle keep-alive connection stays open. */
  WEFT_HTTP_HEADERS_TIMEOUT_MS: duration.default(10_000),
  WEFT_HTTP_REQUEST_TIMEOUT_MS: duration.default(30_000),
  WEFT_HTTP_KEEP_ALIVE_TIMEOUT_MS: duration.default(5_000),
  /** After SIGTERM, `weft api` keeps serving this long with GET /ready at 503 shutting_down (a load balancer drains it), then closes; a second signal ends it. */
  WEFT_API_DRAIN_MS: z.coerce.number().int().min(0).default(0),
  /** `weft worker`'s probes (GET /health, GET /ready) on this port; off when unset, 0: any free port. */
  WEFT_WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  WEFT_WORKER_HEALTH_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Destinations the egress policy lets through although they are loopback, private or
   * link-local, per purpose (egress/purposes.ts): comma-separated CIDRs, IP addresses or
   * host:port (egress/address-policy.ts). PROVIDERS: provider APIs and the proxy, token and
   * authorization endpoints, credential checks; plain http carries credentials only to a
   * host:port named here. WEBHOOKS: the app's webhook receivers and chat alert URLs.
   */
  WEFT_EGRESS_ALLOW_PROVIDERS: allowList,
  WEFT_EGRESS_ALLOW_WEBHOOKS: allowList,
  /** The single list of earlier versions: still applies to both purposes, with a warning at start naming the two above. */
  WEFT_EGRESS_ALLOW: allowList,
  /** The Temporal UI's base URL: chat alerts link to the failed run there (e.g. http://localhost:8233). */
  WEFT_TEMPORAL_UI_URL: z.string().url().default('http://localhost:8233'),
  /**
   * The codec endpoint (api/routers/codec.ts): `POST /codec/decode` and `/codec/encode` of
   * Temporal's remote-codec protocol, for the Temporal UI and CLI to read the encrypted
   * payloads. Off unless true; on, it needs tokens or a JWKS file (or both).
   */
  WEFT_CODEC_ENDPOINT_ENABLED: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  /** Bearer tokens the codec endpoint accepts (`temporal --codec-auth "Bearer <token>"`), comma-separated, each at least 32 characters. */
  WEFT_CODEC_ENDPOINT_TOKENS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().min(32, 'each token must be at least 32 characters (e.g. openssl rand -base64 32)'))),
  /**
   * The Temporal UI's sign-in access tokens, accepted by the codec endpoint as JWTs signed by a
   * key of this JSON Web Key Set file (the identity provider's keys), with this issuer and
   * audience (all three or none).
   */
  WEFT_CODEC_ENDPOINT_JWKS_FILE: z.string().min(1).optional(),
  WEFT_CODEC_ENDPOINT_JWT_ISSUER: z.string().min(1).optional(),
  WEFT_CODEC_ENDPOINT_JWT_AUDIENCE: z.string().min(1).optional(),
  /** Browser origins (the Temporal UI's, e.g. http://localhost:8233) allowed to call the codec endpoint, comma-separated. */
  WEFT_CODEC_ENDPOINT_CORS_ORIGINS: z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((o) => o.trim().replace(/\/$/, ''))
        .filter(Boolean),
    )
    .pipe(z.array(z.string().refine(isOrigin, 'each must be an origin: scheme, host and port only (e.g. https://temporal.example.com)'))),
  /** The largest request body the codec endpoint reads, in bytes (the UI sends one event's payloads; Temporal caps a payload at 2 MB). */
  WEFT_CODEC_ENDPOINT_MAX_BODY_BYTES: duration.default(4 * 1024 * 1024),
  /** Chat alerts: one message per connection, sync and error code within this window; later failures are counted into it. */
  WEFT_ALERT_WINDOW_MINUTES: duration.default(60),
  /** Outbound calls: time to connect (DNS included), to the response headers, to the end of the body. */
  WEFT_EGRESS_CONNECT_TIMEOUT_MS: duration.default(10_000),
  WEFT_EGRESS_HEADERS_TIMEOUT_MS: duration.default(30_000),
  WEFT_EGRESS_BODY_TIMEOUT_MS: duration.default(60_000),
  /**
   * OpenTelemetry (app/telemetry.ts), by the standard variables: traces and metrics over
   * OTLP/HTTP, on only when an OTLP endpoint is set (and OTEL_SDK_DISABLED is not true).
   */
  OTEL_SDK_DISABLED: z
    .string()
    .default('false')
    .transform((s) => s.trim().toLowerCase() === 'true'),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: z.string().url().optional(),
  /** OTLP/HTTP encoding, for both signals unless a signal's own variable says otherwise. */
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.default('http/protobuf'),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: otlpProtocol.optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).default('otlp'),
  OTEL_METRICS_EXPORTER: z.enum(['otlp', 'none']).default('otlp'),
  OTEL_METRIC_EXPORT_INTERVAL: duration.default(60_000),
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
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  let temporal: TemporalSettings;
  try {
    temporal = loadTemporalSettings(env);
  } catch (err) {
    // A profile the file lacks, a TOML syntax error: the SDK's message names the profile or the line, never a secret.
    throw new Error(`Invalid configuration:\n  Temporal environment configuration (TEMPORAL_CONFIG_FILE / TEMPORAL_PROFILE): ${(err as Error).message}`);
  }
  return { ...parsed.data, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace, temporal };
}
