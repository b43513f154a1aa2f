import type { Client } from '@temporalio/client';
import type { TrustProxy } from '../common/config';
import type { Logger } from '../common/logger';
import type { Stores } from '../store/db';
import type { CredentialCipher } from '../auth/credential-cipher';
import type { IntegrationRegistry } from '../runtime/registry';
import type { Egresses } from '../egress/egress';
import type { OpenProviderSession } from '../activities/provider-session';
import type { CodecEndpoint } from './routers/codec';

/**
 * Where an API process is in its life, shared with whoever stops it (app/api/main.ts): once a
 * stop signal came, `shuttingDown` is true and readiness (`GET /ready`) answers 503
 * `shutting_down` while the process still serves, so a load balancer takes it out of rotation
 * before the port closes.
 */
export interface ApiLifecycle {
  shuttingDown: boolean;
}

/** Everything the API needs, handed in by whoever starts it (npm start, tests, `weft api`). */
export interface ApiDeps {
  stores: Stores;
  cipher: CredentialCipher;
  registry: IntegrationRegistry;
  temporal: Client;
  logger: Logger;
  /** Every outbound call the API makes (provider checks, token endpoints, webhooks); also checks registered URLs. */
  egress: Egresses;
  /** Calls to a connection's provider (verifying credentials, refreshing them); built by app/. */
  openProviderSession: OpenProviderSession;
  /** Set by a process that drains before it stops (`weft api`): readiness then answers 503 shutting_down. */
  lifecycle?: ApiLifecycle;
  /** The codec endpoint (`/codec/decode`, `/codec/encode`), when WEFT_CODEC_ENDPOINT_ENABLED; absent, those paths are 404. */
  codecEndpoint?: CodecEndpoint;
  settings: {
    /** WEFT_TEMPORAL_ID_PREFIX: the first part of every workflow and schedule ID. */
    temporalIdPrefix: string;
    syncTaskQueue: string;
    actionTaskQueue: string;
    heartbeatTimeoutMs: number;
    /** WEFT_PUBLIC_URL: the API's public base URL (connect links, OAuth redirect URI). */
    publicUrl?: string;
    /** WEFT_API_RATE_LIMIT per WEFT_API_RATE_LIMIT_WINDOW_S: requests per window and environment (limit 0: off). */
    apiRateLimit: { limit: number; windowMs: number };
    /** WEFT_PROVIDER_WEBHOOK_RATE_LIMIT per minute: verified provider deliveries per integration (absent or limit 0: off). */
    providerWebhookRateLimit?: { limit: number; windowMs: number };
    /** WEFT_API_CLIENT_RATE_LIMIT per WEFT_API_CLIENT_RATE_LIMIT_WINDOW_S: requests without a valid key per client address (absent or limit 0: off). */
    clientRateLimit?: { limit: number; windowMs: number };
    /** WEFT_TRUST_PROXY, as Express's `trust proxy` takes it (absent: false, req.ip is the peer). */
    trustProxy?: TrustProxy;
    /** WEFT_ACTION_TIMEOUT_MS: how long a sync-mode action call waits before 504 action_timeout (default 60 s). */
    actionTimeoutMs?: number;
    /** WEFT_ALERT_WINDOW_MINUTES in ms: a connection's re-authorization alerts within it are one chat message. */
    alertWindowMs?: number;
    /** The operator console (`/console`). */
    console?: {
      /** WEFT_CONSOLE_PASSWORD: read-only sign-in; absent, only secret keys sign in. */
      password?: string;
      /** WEFT_TEMPORAL_UI_URL and the namespace: each run links to its history there. */
      temporalUiUrl: string;
      temporalNamespace: string;
    };
  };
}
