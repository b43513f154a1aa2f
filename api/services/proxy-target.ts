import { WeftError } from '../../common/errors';
import type { ResolvedProvider } from '../../runtime/http/provider-client';

/**
 * Where a proxy call may go: the integration's base URL (its `provider_overrides.base_url`,
 * else the provider's), the provider's own API host, and the hosts its definition lists in
 * `allowedHosts` (and their subdomains). The last two over https only; the integration's
 * own base URL with the scheme it was configured with.
 */
export function isProviderHost(provider: ResolvedProvider, url: URL): boolean {
  const configured = new URL(provider.baseUrl);
  if (url.host === configured.host) return url.protocol === configured.protocol;
  if (url.protocol !== 'https:') return false;
  const hosts = [new URL(provider.definition.baseUrl).host, ...(provider.definition.allowedHosts ?? [])];
  return hosts.some((h) => url.host === h || url.host.endsWith(`.${h}`));
}

/** Refused `Base-Url-Override`: a host the integration does not allow, or not a URL at all. */
class BaseUrlOverrideRefusedError extends WeftError {
  constructor(override: string, provider: ResolvedProvider) {
    const allowed = [
      new URL(provider.baseUrl).host,
      new URL(provider.definition.baseUrl).host,
      ...(provider.definition.allowedHosts ?? []).map((h) => `*.${h}`),
    ];
    super(
      'base_url_override_refused',
      `Base-Url-Override ${JSON.stringify(override.slice(0, 200))} is not a host of ${provider.definition.displayName} for this integration; allowed: ${[...new Set(allowed)].join(', ')}.`,
      400,
    );
  }
}

/**
 * The URL a proxy call goes to: the base (the override, once allowed, or the integration's
 * base URL) joined with the path the app called under /proxy, and its query as sent.
 */
export function proxyTargetUrl(provider: ResolvedProvider, rawPathAndQuery: string, baseUrlOverride: string | undefined): URL {
  let base: URL;
  if (baseUrlOverride) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(baseUrlOverride);
    } catch {
      parsed = null;
    }
    if (!parsed || !isProviderHost(provider, parsed) || parsed.username || parsed.password) throw new BaseUrlOverrideRefusedError(baseUrlOverride, provider);
    base = parsed;
  } else {
    base = new URL(provider.baseUrl);
  }
  const q = rawPathAndQuery.indexOf('?');
  const path = q < 0 ? rawPathAndQuery : rawPathAndQuery.slice(0, q);
  const query = q < 0 ? '' : rawPathAndQuery.slice(q);
  const target = new URL(`${base.pathname.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}${query}`, base.origin);
  // The path is the app's; the host never is (`/proxy/..%2f..` stays on the base's host).
  if (target.origin !== base.origin) throw new BaseUrlOverrideRefusedError(target.origin, provider);
  return target;
}
