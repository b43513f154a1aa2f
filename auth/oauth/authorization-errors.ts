/**
 * What an authorization failure means for the end user and the app, from the provider's
 * OAuth error and (Microsoft) its AADSTS codes. Clients must branch on codes, never on
 * the description's text (providers.md §A5); the codes are read from `error_codes` or,
 * on redirects that carry none, from the description's `AADSTSnnnn:` prefix.
 */
export interface AuthorizationFailure {
  /** Stable code for pages, webhooks and logs. */
  code: 'admin_consent_required' | 'access_denied' | 'invalid_state' | 'oauth_error';
  title: string;
  message: string;
  next: string;
}

export function describeAuthorizationFailure(input: { error: string; description?: string; codes?: number[] }): AuthorizationFailure {
  const codes = new Set(input.codes ?? []);
  for (const m of (input.description ?? '').matchAll(/AADSTS(\d+)/g)) codes.add(Number(m[1]));
  if (codes.has(90094) || codes.has(65001) || codes.has(90095)) {
    return {
      code: 'admin_consent_required',
      title: 'An administrator must approve this app',
      message: `Your organization requires an administrator to grant the permissions this app asks for (${[...codes].filter((c) => [90094, 65001, 90095].includes(c)).map((c) => `AADSTS${c}`).join(', ')}). No connection was made.`,
      next: 'Ask an administrator of your Microsoft organization to grant consent for the organization (or pre-authorize these permissions for the app), then connect again.',
    };
  }
  if (input.error === 'access_denied' || codes.has(65004)) {
    return {
      code: 'access_denied',
      title: 'Access was not granted',
      message: 'The authorization was cancelled or consent was declined, so no connection was made.',
      next: 'Start again from the application if you want to connect.',
    };
  }
  return {
    code: 'oauth_error',
    title: 'The provider refused the authorization',
    message: `The provider answered "${input.error}"${codes.size ? ` (${[...codes].map((c) => `AADSTS${c}`).join(', ')})` : ''}. No connection was made.`,
    next: 'Try again; if it keeps failing, contact the application.',
  };
}
