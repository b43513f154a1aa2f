import { BadRequestError } from '../../common/errors';
import type { ScopeRules } from '../../runtime/types';

export interface ScopeDecision {
  scopes: string[];
  /** Something the end user or app should know (e.g. no refresh token will come). */
  warnings: string[];
}

/**
 * The scopes of an authorization request, with the provider's scope rules (its definition's
 * `oauth.scopeRules`) checked before anyone is redirected: an exclusive scope (Microsoft's
 * `.default`) alone, required scopes added with a warning.
 */
export function decideScopes(requested: string[], rules: ScopeRules | undefined): ScopeDecision {
  const scopes = [...new Set(requested.map((s) => s.trim()).filter(Boolean))];
  if (!rules) return { scopes, warnings: [] };

  if (rules.exclusive) {
    const { suffix, meaning } = rules.exclusive;
    const neutral = new Set(rules.neutral ?? []);
    const exclusive = scopes.filter((s) => s === suffix || s.endsWith(`/${suffix}`));
    const explicit = scopes.filter((s) => !neutral.has(s) && !exclusive.includes(s));
    if (exclusive.length > 0 && explicit.length > 0) {
      throw new BadRequestError(
        'invalid_scopes_default_mixed',
        `The ${suffix} scope cannot be combined with explicit scopes (${explicit.join(', ')}): use either ${suffix} alone (${meaning}) or explicit scopes only.`,
      );
    }
    if (exclusive.length > 1) {
      throw new BadRequestError('invalid_scopes_default_mixed', `Only one ${suffix} scope may be requested at a time (got ${exclusive.join(', ')}).`);
    }
  }
  const warnings: string[] = [];
  for (const { scope, warning } of [...(rules.required ?? [])].reverse()) {
    if (scopes.includes(scope)) continue;
    scopes.unshift(scope);
    warnings.unshift(warning);
  }
  return { scopes, warnings };
}

/** Whether `scope` is among `granted`, case-insensitively and with the rules' implicit prefix optional. */
export function grantsScope(granted: string[], scope: string, rules: ScopeRules | undefined): boolean {
  const prefix = rules?.implicitPrefix?.toLowerCase();
  const short = (s: string) => {
    const lower = s.toLowerCase();
    return prefix && lower.startsWith(prefix) ? lower.slice(prefix.length) : lower;
  };
  return granted.some((g) => short(g) === short(scope));
}
