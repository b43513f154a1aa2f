import { Readable } from 'node:stream';
import { EgressRefusedError } from '../../egress/errors';
import { redactUrl, scrubSecrets } from '../../egress/redact';
import { ProviderUnreachableError, RateLimitedError } from '../errors';
import type { EgressStreamResponse } from '../../egress/egress';
import type { ProviderDefinition, RequestBudget } from '../types';
import { recordProviderAttempt } from './telemetry';
import { authorizeCall, type ProviderCallDeps } from './provider-call';

/** What forwarding needs of a provider client's parts: ProviderClient hands its own deps (the shared ones in provider-call.ts). */
export interface ForwardDeps extends ProviderCallDeps {
  provider: { definition: ProviderDefinition; budget: RequestBudget | null };
}

/** One request forwarded as it is (the proxy): the caller's method, URL, headers and body. */
export interface ForwardRequest {
  method: string;
  /** The full target URL; the caller has checked that it belongs to the provider. */
  url: string;
  /** Headers to send besides the credentials, which are added here (and win). */
  headers: Record<string, string>;
  /**
   * Bytes can be sent again (retries, the one retry after a refreshed credential); a stream
   * is sent once, so an attempt that fails with one is answered as it is.
   */
  body: Buffer | Readable | null;
  /** Extra attempts after a network error, a 5xx, a throttling answer or a `retryOn` status. */
  retries: number;
  retryOn: readonly number[];
  /** The URL carries its own authorization (an upload session): no credentials are added, none refreshed. */
  preAuthenticated?: boolean;
  /** Redirects of GET/HEAD followed to these URLs (at most 5); any other is handed back as it is. */
  followRedirect?(location: URL): boolean;
}

export interface ForwardResponse extends EgressStreamResponse {
  /** The secret values sent, for the caller to keep out of anything it writes. */
  secrets: string[];
}

const SERVER_ERRORS = new Set([500, 502, 503, 504]);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** Throttling answers are small; their text is read (for the provider's rule) and handed back. */
const MAX_THROTTLE_BODY = 64 * 1024;

/**
 * A request forwarded for the app with the session's credentials, budget and throttle state,
 * exactly as a sync's requests are made (provider-client.ts), but with both bodies streamed
 * and the provider's answer handed back as it is instead of parsed:
 * - the account's pause (Retry-After, lockout) and shared request budget are waited out
 *   first; a wait beyond the inline bound is RateLimitedError, never a request that would
 *   get the key locked out;
 * - a 401 gets the credentials refreshed (re-minted) once and the request repeated;
 * - `retries` more attempts on network errors, 5xx, throttling and `retryOn` statuses;
 * - every attempt is one request-log entry (its duration: until the response headers).
 */
export async function forwardRequest(deps: ForwardDeps, req: ForwardRequest): Promise<ForwardResponse> {
  const stream = deps.egress.stream?.bind(deps.egress);
  if (!stream) throw new Error('forwardRequest needs an egress that streams');
  const definition = deps.provider.definition;
  const replayable = req.body === null || Buffer.isBuffer(req.body);
  const origin = new URL(req.url).origin;
  let url = req.url;
  let method = req.method.toUpperCase();
  let body = req.body;
  let sentHeaders = req.headers;
  let retriesUsed = 0;
  let reauthorized = false;
  let redirects = 0;
  let attempt = 0;

  for (;;) {
    attempt += 1;
    const pause = deps.throttle.delayBeforeRequest(definition.throttle, deps.maxInlineWaitMs);
    if (pause > deps.maxInlineWaitMs) throw new RateLimitedError(pause, `${definition.displayName} asked to pause requests`);
    if (pause > 0) await deps.sleep(pause);

    const headers: Record<string, string> = { ...sentHeaders };
    // Credentials go to the provider's own origin only, not to wherever a redirect pointed
    // (Graph's download URLs are pre-authenticated and must not get the bearer token).
    const secrets = !req.preAuthenticated && new URL(url).origin === origin ? await authorizeCall(deps, url, headers) : [];
    const ticket = deps.budget ? await deps.budget.acquire() : { waitedMs: 0, release: async () => undefined };
    const started = Date.now();
    const log = (status: number | null, error: string | null, requestId: string | null = null) => {
      const redacted = redactUrl(url);
      recordProviderAttempt({
        provider: definition.name,
        operation: 'proxy',
        method,
        url: redacted,
        status,
        started,
        attempt,
        waitMs: ticket.waitedMs + pause,
        error,
      });
      deps.logRequest({
        method,
        url: redacted,
        status,
        durationMs: Date.now() - started,
        attempt,
        rateLimitWaitMs: ticket.waitedMs + pause,
        error,
        providerRequestId: requestId,
      });
    };

    let res: EgressStreamResponse;
    try {
      res = await stream(url, { method, headers, body: body ?? undefined, signal: deps.signal });
    } catch (err) {
      await ticket.release();
      const reason = scrubSecrets((err as Error).message, secrets);
      log(null, reason);
      if (err instanceof EgressRefusedError) throw err;
      if (deps.signal?.aborted) throw deps.signal.reason ?? err;
      if (replayable && retriesUsed < req.retries) {
        retriesUsed += 1;
        await deps.sleep(backoffMs(retriesUsed));
        continue;
      }
      throw new ProviderUnreachableError(method, redactUrl(url), reason);
    }
    await ticket.release();
    const status = res.status;
    const requestIdHeader = definition.requestIdHeader?.toLowerCase();
    log(status, status >= 400 ? `HTTP ${status}` : null, (requestIdHeader && res.headers[requestIdHeader]) || null);

    const rule = definition.throttle;
    let throttleText = '';
    if (rule?.statuses.includes(status)) {
      const { head, rest } = await readHead(res.body, MAX_THROTTLE_BODY);
      throttleText = head.toString('utf8');
      res = { ...res, body: Readable.from(joined(head, rest)) };
    }
    // A 401's budget headers are those of an unauthenticated caller (GitHub: 60 an hour, per
    // address), not the account's: read, they would slow the repeated request for nothing.
    const throttleWait = status === 401 ? null : deps.throttle.onResponse(rule, status, res.headers, throttleText, deps.provider.budget?.lockoutMs ?? 60_000);
    if (throttleWait !== null && deps.budget && rule?.kind === 'lockout') await deps.budget.blockFor(throttleWait);

    const again = (): boolean => {
      if (!replayable || retriesUsed >= req.retries) return false;
      if (throttleWait !== null) return throttleWait <= deps.maxInlineWaitMs;
      return SERVER_ERRORS.has(status) || req.retryOn.includes(status);
    };
    if (status === 401 && !reauthorized && replayable && secrets.length > 0 && deps.reauthorize) {
      let fresh: boolean;
      try {
        fresh = await deps.reauthorize();
      } catch (err) {
        res.body.destroy();
        throw err;
      }
      if (fresh) {
        res.body.resume();
        reauthorized = true;
        continue;
      }
    }
    if (again()) {
      res.body.resume();
      retriesUsed += 1;
      // A throttling answer's wait happens before the next attempt (delayBeforeRequest).
      if (throttleWait === null) await deps.sleep(backoffMs(retriesUsed));
      continue;
    }
    const location = REDIRECTS.has(status) && res.headers.location ? safeUrl(res.headers.location, url) : null;
    const bodyless = method === 'GET' || method === 'HEAD' || status === 303;
    if (location && bodyless && redirects < MAX_REDIRECTS && req.followRedirect?.(location)) {
      res.body.resume();
      redirects += 1;
      url = location.toString();
      if (status === 303 && method !== 'HEAD') method = 'GET';
      if ((method === 'GET' || method === 'HEAD') && body !== null) {
        // What described the dropped body must not go with the bodiless request.
        body = null;
        sentHeaders = Object.fromEntries(Object.entries(sentHeaders).filter(([name]) => !/^content-(length|type|encoding)$/i.test(name)));
      }
      continue;
    }
    return { ...res, secrets };
  }
}

function safeUrl(location: string, base: string): URL | null {
  try {
    const u = new URL(location, base);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u : null;
  } catch {
    return null;
  }
}

/** Up to `max` bytes of a body, and the rest of it still unread (null when it all fit). */
async function readHead(body: Readable, max: number): Promise<{ head: Buffer; rest: Readable | null }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false })) {
    const buf = Buffer.from(chunk as Uint8Array);
    chunks.push(buf);
    size += buf.length;
    if (size > max) return { head: Buffer.concat(chunks), rest: body };
  }
  return { head: Buffer.concat(chunks), rest: null };
}

async function* joined(head: Buffer, rest: Readable | null): AsyncGenerator<Buffer> {
  yield head;
  if (rest) for await (const chunk of rest) yield Buffer.from(chunk as Uint8Array);
}

function backoffMs(attempt: number): number {
  const base = Math.min(8_000, 250 * 2 ** (attempt - 1));
  return base / 2 + Math.random() * (base / 2);
}
