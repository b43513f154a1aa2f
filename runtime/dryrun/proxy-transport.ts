import { ProviderAuthError, ProviderHttpError, ProviderRedirectError } from '../errors';
import type { RecordedExchange } from '../mocks/fixture-files';
import type { HttpMethod, HttpResponse, ProviderTransport, QueryValue, RequestConfig } from '../types';
import { WeftRefusedError, WeftUnreachableError } from './errors';
import { parseResponseBody } from '../http/response-body';

export interface ProxyTransportOptions {
  /** The running Weft, e.g. http://localhost:3003. */
  weftHost: string;
  secretKey: string;
  connectionId: string;
  providerConfigKey: string;
  /** Extra attempts when the function does not say (the provider definition's `retries`, as the worker uses). */
  defaultRetries: number;
  /** Headers the worker's client sends that Weft's proxy does not add by itself (`accept: application/json`); the function's own win. */
  defaultHeaders?: Record<string, string>;
  /** Sees every call the provider answered, in call order, success or error (kept for `--save`). */
  onExchange?(exchange: RecordedExchange): void;
  /** Weft answered `rate_limited`: the call waits `waitMs` and is sent again. */
  onWait?(waitMs: number, reason: string): void;
  fetch?: typeof fetch;
}

/**
 * Codes Weft's own `/proxy` answers with when it refuses or fails a call itself. Any other
 * answer is the provider's, passed through as it came (a Graph error body also has
 * `error.code`, but in camelCase: `itemNotFound`).
 */
const WEFT_PROXY_CODES = new Set([
  'unauthorized',
  'unknown_connection',
  'unknown_provider_config',
  'invalid_headers',
  'invalid_content_length',
  'base_url_override_refused',
  'pre_authenticated_without_base_url',
  'rate_limited',
  'provider_auth_failed',
  'provider_unreachable',
  'provider_http_error',
  'egress_refused',
  'credentials_over_http_refused',
  'egress_timeout',
  'credentials_unreadable',
  'database_unavailable',
  'temporal_unavailable',
  'internal_error',
]);

const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
/** How often and how long a call waits when Weft answers `rate_limited` before the dry run gives up. */
const MAX_RATE_LIMIT_WAITS = 10;
const MAX_RATE_LIMIT_WAIT_MS = 120_000;

/**
 * The dry run's way to the provider: each call goes to the running Weft's `/proxy` with the
 * connection's ids, so the credentials (refreshed as needed), the rate limits and the request
 * log are the real ones, and the provider's answer is turned into what the worker's client
 * returns or throws (so integration code that catches a provider status behaves the same).
 */
export function createProxyTransport(opts: ProxyTransportOptions): ProviderTransport {
  const doFetch = opts.fetch ?? fetch;
  const host = opts.weftHost.replace(/\/+$/, '');

  async function send(url: string, init: RequestInit): Promise<{ res: Response; headers: Record<string, string>; data: unknown }> {
    let res: Response;
    try {
      res = await doFetch(url, init);
    } catch (err) {
      throw new WeftUnreachableError(host, causeOf(err));
    }
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return { res, headers: withoutWeftRateLimit(headers), data: parseResponseBody(await res.text(), headers['content-type']) };
  }

  return {
    async request<T>(config: RequestConfig): Promise<HttpResponse<T>> {
      const method: HttpMethod = config.method ?? 'GET';
      if (config.preAuthenticated && !/^https?:\/\//i.test(config.endpoint)) {
        throw new WeftRefusedError(
          'dryrun_pre_authenticated_relative',
          `${method} ${config.endpoint.split('?')[0]}: a pre-authenticated call needs the full URL it was given (an upload session's uploadUrl).`,
          400,
        );
      }
      const { path, baseUrlOverride } = proxyPath(config.endpoint, config.params);
      const headers: Record<string, string> = {
        authorization: `Bearer ${opts.secretKey}`,
        'connection-id': opts.connectionId,
        'provider-config-key': opts.providerConfigKey,
        retries: String(config.retries ?? opts.defaultRetries),
      };
      if (baseUrlOverride) headers['base-url-override'] = baseUrlOverride;
      // The URL carries its own authorization (Graph's upload session): Weft sends it without
      // the connection's credentials, still through its egress and request log.
      if (config.preAuthenticated) headers['weft-pre-authenticated'] = 'true';
      for (const [name, value] of Object.entries({ ...opts.defaultHeaders, ...config.headers })) headers[`weft-proxy-${name.toLowerCase()}`] = value;
      let body: string | Uint8Array | undefined;
      if (config.data instanceof Uint8Array) {
        body = config.data;
        headers['content-type'] = config.headers?.['content-type'] ?? 'application/octet-stream';
      } else if (config.data !== undefined) {
        body = typeof config.data === 'string' ? config.data : JSON.stringify(config.data);
        headers['content-type'] = headerOf(config.headers, 'content-type') ?? 'application/json';
      }

      let answer: { res: Response; headers: Record<string, string>; data: unknown };
      for (let waits = 0; ; waits += 1) {
        answer = await send(`${host}/proxy${path}`, { method, headers, body, redirect: 'manual' });
        const weftError = answer.res.status >= 400 ? weftErrorOf(answer.data) : null;
        if (!weftError) break;
        // Weft asks to wait (the provider's limit, shared with the syncs, or its own API limit):
        // a dry run is in the foreground, so it waits as the worker would, then asks again.
        const waitMs = Number(answer.headers['retry-after'] ?? 1) * 1000;
        if (weftError.code !== 'rate_limited' || waits >= MAX_RATE_LIMIT_WAITS || !(waitMs <= MAX_RATE_LIMIT_WAIT_MS)) {
          throw new WeftRefusedError(weftError.code, weftError.message, answer.res.status);
        }
        opts.onWait?.(waitMs, weftError.message);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
      }
      const { res, headers: responseHeaders, data } = answer;

      const response: HttpResponse<T> = { status: res.status, headers: responseHeaders, data: data as T };
      opts.onExchange?.({ request: { ...config, method }, response });
      const shown = config.endpoint.split('?')[0];
      if (REDIRECT_STATUS.has(res.status)) {
        throw new ProviderRedirectError(res.status, responseHeaders, method, shown, responseHeaders.location ?? '(no Location)');
      }
      if (res.status === 401) throw new ProviderAuthError(401, `The provider rejected the connection's credentials (HTTP 401 on ${method} ${shown})`);
      if (res.status >= 400) throw new ProviderHttpError(res.status, data, responseHeaders, method, shown);
      return response;
    },
  };
}

/**
 * The path under `/proxy` for a request: a relative endpoint as it is (Weft joins it to the
 * integration's base URL); a full URL (a next-page link) by its path, with its origin as
 * `Base-Url-Override`, which Weft allows only for the provider's own hosts.
 */
function proxyPath(endpoint: string, params: RequestConfig['params']): { path: string; baseUrlOverride?: string } {
  const absolute = /^https?:\/\//i.test(endpoint);
  const url = new URL(absolute ? endpoint : `http://placeholder/${endpoint.replace(/^\/+/, '')}`);
  for (const [key, value] of Object.entries(params ?? {})) appendParam(url.searchParams, key, value);
  const path = `${url.pathname}${url.search}`;
  return absolute ? { path, baseUrlOverride: url.origin } : { path };
}

function appendParam(search: URLSearchParams, key: string, value: QueryValue | undefined): void {
  if (value === undefined) return;
  if (Array.isArray(value)) for (const v of value) search.append(key, String(v));
  else search.set(key, String(value));
}

/**
 * The answer's headers without the ones Weft's API rate limit sets on every answer
 * (`RateLimit-Policy`, `RateLimit` and, unless the provider sent its own, the `X-RateLimit-*`
 * trio): the worker's client never sees them, and a saved mock must hold the provider's
 * headers only, not Weft's counter of the minute.
 */
function withoutWeftRateLimit(headers: Record<string, string>): Record<string, string> {
  const policy = /^"environment";q=(\d+);w=\d+$/.exec(headers['ratelimit-policy'] ?? '');
  const state = /^"environment";r=(\d+);t=\d+$/.exec(headers.ratelimit ?? '');
  if (!policy || !state) return headers;
  const out = { ...headers };
  delete out['ratelimit-policy'];
  delete out.ratelimit;
  if (out['x-ratelimit-limit'] === policy[1] && out['x-ratelimit-remaining'] === state[1]) {
    delete out['x-ratelimit-limit'];
    delete out['x-ratelimit-remaining'];
    delete out['x-ratelimit-reset'];
  }
  return out;
}

function headerOf(headers: Record<string, string> | undefined, name: string): string | undefined {
  return Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1];
}

function weftErrorOf(data: unknown): { code: string; message: string } | null {
  const error = (data as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') return null;
  return WEFT_PROXY_CODES.has(error.code) ? { code: error.code, message: error.message } : null;
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
}
