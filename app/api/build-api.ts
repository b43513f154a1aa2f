import type { ApiDeps } from '../../api/deps';
import { codecAuthSettings } from '../../api/middleware/codec-auth';
import { startApiServer, type HttpTimeouts, type RunningApi } from '../../api/server';
import { WeftError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import type { Core } from '../core';
import { providerSessionOpener } from '../provider-session';
import { coreWebhookDelivery } from '../webhook-delivery';

/** Calls the API makes itself (verifying credentials) wait at most a few seconds inline. */
const API_MAX_INLINE_WAIT_MS = 5_000;

/** The API's dependencies from the core and its configuration (task queues, timeouts, rate limit, public URL). */
function apiDeps(core: Core, opts: { logger?: Logger } = {}): ApiDeps {
  const { config } = core;
  const logger = opts.logger ?? core.logger;
  return {
    stores: core.stores,
    cipher: core.cipher,
    registry: core.registry,
    temporal: core.temporal,
    logger,
    egress: core.egress,
    openProviderSession: providerSessionOpener({
      stores: core.stores,
      cipher: core.cipher,
      registry: core.registry,
      logger,
      maxInlineWaitMs: API_MAX_INLINE_WAIT_MS,
      egress: core.egress,
      startWebhookDelivery: coreWebhookDelivery(core),
      alertWindowMs: config.WEFT_ALERT_WINDOW_MINUTES * 60_000,
    }),
    settings: {
      temporalIdPrefix: config.WEFT_TEMPORAL_ID_PREFIX,
      syncTaskQueue: config.WEFT_SYNC_TASK_QUEUE,
      actionTaskQueue: config.WEFT_ACTION_TASK_QUEUE,
      heartbeatTimeoutMs: config.WEFT_SYNC_HEARTBEAT_TIMEOUT_MS,
      publicUrl: config.WEFT_PUBLIC_URL,
      apiRateLimit: { limit: config.WEFT_API_RATE_LIMIT, windowMs: config.WEFT_API_RATE_LIMIT_WINDOW_S * 1000 },
      providerWebhookRateLimit: { limit: config.WEFT_PROVIDER_WEBHOOK_RATE_LIMIT, windowMs: 60_000 },
      clientRateLimit: { limit: config.WEFT_API_CLIENT_RATE_LIMIT, windowMs: config.WEFT_API_CLIENT_RATE_LIMIT_WINDOW_S * 1000 },
      trustProxy: config.WEFT_TRUST_PROXY,
      actionTimeoutMs: config.WEFT_ACTION_TIMEOUT_MS,
      alertWindowMs: config.WEFT_ALERT_WINDOW_MINUTES * 60_000,
      console: { password: config.WEFT_CONSOLE_PASSWORD, temporalUiUrl: config.WEFT_TEMPORAL_UI_URL, temporalNamespace: config.TEMPORAL_NAMESPACE },
    },
    ...(config.WEFT_CODEC_ENDPOINT_ENABLED && {
      codecEndpoint: {
        codec: core.payloadCodec,
        auth: codecAuthSettings(config),
        corsOrigins: config.WEFT_CODEC_ENDPOINT_CORS_ORIGINS,
        maxBodyBytes: config.WEFT_CODEC_ENDPOINT_MAX_BODY_BYTES,
      },
    }),
  };
}

export interface StartApiOptions {
  /** Default: PORT (0: any free port). */
  port?: number;
  /** Default: WEFT_API_HOST. */
  host?: string;
  logger?: Logger;
  /** Replaces parts of the API's dependencies (a test's second API with its own counters). */
  alter?: (deps: ApiDeps) => ApiDeps;
}

/** The API's HTTP server on the core, with the configured request timeouts (WEFT_HTTP_*). */
export async function startApi(core: Core, opts: StartApiOptions = {}): Promise<RunningApi> {
  const { config } = core;
  const deps = apiDeps(core, { logger: opts.logger });
  const timeouts: HttpTimeouts = {
    headersTimeoutMs: config.WEFT_HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.WEFT_HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.WEFT_HTTP_KEEP_ALIVE_TIMEOUT_MS,
  };
  const port = opts.port ?? config.PORT;
  const host = opts.host ?? config.WEFT_API_HOST;
  try {
    return await startApiServer(opts.alter ? opts.alter(deps) : deps, port, host, timeouts);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new WeftError('api_port_busy', `Port ${port} on ${host}, needed for the API, is already in use. Set PORT=<port> (0: any free port).`);
    }
    throw err;
  }
}
