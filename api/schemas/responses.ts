import { z } from 'zod';
import { integrationCredentialsSchema, providerOverridesSchema } from './integrations';

/**
 * What the API answers, one schema per body: the OpenAPI document (api/openapi/) describes
 * every response with these, and tests/e2e/openapi-responses.test.ts checks real answers
 * against that document, so a router that drifts from its schema fails a test.
 */
const isoTime = z.iso.datetime({ offset: true });
const freeForm = z.record(z.string(), z.unknown());

/** One problem of a refused input (runtime/validation.ts `toValidationIssues`). */
const validationIssue = z.object({ path: z.string(), message: z.string(), code: z.string() });

/** Every error: `{ error: { code, message, ... } }` (api/middleware/errors.ts); some codes add fields (e.g. `errors`, `status`, `detail`). */
export const errorResponse = z.object({
  error: z.looseObject({
    /** Stable, snake_case: what a program branches on. */
    code: z.string(),
    message: z.string(),
    /** The invalid fields of an `invalid_body` / `invalid_query_params` / `invalid_headers` / `invalid_path_params`. */
    errors: z.array(validationIssue).optional(),
  }),
});

export const successResponse = z.object({ success: z.literal(true) });

/** `GET /health` (liveness): the process runs; it calls nothing. */
export const healthResponse = z.object({ status: z.literal('ok') });

/** `GET /ready` (readiness): MongoDB and Temporal reachable, and the process not shutting down. */
export const readinessResponse = z.object({
  status: z.enum(['ok', 'unavailable', 'shutting_down']),
  database: z.enum(['ok', 'unavailable']),
  orchestrator: z.enum(['ok', 'unavailable']),
});

const integrationView = z.object({
  unique_key: z.string(),
  provider: z.string(),
  display_name: z.string(),
  docs_url: z.string().nullable().describe('Where the Connect page sends end users who want help with this integration.'),
  provider_overrides: providerOverridesSchema,
  created_at: isoTime,
  updated_at: isoTime,
});
export type IntegrationView = z.infer<typeof integrationView>;

export const integrationListResponse = z.object({ data: z.array(integrationView) });
export const integrationResponse = z.object({ data: integrationView });
/** `GET /integrations/:key?include=credentials`: the client credentials as stored. */
export const integrationWithCredentialsResponse = z.object({
  data: integrationView.extend({
    credentials: integrationCredentialsSchema.optional(),
    webhook_url: z
      .string()
      .nullable()
      .optional()
      .describe('With `include=webhook`: the URL to give the provider for its webhooks (null: Weft takes in none from this provider).'),
  }),
});

const providerDeliveryView = z.object({
  id: z.string().describe('The delivery as Weft stored it.'),
  delivery_id: z.string().describe('The provider’s id of the delivery (GitHub: `X-GitHub-Delivery`).'),
  event: z.string(),
  status: z.enum(['pending', 'processed', 'unmatched']),
  route: z.string().nullable().describe('What the delivery named that attributes it (GitHub: `installation:<id>`).'),
  connection_ids: z.array(z.string()),
  forwarded: z.array(z.string()).describe('The `forward` webhook events it was sent to the app as.'),
  syncs: z.array(z.string()).describe('The syncs it concerned (`<connection_id>/<sync>`): run, or given the delivery by their onWebhook.'),
  received_at: isoTime,
  processed_at: isoTime.nullable(),
});
export type ProviderDeliveryView = z.infer<typeof providerDeliveryView>;
/** `GET /integrations/:key/webhook-deliveries` */
export const providerDeliveryListResponse = z.object({ data: z.array(providerDeliveryView) });

const statusError = z.object({
  type: z.enum(['auth', 'sync']),
  at: isoTime,
  connection_id: z.string(),
  sync: z.object({ name: z.string(), variant: z.string() }).nullable(),
  run_id: z.string().nullable(),
  code: z.string(),
  message: z.string(),
});

export const integrationStatusResponse = z.object({
  data: z.object({
    provider_config_key: z.string(),
    generated_at: isoTime,
    connections: z.object({ total: z.number().int(), by_auth_state: z.object({ ok: z.number().int(), needs_reauthorization: z.number().int() }) }),
    syncs: z.object({
      total: z.number().int(),
      by_last_state: z.object({ SUCCESS: z.number().int(), ERROR: z.number().int(), RUNNING: z.number().int().nullable(), NEVER_RUN: z.number().int() }),
      paused: z.number().int().nullable(),
      paused_checked: z.number().int(),
      paused_complete: z.boolean(),
      temporal_error: z.object({ code: z.string(), message: z.string() }).nullable(),
    }),
    latest_errors: z.array(statusError),
    last_hour: z.object({
      from: isoTime,
      to: isoTime,
      requests: z.number().int(),
      errors: z.number().int(),
      error_rate: z.number(),
      latency_ms: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
      rate_limit_waits: z.object({ count: z.number().int(), total_ms: z.number() }),
      rate_limited: z.number().int(),
      complete: z.boolean(),
    }),
  }),
});

const connectionListError = z.object({
  type: z.enum(['auth', 'sync']),
  log_id: z.string().nullable(),
  sync_name: z.string().optional(),
  variant: z.string().optional(),
  code: z.string(),
  message: z.string(),
});

export const connectionListResponse = z.object({
  connections: z.array(
    z.object({
      id: z.string(),
      connection_id: z.string(),
      provider: z.string(),
      provider_config_key: z.string(),
      created: isoTime,
      metadata: freeForm,
      tags: z.record(z.string(), z.string()),
      /** Read from the `end_user_*` and `organization_*` tags (api/services/end-user-tags.ts); null without `end_user_id`. */
      end_user: z
        .object({
          id: z.string(),
          email: z.string().nullable(),
          display_name: z.string().nullable(),
          organization: z.object({ id: z.string(), display_name: z.string().nullable() }).nullable(),
        })
        .nullable(),
      errors: z.array(connectionListError),
    }),
  ),
});

export const connectionView = z.object({
  id: z.string(),
  connection_id: z.string(),
  provider_config_key: z.string(),
  provider: z.string(),
  created_at: isoTime,
  updated_at: isoTime,
  metadata: freeForm,
  connection_config: freeForm,
  tags: z.record(z.string(), z.string()),
  webhook_url_override: z.string().nullable(),
  auth_status: z.enum(['ok', 'needs_reauthorization']),
});

/** `GET /connections/:id`: the connection with its (fresh) credentials; `raw` is the provider's token answer (OAuth), else `{}`. */
export const connectionWithCredentialsView = connectionView.extend({
  credentials: z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('OAUTH2'), access_token: z.string(), expires_at: isoTime.optional(), refresh_token: z.string().optional(), raw: freeForm }),
    z.looseObject({ type: z.literal('API_KEY'), apiKey: z.string(), raw: freeForm }),
    z.looseObject({ type: z.literal('APP'), app_id: z.string(), installation_id: z.string(), raw: freeForm }),
  ]),
});

const environmentView = z.object({
  name: z.string(),
  webhook_url: z.string().nullable(),
  secondary_webhook_url: z.string().nullable(),
  alert_webhook_url: z.string().nullable(),
  send_auth_webhooks: z.boolean(),
  send_sync_completion_always: z.boolean(),
  send_sync_error_webhooks: z.boolean(),
  webhook_signing_key_hint: z.string().nullable(),
  webhook_signing_key_rotated_at: isoTime.nullable(),
  previous_webhook_signing_key_valid_until: isoTime.nullable(),
  mcp_enabled: z.boolean().describe('Whether `/mcp` serves this environment’s connections (docs/mcp.md).'),
  branding: z
    .object({
      app_name: z.string().nullable(),
      logo_url: z.string().nullable().describe('Where the logo was fetched from, as given.'),
      logo: z
        .object({
          url: z.string().describe('Where Weft serves it (a path on Weft’s own origin).'),
          content_type: z.enum(['image/png', 'image/jpeg', 'image/webp']),
          size: z.number().int(),
          fetched_at: isoTime,
        })
        .nullable(),
      primary_color: z.string().nullable(),
      theme: z.enum(['light', 'dark', 'auto']),
    })
    .describe('How the Connect page presents the app.'),
  created_at: isoTime,
  updated_at: isoTime,
});
export type EnvironmentView = z.infer<typeof environmentView>;
export const environmentResponse = z.object({ data: environmentView });
export const signingKeyRotationResponse = z.object({
  data: z.object({ webhook_signing_key: z.string(), previous_key_valid_until: isoTime.nullable() }),
});

export const connectSessionResponse = z.object({ data: z.object({ token: z.string(), connect_link: z.url(), expires_at: isoTime }) });

const modelCounts = z.record(z.string(), z.looseObject({ added: z.number().int(), updated: z.number().int(), deleted: z.number().int() }));

const syncOperationView = z.object({
  id: z.string(),
  kind: z.enum(['trigger', 'start', 'pause']),
  syncs: z.array(z.object({ name: z.string(), variant: z.string() })),
  opts: z.object({ reset: z.boolean(), emptyCache: z.boolean() }),
  status: z.enum(['RUNNING', 'SUCCESS', 'ERROR']),
  total: z.number().int(),
  done: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
  errors: z.array(z.object({ connection_id: z.string(), code: z.string(), message: z.string() })),
  createdAt: isoTime,
  finishedAt: isoTime.nullable(),
});

export type SyncOperationView = z.infer<typeof syncOperationView>;

/** For every connection: the trigger is done when it answers. For the whole integration (no connection_id): 202 and the background operation. */
export const syncOperationResponse = z.object({ success: z.literal(true), operation: syncOperationView.optional() });

export const syncStatusResponse = z.object({
  syncs: z.array(
    z.object({
      id: z.string(),
      connection_id: z.string(),
      name: z.string(),
      variant: z.string(),
      status: z.enum(['RUNNING', 'PAUSED', 'SUCCESS', 'ERROR', 'STOPPED']),
      type: z.enum(['INCREMENTAL', 'FULL']),
      finishedAt: isoTime.nullable(),
      nextScheduledSyncAt: isoTime.nullable(),
      frequency: z.string().nullable(),
      latestResult: modelCounts.nullable(),
      latestExecutionStatus: z.enum(['RUNNING', 'SUCCESS', 'ERROR']).nullable(),
      latestError: z.looseObject({ code: z.string(), message: z.string(), detail: z.unknown().optional() }).nullable(),
      recordCount: z.record(z.string(), z.number().int()),
      /** The sync's own resume state (its shape is the sync's). */
      checkpoint: z.unknown(),
    }),
  ),
  operations: z.array(syncOperationView),
});

export const syncFrequencyResponse = z.object({ frequency: z.string() });
export const syncVariantResponse = z.object({ id: z.string(), name: z.string(), variant: z.string() });

/** What every record carries besides its model's fields. */
const recordMetadata = z.object({
  first_seen_at: isoTime,
  last_modified_at: isoTime,
  last_action: z.enum(['ADDED', 'UPDATED', 'DELETED']),
  deleted_at: isoTime.nullable(),
  /** Pass as `cursor` to read the changes after this record. */
  cursor: z.string(),
  pruned_at: isoTime.nullable(),
});
export const recordMetadataField = z.object({ _weft_metadata: recordMetadata });
/** A record whose payload `PATCH /records/prune` dropped: its id and metadata only. */
export const prunedRecord = z.object({ id: z.string(), _weft_metadata: recordMetadata.extend({ pruned_at: isoTime }) });

export const pruneRecordsResponse = z.object({ count: z.number().int(), has_more: z.boolean() });

export const asyncActionResponse = z.object({ id: z.string(), statusUrl: z.string() });

export const requestLogListResponse = z.object({
  logs: z.array(
    z.object({
      id: z.string(),
      at: isoTime,
      connection_id: z.string().nullable(),
      integration: z.string(),
      /** `sync:<name>`, `action:<name>`, `proxy`, `auth`. */
      operation: z.string(),
      run_id: z.string().nullable(),
      method: z.string(),
      url: z.string(),
      status: z.number().int().nullable(),
      duration_ms: z.number(),
      attempt: z.number().int(),
      rate_limit_wait_ms: z.number(),
      error: z.string().nullable(),
      provider_request_id: z.string().nullable(),
    }),
  ),
  next_cursor: z.string().nullable(),
});

const webhookEventView = z.object({
  id: z.string(),
  type: z.enum(['auth', 'sync', 'async_action', 'forward', 'alert']),
  status: z.enum(['pending', 'delivered', 'failed']),
  connection_id: z.string().nullable(),
  created_at: isoTime,
  settled_at: isoTime.nullable(),
  attempts: z.number().int(),
  last_error: z.string().nullable(),
  replays: z.number().int(),
  /** The body the app receives (see the document's `webhooks`). */
  payload: freeForm,
});

export const webhookEventListResponse = z.object({ events: z.array(webhookEventView), next_cursor: z.string().nullable() });
export const webhookEventResponse = webhookEventView.extend({
  delivery_attempts: z.array(
    z.object({
      at: isoTime,
      target: z.enum(['primary', 'secondary', 'override', 'alert']),
      url: z.string(),
      attempt: z.number().int(),
      replay: z.number().int(),
      status: z.number().int().nullable(),
      error: z.string().nullable(),
      duration_ms: z.number(),
      response_excerpt: z.string().nullable(),
    }),
  ),
});
export const webhookReplayResponse = z.object({ id: z.string(), status: z.literal('pending'), replay: z.number().int() });
export const webhookBulkReplayResponse = z.object({ replayed: z.number().int(), ids: z.array(z.string()), next_cursor: z.string().nullable() });

/** `POST /api-auth/api-key/:key`: the connection the key was stored in. */
export const apiKeyConnectResponse = z.object({ data: z.object({ connection_id: z.string(), provider_config_key: z.string(), provider: z.string() }) });
