import { BadRequestError, WeftError } from '../common/errors';
import type { Credentials } from './credentials';
import { CredentialsOverHttpError, EgressRefusedError } from '../egress/errors';
import { ProviderAuthError, ProviderHttpError, RateLimitedError } from '../runtime/errors';
import type { ProviderClient, ResolvedProvider } from '../runtime/http/provider-client';

/** What the check needs of a provider session (its caller opens one: app/provider-session.ts). */
export interface CredentialCheckSession {
  provider: ResolvedProvider;
  /** The auth mode of the credentials being checked. */
  authMode: Credentials['type'];
  client: Pick<ProviderClient, 'request'>;
}

/**
 * Proves new credentials work before they are stored, with the provider's cheap "who am
 * I" call (Luma: GET /public/v1/user/get-self; GitHub App: minting the installation token
 * and listing one repository). Refused credentials → 400 `invalid_credentials`; the
 * provider being unreachable or failing → 424; the account's request budget used up for
 * longer than the API waits inline → 429 `provider_budget_busy` with when to retry (the key
 * may well be good: a busy budget says nothing about it). Nothing is stored either way.
 */
export async function verifyCredentials(session: CredentialCheckSession): Promise<void> {
  const { definition } = session.provider;
  // OAuth user tokens may need another proof than the provider's default mode (GitHub: /user).
  const verify = session.authMode === 'OAUTH2' && definition.oauth?.verify ? definition.oauth.verify : definition.verify;
  if (!verify) return;
  try {
    await session.client.request({
      method: verify.method,
      endpoint: verify.endpoint,
      params: 'params' in verify ? (verify.params as Record<string, string | number>) : undefined,
      retries: 1,
    });
  } catch (err) {
    if (err instanceof ProviderAuthError || (err instanceof ProviderHttpError && err.providerStatus === 403)) {
      throw new BadRequestError('invalid_credentials', `${definition.displayName} refused the credentials: ${err.message}`);
    }
    if (err instanceof RateLimitedError) throw new ProviderBudgetBusyError(definition.displayName, err.waitMs);
    // The egress policy's own errors say which host, address and rule (or why not over http), and how to allow it.
    if (err instanceof EgressRefusedError || err instanceof CredentialsOverHttpError) throw err;
    if (err instanceof WeftError) {
      throw new WeftError('credentials_verification_failed', `Could not verify the credentials with ${definition.displayName}: ${err.message}`, 424);
    }
    throw err;
  }
}

/**
 * The check could not be made yet: the provider account's request budget (shared with every
 * connection using the same key or installation) is used up, or the provider asked to pause.
 * `waitMs` becomes the response's `Retry-After`.
 */
class ProviderBudgetBusyError extends WeftError {
  constructor(
    provider: string,
    readonly waitMs: number,
  ) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    super(
      'provider_budget_busy',
      `The credentials could not be checked yet: the request budget of this ${provider} account is used up for the next ${seconds} s. Nothing was stored; retry after Retry-After.`,
      429,
      undefined,
      { retryable: true },
    );
  }
}
