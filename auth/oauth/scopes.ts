import { BadRequestError } from '../../common/errors';

/** Scopes that add no resource permission (OIDC, refresh tokens). */
const OIDC_SCOPES = new Set(['openid', 'profile', 'email', 'offline_access']);

export interface ScopeDecision {
  scopes: string[];
  /** Something the end user or app should know (e.g. no refresh token will come). */
  warnings: string[];
}

/**
 * The scopes of an authorization request, with the Microsoft identity platform's rules
 * checked before anyone is redirected (spec, Authentication → File-storage, rules 1–2;
 * providers.md §A7): `.default` cannot be combined with explicit permission scopes, and
 * without `offline_access` no refresh token is issued, so it is added.
 */
export function decideScopes(requested: string[], rules: 'microsoft' | undefined): ScopeDecision {
  const scopes = [...new Set(requested.map((s) => s.trim()).filter(Boolean))];
  if (rules !== 'microsoft') return { scopes, warnings: [] };

  const defaults = scopes.filter((s) => s === '.default' || s.endsWith('/.default'));
  const explicit = scopes.filter((s) => !OIDC_SCOPES.has(s) && !defaults.includes(s));
  if (defaults.length > 0 && explicit.length > 0) {
    throw new BadRequestError(
      'invalid_scopes_default_mixed',
      `The .default scope cannot be combined with explicit scopes (${explicit.join(', ')}): use either .default alone (the permissions granted organization-wide) or explicit scopes only.`,
    );
  }
  if (defaults.length > 1) {
    throw new BadRequestError('invalid_scopes_default_mixed', `Only one .default scope may be requested at a time (got ${defaults.join(', ')}).`);
  }
  const warnings: string[] = [];
  if (!scopes.includes('offline_access')) {
    scopes.unshift('offline_access');
    warnings.push('offline_access was added: without it Microsoft issues no refresh token and the connection would stop working within the hour.');
  }
  return { scopes, warnings };
}

/** Bare Microsoft permission names are Graph's: `Sites.Read.All` ≡ `https://graph.microsoft.com/Sites.Read.All`. */
export function grantsScope(granted: string[], scope: string): boolean {
  const short = (s: string) => s.replace(/^https:\/\/graph\.microsoft\.com\//i, '').toLowerCase();
  return granted.some((g) => short(g) === short(scope));
}
