import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import { savedRequestHeaders } from '../../common/secrets';
import type { RequestConfig } from '../types';
import { isSecretQueryParam, redactDeep, redactQueryValue, redactSecretsInText } from './redaction';

/**
 * What makes two provider requests "the same" for saved mocks. The same function computes it when `--save` writes a mock and when a test's
 * mock looks one up, so a request matches its recording exactly when nothing that reaches
 * the provider differs, and nothing secret or platform-specific takes part.
 */
export interface RequestIdentity {
  method: string;
  /** As sent to the provider (percent-encoded), without host or query. */
  path: string;
  /** Sorted `[key, value]` pairs: the endpoint's own query and `params`. */
  query: Array<[string, string]>;
  /** Lower-cased, sorted: only the headers that change an answer and carry no secret (common/secrets' allow-list). */
  headers: Array<[string, string]>;
  /** Canonical JSON of the body, `sha256:<hex>` for a long or binary body, null without one. */
  body: string | null;
}

export interface IdentityOptions {
  /** The provider definition's `baseUrl` (its path prefix is part of every relative endpoint's path). */
  providerBaseUrl: string;
  /** Lower-case names of headers that carry a secret (the registry's `secretHeaders()`). */
  secretHeaders?: string[];
  /** Literal secret values: replaced by `REDACTED` before anything is hashed or written. */
  secrets?: string[];
}

/** A body longer than this (in canonical JSON) is identified by its SHA-256. */
const MAX_INLINE_BODY = 1_000;

export function requestIdentity(request: RequestConfig, options: IdentityOptions): RequestIdentity {
  const secrets = options.secrets ?? [];
  const url = targetUrl(request, options.providerBaseUrl);
  const query = [...url.searchParams.entries()].map(([k, v]) => [k, v] as [string, string]);
  // An allow-list (common/secrets): credentials, transport and Weft's proxy controls never take part.
  const headers = savedRequestHeaders(request.headers ?? {}, options.secretHeaders ?? []);
  return {
    method: (request.method ?? 'GET').toUpperCase(),
    path: redactSecretsInText(url.pathname, secrets),
    query: sortPairs(
      query.map(([k, v]) => {
        const scrubbed = redactSecretsInText(v, secrets);
        return [k, isSecretQueryParam(k) ? redactQueryValue(scrubbed) : scrubbed];
      }),
    ),
    headers: sortPairs(headers.map(([k, v]) => [k, redactSecretsInText(v, secrets)])),
    body: identityBody(request.data, secrets),
  };
}

/** First 12 hex digits of SHA-256 over the identity's canonical JSON. */
export function identityHash(identity: RequestIdentity): string {
  return sha256Hex(stringify(identity) ?? 'null').slice(0, 12);
}

/** The path lower-cased, runs outside `[a-z0-9]` as one `-`, trimmed, at most 80 characters. */
export function pathSlug(path: string): string {
  const slug = path
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || 'root';
}

/** `<METHOD>-<path-slug>-<hash>.json`, e.g. `GET-v1-0-me-drives-3f9a1c0b2d4e.json`. */
export function mockFileName(identity: RequestIdentity): string {
  return `${identity.method}-${pathSlug(identity.path)}-${identityHash(identity)}.json`;
}

/** `METHOD /path` as a person reads it in an error. */
export function describeIdentity(identity: RequestIdentity): string {
  const query = identity.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  return `${identity.method} ${identity.path}${query ? `?${query}` : ''}`;
}

/**
 * The URL the provider client would call (runtime/http/provider-client.ts `buildUrl`):
 * a relative endpoint joins the base URL's path, a full URL is taken as it is, `params`
 * are added to the endpoint's own query (a non-array param replaces the same key).
 */
function targetUrl(request: Pick<RequestConfig, 'endpoint' | 'params'>, providerBaseUrl: string): URL {
  const base = new URL(providerBaseUrl);
  const url = /^https?:\/\//i.test(request.endpoint)
    ? new URL(request.endpoint)
    : new URL(`${base.pathname.replace(/\/+$/, '')}/${request.endpoint.replace(/^\/+/, '')}`, base);
  for (const [key, value] of Object.entries(request.params ?? {})) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v));
    else url.searchParams.set(key, String(value));
  }
  return url;
}

function identityBody(data: unknown, secrets: string[]): string | null {
  if (data === undefined || data === null) return null;
  if (Buffer.isBuffer(data) || data instanceof Uint8Array) return `sha256:${sha256Hex(data)}`;
  const canonical = stringify(redactDeep(data, secrets)) ?? 'null';
  return canonical.length > MAX_INLINE_BODY ? `sha256:${sha256Hex(canonical)}` : canonical;
}

function sortPairs(pairs: Array<[string, string]>): Array<[string, string]> {
  return [...pairs].sort(([ak, av], [bk, bv]) => (ak === bk ? compare(av, bv) : compare(ak, bk)));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
