import type { EgressResponse } from '../../egress/egress';
import { EgressRefusedError } from '../../egress/errors';
import type { HttpMethod, HttpResponse, ProviderDefinition, ProviderTransport, QueryValue, RequestBudget, RequestConfig } from '../types';
import { ProviderAuthError, ProviderHttpError, ProviderRedirectError, ProviderUnreachableError, RateLimitedError } from '../errors';
import { redactUrl, scrubSecrets } from '../../egress/redact';
import { forwardRequest, type ForwardRequest, type ForwardResponse } from './provider-forward';
import { recordProviderAttempt, type ProviderAttempt } from './telemetry';

/** The provider as configured for one integration: definition plus per-integration overrides. */
export interface ResolvedProvider {
  definition: ProviderDefinition;
  baseUrl: string;
  budget: RequestBudget | null;
}

import { authorizeCall, type ProviderCallDeps, type RequestLogEntry } from './provider-call';
import { parseResponseBody } from './response-body';

export type { ProviderEgress } from './provider-call';
export type { RequestLogEntry };

export interface ProviderClientDeps extends ProviderCallDeps {
  provider: ResolvedProvider;
}

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const MAX_INLINE_THROTTLE_WAITS = 8;

/**
 * Every third-party request goes through here: credentials injected, the shared request
 * budget and the account's known limits respected, network errors and 5xx retried with
 * backoff, throttling answered per the provider's rule, and each attempt written to the
 * request log with secrets removed. Waits longer than `maxInlineWaitMs` end the call
 * with RateLimitedError, which the activity turns into a durable Temporal retry delay.
 */
export class ProviderClient implements ProviderTransport {
  constructor(private readonly deps: ProviderClientDeps) {}

  async request<T = unknown>(config: RequestConfig): Promise<HttpResponse<T>> {
    const method: HttpMethod = config.method ?? 'GET';
    const url = this.buildUrl(config.endpoint, config.params);
    const definition = this.deps.provider.definition;
    const retries = config.retries ?? definition.retries ?? 3;
    let serverErrorAttempts = 0;
    let throttleWaits = 0;
    let reauthorized = false;
    let attempt = 0;

    for (;;) {
      attempt += 1;
      const pause = this.deps.throttle.delayBeforeRequest(definition.throttle, this.deps.maxInlineWaitMs);
      if (pause > 0) await this.waitOrDefer(pause, `${definition.displayName} asked to pause requests`);

      const headers: Record<string, string> = {
        'user-agent': 'weft/0.1 (+self-hosted integration platform)',
        accept: 'application/json',
        ...definition.defaultHeaders,
        ...config.headers,
      };
      const secrets = config.preAuthenticated ? [] : await authorizeCall(this.deps, url, headers);
      let body: string | Uint8Array | undefined;
      if (config.data instanceof Uint8Array) {
        // File bytes (an upload) go as they are.
        body = config.data;
        headers['content-type'] ??= 'application/octet-stream';
      } else if (config.data !== undefined) {
        body = typeof config.data === 'string' ? config.data : JSON.stringify(config.data);
        headers['content-type'] ??= 'application/json';
      }

      const waited = this.deps.budget ? await this.deps.budget.acquire() : { waitedMs: 0, release: async () => undefined };
      const started = Date.now();
      let res: EgressResponse;
      try {
        res = await this.deps.egress.request(url, { method, headers, body, signal: this.deps.signal });
      } catch (err) {
        await waited.release();
        const reason = scrubSecrets((err as Error).message, secrets);
        this.log({ method, url, status: null, started, attempt, waitMs: waited.waitedMs + pause, error: reason, requestId: null });
        // The policy will refuse the next attempt too: say so now, with its own code.
        if (err instanceof EgressRefusedError) throw err;
        // Aborted by its caller (a worker shutting down, an attempt the orchestrator dropped):
        // not the provider's failure. The abort's own reason goes up, so the attempt ends as
        // cancelled and is retried, instead of failing the run as provider_unreachable.
        if (this.deps.signal?.aborted) throw this.deps.signal.reason ?? err;
        if (serverErrorAttempts < retries) {
          serverErrorAttempts += 1;
          await this.deps.sleep(backoffMs(serverErrorAttempts));
          continue;
        }
        throw new ProviderUnreachableError(method, redactUrl(url), reason);
      }
      const responseHeaders = res.headers;
      const text = res.body.toString('utf8');
      await waited.release();
      const status = res.status;
      this.log({
        method,
        url,
        status,
        started,
        attempt,
        waitMs: waited.waitedMs + pause,
        error: status >= 400 ? `HTTP ${status}` : null,
        requestId: this.requestIdOf(responseHeaders),
      });

      // A 401's budget headers are those of an unauthenticated caller (GitHub: 60 an hour, per
      // address), not the account's: read, they would slow the re-minted request for nothing.
      const throttleWait =
        status === 401
          ? null
          : this.deps.throttle.onResponse(definition.throttle, status, responseHeaders, text, this.deps.provider.budget?.lockoutMs ?? 60_000);
      if (throttleWait !== null) {
        if (this.deps.budget && definition.throttle?.kind === 'lockout') {
          // The provider locked the key: stop every run sharing it until the lockout ends.
          await this.deps.budget.blockFor(throttleWait);
        }
        const reason = `${definition.displayName} throttled ${method} ${redactUrl(url)} (HTTP ${status})`;
        if (throttleWait > this.deps.maxInlineWaitMs || throttleWaits >= MAX_INLINE_THROTTLE_WAITS) throw new RateLimitedError(throttleWait, reason);
        throttleWaits += 1;
        // The wait itself happens before the next attempt (delayBeforeRequest), so that
        // concurrent requests on the same account pause for the same span.
        continue;
      }
      if (RETRYABLE_STATUS.has(status) && serverErrorAttempts < retries) {
        serverErrorAttempts += 1;
        await this.deps.sleep(backoffMs(serverErrorAttempts));
        continue;
      }
      const data = parseResponseBody(text, responseHeaders['content-type']);
      if (status === 401) {
        if (!reauthorized && !config.preAuthenticated && this.deps.reauthorize && (await this.deps.reauthorize())) {
          reauthorized = true;
          continue;
        }
        throw new ProviderAuthError(status, `${definition.displayName} rejected the connection's credentials (HTTP 401)`);
      }
      if (REDIRECT_STATUS.has(status)) {
        // Not followed (egress policy): the error names where it pointed; nothing is sent there.
        const location = responseHeaders.location ? redactUrl(resolveLocation(responseHeaders.location, url)) : '(no Location)';
        throw new ProviderRedirectError(
          status,
          { ...this.upstreamHeaders(responseHeaders), ...(responseHeaders.location ? { location } : {}) },
          method,
          redactUrl(url),
          location,
        );
      }
      if (status >= 400) {
        throw new ProviderHttpError(status, scrubBody(data, secrets), this.upstreamHeaders(responseHeaders), method, redactUrl(url));
      }
      return { status, headers: responseHeaders, data: data as T };
    }
  }

  /** A request forwarded as it is, both bodies streamed (the proxy): see provider-forward.ts. */
  forward(req: ForwardRequest): Promise<ForwardResponse> {
    return forwardRequest(this.deps, req);
  }

  /** Sleeps a short wait here; a long one ends the call so Temporal can wait durably. */
  private async waitOrDefer(ms: number, reason: string): Promise<void> {
    if (ms > this.deps.maxInlineWaitMs) throw new RateLimitedError(ms, reason);
    await this.deps.sleep(ms);
  }

  buildUrl(endpoint: string, params?: Record<string, QueryValue | undefined>): string {
    const base = new URL(this.deps.provider.baseUrl);
    const url = /^https?:\/\//i.test(endpoint) ? new URL(endpoint) : new URL(joinPath(base.pathname, endpoint), base);
    if (!this.isAllowedHost(url, base)) {
      throw new ProviderHttpError(0, null, {}, 'REQUEST', `${url.origin} is not a host of ${this.deps.provider.definition.displayName}`);
    }
    for (const [key, value] of Object.entries(params ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v));
      else url.searchParams.set(key, String(value));
    }
    return url.toString();
  }

  private isAllowedHost(url: URL, base: URL): boolean {
    if (url.host === base.host) return true;
    return (this.deps.provider.definition.allowedHosts ?? []).some((h) => url.host === h || url.host.endsWith(`.${h}`));
  }

  private requestIdOf(headers: Record<string, string>): string | null {
    const header = this.deps.provider.definition.requestIdHeader?.toLowerCase();
    return (header && headers[header]) || null;
  }

  /** The response headers an error carries: the generic ones plus the provider's request id. */
  private upstreamHeaders(headers: Record<string, string>): Record<string, string> {
    const requestIdHeader = this.deps.provider.definition.requestIdHeader?.toLowerCase();
    return Object.fromEntries(Object.entries(headers).filter(([k]) => UPSTREAM_HEADERS.test(k) || k === requestIdHeader));
  }

  private log(e: Omit<ProviderAttempt, 'provider' | 'operation'> & { requestId: string | null }): void {
    const url = redactUrl(e.url);
    recordProviderAttempt({ ...e, url, provider: this.deps.provider.definition.name, operation: 'request' });
    this.deps.logRequest({
      method: e.method,
      url,
      status: e.status,
      durationMs: Date.now() - e.started,
      attempt: e.attempt,
      rateLimitWaitMs: e.waitMs,
      error: e.error,
      providerRequestId: e.requestId,
    });
  }
}

function backoffMs(attempt: number): number {
  const base = Math.min(8_000, 250 * 2 ** (attempt - 1));
  return base / 2 + Math.random() * (base / 2);
}

function resolveLocation(location: string, base: string): string {
  try {
    return new URL(location, base).toString();
  } catch {
    return location.slice(0, 200);
  }
}

function joinPath(basePath: string, endpoint: string): string {
  return `${basePath.replace(/\/+$/, '')}/${endpoint.replace(/^\/+/, '')}`;
}

const UPSTREAM_HEADERS = /^(content-type|retry-after|x-ratelimit-.*|link|location|www-authenticate|request-id|x-request-id)$/;

/** A provider may echo a credential in an error body; it must not reach logs or the app. */
function scrubBody(data: unknown, secrets: string[]): unknown {
  if (data === null || secrets.length === 0) return data;
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  const clean = scrubSecrets(text, secrets);
  if (clean === text) return data;
  return typeof data === 'string' ? clean : JSON.parse(clean);
}
