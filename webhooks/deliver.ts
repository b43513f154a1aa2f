import { createHash, createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { CredentialCipher } from '../auth/credential-cipher';
import type { Logger } from '../common/logger';
import type { Egress } from '../egress/egress';
import { redactUrl, scrubSecrets } from '../egress/redact';
import type { Stores } from '../store/db';
import type { EnvironmentDoc } from '../store/environments';
import type { WebhookDeliveryDoc } from '../store/webhook-deliveries';
import { webhookSigningKeys } from './signing-key';

export type WebhookType = 'auth' | 'sync' | 'async_action' | 'forward' | 'alert';

/**
 * Where an event goes: `alert` events (chat alerts for operators) to the environment's
 * `alert_webhook_url`, every other type to the app (its override, or the environment's URLs).
 */
export function webhookTargets(env: EnvironmentDoc, type: WebhookType, urlOverride?: string | null): Array<{ target: TargetDelivery['target']; url: string }> {
  if (type === 'alert') return env.alert_webhook_url ? [{ target: 'alert', url: env.alert_webhook_url }] : [];
  if (urlOverride) return [{ target: 'override', url: urlOverride }];
  const targets: Array<{ target: TargetDelivery['target']; url: string }> = [];
  if (env.webhook_url) targets.push({ target: 'primary', url: env.webhook_url });
  if (env.secondary_webhook_url && env.secondary_webhook_url !== env.webhook_url) targets.push({ target: 'secondary', url: env.secondary_webhook_url });
  return targets;
}

/** What sending a webhook needs; the delivery activities hand in their own. */
export interface WebhookDeps {
  stores: Pick<Stores, 'environments' | 'webhookDeliveries'>;
  cipher: CredentialCipher;
  logger: Logger;
  /** Deliveries go out through the webhooks' egress: its allow-list, timeouts, redirects not followed. */
  egress: Pick<Egress<'webhooks'>, 'purpose' | 'request'>;
  /** Limit for the whole request, response body included. */
  timeoutMs?: number;
}

export interface WebhookEvent {
  environment: string;
  type: WebhookType;
  payload: Record<string, unknown>;
  /** The `webhook-id`: the outbox event's, the same on every attempt and on a replay. */
  id: string;
  /** Whether the environment's settings let this event out (e.g. `send_auth_webhooks`). */
  enabled?: (env: EnvironmentDoc) => boolean;
  /** The connection's `webhook_url_override`: the one URL the event goes to, instead of the environment's. */
  urlOverride?: string | null;
  /** Only these of the event's URLs (a retry of the ones that have not answered 2xx yet); all when absent. */
  targets?: ReadonlyArray<TargetDelivery['target']>;
  /** The number recorded with this try (the durable delivery's attempt count); 1 when absent. */
  attempt?: number;
}

export interface TargetDelivery {
  target: 'primary' | 'secondary' | 'override' | 'alert';
  url: string; // redacted
  delivered: boolean;
  status?: number;
  /** Why the try failed: `HTTP <status>` or the network error (an egress refusal included). */
  error?: string;
}

export interface DeliverySummary {
  /** The event's `webhook-id`. */
  id: string;
  /** True when every URL tried answered 2xx. */
  delivered: boolean;
  /** HTTP status from the first URL tried, when it answered. */
  status?: number;
  /** Why nothing was sent, when nothing was. */
  skipped?: 'no_webhook_url' | 'disabled' | 'unknown_environment' | 'failed';
  targets: TargetDelivery[];
}

const DEFAULT_TIMEOUT_MS = 10_000;

export function newWebhookId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/**
 * A webhook-id derived from what the event reports (e.g. a run id and a model), for events
 * queued by activities: a retry of the activity yields the same id, so the event is stored
 * and delivered once. Same form as `newWebhookId`.
 */
export function eventIdFor(...parts: string[]): string {
  return `msg_${createHash('sha256').update(parts.join('\u0000')).digest().subarray(0, 16).toString('base64url')}`;
}

/**
 * One try of an outbox event: POSTs it once to each of its URLs (the environment's, or the
 * connection's override), signed per Standard Webhooks, and records the try of each URL in
 * `webhook_deliveries`. Never throws: failures are logged and reported in the summary. The
 * retries are the `webhookDelivery` workflow's schedule (one call of this per attempt), so
 * every non-2xx and every network error is simply reported as undelivered.
 */
export async function deliverWebhook(deps: WebhookDeps, event: WebhookEvent): Promise<DeliverySummary> {
  const { id } = event;
  const log = deps.logger.child({ webhook_id: id, webhook_type: event.type, environment: event.environment });
  try {
    const env = await deps.stores.environments.get(event.environment);
    if (!env) {
      log.warn('webhook not sent: unknown environment');
      return { id, delivered: false, skipped: 'unknown_environment', targets: [] };
    }
    if (event.enabled && !event.enabled(env)) {
      log.debug('webhook not sent: disabled in environment settings');
      return { id, delivered: false, skipped: 'disabled', targets: [] };
    }
    const wanted = event.targets ? new Set(event.targets) : null;
    const targets = webhookTargets(env, event.type, event.urlOverride).filter((t) => !wanted || wanted.has(t.target));
    if (targets.length === 0) {
      log.debug('webhook not sent: no webhook URL configured');
      return { id, delivered: false, skipped: 'no_webhook_url', targets: [] };
    }

    // During a rotation's grace period both keys sign, so receivers holding either verify.
    const keys = await webhookSigningKeys(deps.stores.environments, deps.cipher, env);
    const secrets = [keys.current, keys.previous].filter((k): k is string => k !== null);
    const signers = secrets.map((k) => new Webhook(k));
    const body = JSON.stringify(event.payload);
    const sign = (at: Date) => signers.map((s) => s.sign(id, at, body)).join(' ');
    const signed: SignedEvent = {
      id,
      type: event.type,
      environment: event.environment,
      body,
      sign,
      nangoHmac: nangoHmac(keys.current, body),
      secrets,
      attempt: event.attempt ?? 1,
    };

    const results = await Promise.all(targets.map((t) => deliverToUrl(deps, log, signed, t)));
    const summary: DeliverySummary = { id, delivered: results.every((r) => r.delivered), targets: results };
    if (results[0].status !== undefined) summary.status = results[0].status;
    return summary;
  } catch (err) {
    log.error({ err: describeError(err) }, 'webhook delivery failed before sending');
    return { id, delivered: false, skipped: 'failed', targets: [] };
  }
}

/**
 * What Nango's SDKs check (`verifyIncomingWebhookRequest`): the hex HMAC-SHA256 of the raw
 * body, keyed with the signing key as the app holds it (the whole `whsec_…` string, which the
 * app hands the SDK as its webhook signing key). One key only: the current one; the
 * Standard Webhooks header carries the previous key's signature during a rotation's grace.
 */
function nangoHmac(signingKey: string, body: string): string {
  return createHmac('sha256', signingKey).update(body).digest('hex');
}

interface SignedEvent {
  id: string;
  type: WebhookType;
  environment: string;
  body: string;
  sign(at: Date): string;
  /** `X-Nango-Hmac-Sha256`, for apps that verify with Nango's SDKs. */
  nangoHmac: string;
  /** Scrubbed from what the receiver answers before it is recorded. */
  secrets: string[];
  attempt: number;
}

/** One POST to one URL, recorded. */
async function deliverToUrl(
  deps: WebhookDeps,
  log: Logger,
  event: SignedEvent,
  dest: { target: TargetDelivery['target']; url: string },
): Promise<TargetDelivery> {
  const shownUrl = redactUrl(dest.url);
  const started = Date.now();
  let status: number | undefined;
  let error: string | null = null;
  let excerpt: string | null = null;
  try {
    // A new timestamp (and so a new signature) per try; the id stays the event's.
    const at = new Date();
    const signature = event.sign(at);
    // Egress never follows a redirect: it would move a signed payload somewhere not configured.
    const res = await deps.egress.request(dest.url, {
      method: 'POST',
      signal: AbortSignal.timeout(deps.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Weft-Webhooks/1',
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
        'x-nango-hmac-sha256': event.nangoHmac,
      },
      body: event.body,
    });
    status = res.status;
    excerpt = responseExcerpt(res.body, [...event.secrets, ...signature.split(' '), event.nangoHmac]);
    if (status < 200 || status >= 300) error = `HTTP ${status}`;
  } catch (err) {
    // A network error, a timeout, or the egress policy refusing the address.
    error = describeError(err);
  }

  await recordAttempt(deps, log, {
    event_id: event.id,
    type: event.type,
    environment: event.environment,
    target: dest.target,
    url: shownUrl,
    attempt: event.attempt,
    status: status ?? null,
    error,
    duration_ms: Date.now() - started,
    created_at: new Date(),
    response_excerpt: excerpt,
  });

  const fields = { target: dest.target, url: shownUrl, attempt: event.attempt, status };
  if (error === null) {
    log.info(fields, 'webhook delivered');
    return { target: dest.target, url: shownUrl, delivered: true, status };
  }
  log.warn({ ...fields, error }, 'webhook attempt failed');
  return { target: dest.target, url: shownUrl, delivered: false, error, ...(status !== undefined ? { status } : {}) };
}

async function recordAttempt(deps: WebhookDeps, log: Logger, entry: WebhookDeliveryDoc): Promise<void> {
  try {
    await deps.stores.webhookDeliveries.record(entry);
  } catch (err) {
    // The record is for operators; failing to write it must not stop the delivery.
    log.warn({ err: describeError(err), attempt: entry.attempt }, 'could not record webhook attempt');
  }
}

const EXCERPT_CHARS = 200;
/** `"token": "…"`, `password=…` and the like in a receiver's answer. */
const SECRET_FIELD = /(["']?(?:[a-z_]*token|secret|password|api[_-]?key|authorization)["']?\s*[:=]\s*["']?)[^"'\s,&}]+/gi;

/**
 * The start of what the receiver answered, for operators: secrets Weft knows (each also without
 * its `whsec_` / `v1,` prefix) and token-like fields replaced. Scrubbed before it is cut, so a
 * secret at the cut is not left half there.
 */
function responseExcerpt(body: Buffer, secrets: string[]): string | null {
  if (body.length === 0) return null;
  const known = secrets.flatMap((s) => [s, s.replace(/^(whsec_|v1,)/, '')]);
  const text = scrubSecrets(body.subarray(0, EXCERPT_CHARS * 4).toString('utf8'), known);
  return text.replace(SECRET_FIELD, '$1REDACTED').slice(0, EXCERPT_CHARS);
}

/** A short description without stack or request details (which could carry the URL's secrets). */
function describeError(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  const head = e?.message ? `${e.name && e.name !== 'Error' ? `${e.name}: ` : ''}${e.message}` : String(err);
  const cause = e?.cause?.code ?? e?.cause?.message;
  return (cause ? `${head} (${cause})` : head).slice(0, 500);
}
