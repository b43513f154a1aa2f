import type { Request } from 'express';
import type { ApiDeps } from '../deps';

/**
 * Where browsers and providers reach this API: WEFT_PUBLIC_URL when configured (behind a
 * proxy it must be), else the host the request came in on.
 */
export function publicBaseUrl(deps: ApiDeps, req: Request): string {
  return deps.settings.publicUrl ?? `${req.protocol}://${req.get('host')}`;
}

/** The OAuth redirect URI to register with providers. */
export function oauthCallbackUrl(deps: ApiDeps, req: Request): string {
  return new URL('/oauth/callback', publicBaseUrl(deps, req)).href;
}
