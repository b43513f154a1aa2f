/**
 * Which of the provider's response headers a proxied answer carries: an allow-list, so that
 * whatever a provider adds tomorrow (a cookie under a new name, a debug header echoing the
 * request, an internal host name) stays with Weft unless it is named here. These are the
 * headers an app needs to use the answer as if it had called the provider itself: what
 * the body is, conditional requests, pagination and redirects, throttling, request ids to
 * quote to the provider's support, and API version and deprecation notices.
 *
 * Not passed, on purpose: caching headers (Cache-Control, Expires, Pragma, Age, Vary: the
 * answer carries the app's credentials, so Weft's `Cache-Control: no-store` and its own
 * Vary stay), cookies, per-hop headers, and the provider's security headers (Weft's apply).
 */
const RETURNED = new Set([
  // The body.
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-disposition',
  'content-range',
  'accept-ranges',
  // Conditional requests (GitHub does not count a 304 against the rate limit).
  'etag',
  'last-modified',
  // Pagination, created resources, redirects, long-running operations.
  'link',
  'location',
  'content-location',
  // Throttling.
  'retry-after',
  // Request ids.
  'request-id',
  'x-request-id',
  'client-request-id',
  'x-github-request-id',
  'x-ms-request-id',
  'x-ms-ags-diagnostic',
  'x-correlation-id',
  // Versions, deprecation, what was applied and which scopes a call needs.
  'deprecation',
  'sunset',
  'warning',
  'x-github-media-type',
  'x-github-api-version-selected',
  'odata-version',
  'preference-applied',
  'x-oauth-scopes',
  'x-accepted-oauth-scopes',
  'x-accepted-github-permissions',
  'www-authenticate',
]);

/** Rate-limit families: `x-ratelimit-*` (GitHub, Luma, most APIs), `x-rate-limit-*`, and the IETF draft's `ratelimit` / `ratelimit-*`. */
const RETURNED_FAMILIES = /^(?:x-ratelimit-|x-rate-limit-|ratelimit(?:$|-))/;

/**
 * The provider's headers that go back to the app (names lower-case, as the egress gives
 * them): allow-listed ones, minus any the provider's definition declares secret (its API
 * key header, its `secretHeaders`), which never leave whatever their name.
 */
export function returnedProviderHeaders(headers: Record<string, string>, secretHeaders: readonly string[]): Record<string, string> {
  const returned: Record<string, string> = {};
  for (const name in headers) {
    if ((RETURNED.has(name) || RETURNED_FAMILIES.test(name)) && !secretHeaders.some((h) => h.toLowerCase() === name)) returned[name] = headers[name];
  }
  return returned;
}

/**
 * What a proxied answer varies on besides the URL: the connection and integration named in
 * request headers. With `no-store` no cache should keep it; a cache that does anyway must
 * not hand one connection's answer to a request for another.
 */
export const PROXY_VARY = 'Connection-Id, Provider-Config-Key';
