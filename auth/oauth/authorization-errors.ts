import type { AuthorizationErrorCodes } from '../../runtime/types';

/**
 * What an authorization failure means for the end user and the app, from the provider's
 * OAuth error and its numbered error codes where it has them (the definition's
 * `oauth.errorCodes`: Microsoft's AADSTS). Clients must branch on codes, never on the
 * description's text, which Microsoft changes without notice; the codes are read from `error_codes` or, on
 * redirects that carry none, from the description's `<prefix>nnnn` mentions.
 */
export interface AuthorizationFailure {
  /** Stable code for pages, webhooks and logs. */
  code: 'admin_consent_required' | 'access_denied' | 'invalid_state' | 'oauth_error';
  title: string;
  message: string;
  next: string;
}

export function describeAuthorizationFailure(
  input: { error: string; description?: string; codes?: number[] },
  rules: AuthorizationErrorCodes | undefined,
): AuthorizationFailure {
  const codes = new Set(input.codes ?? []);
  const prefix = rules?.prefix ?? '';
  if (rules) for (const m of (input.description ?? '').matchAll(new RegExp(`${escapeRegExp(rules.prefix)}(\\d+)`, 'g'))) codes.add(Number(m[1]));
  const adminConsent = [...codes].filter((c) => rules?.adminConsentRequired.codes.includes(c));
  if (rules && adminConsent.length > 0) {
    return {
      code: 'admin_consent_required',
      title: 'An administrator must approve this app',
      message: `Your organization requires an administrator to grant the permissions this app asks for (${adminConsent.map((c) => `${prefix}${c}`).join(', ')}). No connection was made.`,
      next: rules.adminConsentRequired.next,
    };
  }
  if (input.error === 'access_denied' || [...codes].some((c) => rules?.accessDenied?.includes(c))) {
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
    message: `The provider answered "${input.error}"${codes.size ? ` (${[...codes].map((c) => `${prefix}${c}`).join(', ')})` : ''}. No connection was made.`,
    next: 'Try again; if it keeps failing, contact the application.',
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
