import type { Request } from 'express';
import { BadRequestError } from '../../common/errors';
import type { ApiDeps } from '../deps';

/**
 * Where browsers and providers reach this API: WEFT_PUBLIC_URL when configured (behind a
 * proxy it must be), else the host the request came in on.
 */
export function publicBaseUrl(deps: ApiDeps, req: Request): string {
  if (deps.settings.publicUrl) return deps.settings.publicUrl;
  // The Host header is the client's to write: one that is no host name makes no URL.
  const base = `${req.protocol}://${req.get('host') ?? ''}`;
  if (!URL.canParse(base) || new URL(base).pathname !== '/') {
    throw new BadRequestError(
      'invalid_host',
      'The Host header is not a host name Weft can build its links from (set WEFT_PUBLIC_URL when Weft runs behind a proxy).',
    );
  }
  return base;
}

/** The OAuth redirect URI to register with providers. */
export function oauthCallbackUrl(deps: ApiDeps, req: Request): string {
  return new URL('/oauth/callback', publicBaseUrl(deps, req)).href;
}

/** The provider webhook intake of one integration: the URL to give the provider (a GitHub App's webhook URL). */
export function providerWebhookUrl(deps: ApiDeps, req: Request, integration: { environment: string; unique_key: string }): string {
  const path = `/webhooks/providers/${encodeURIComponent(integration.environment)}/${encodeURIComponent(integration.unique_key)}`;
  return new URL(path, publicBaseUrl(deps, req)).href;
}
