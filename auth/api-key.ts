import { ProviderClient, type ResolvedProvider } from '../runtime/http/provider-client';
import { authorizeRequest } from '../runtime/http/provider-access';
import { ProviderAuthError, ProviderHttpError } from '../runtime/errors';
import { BadRequestError, WeftError } from '../common/errors';
import type { RequestLogEntry } from '../runtime/http/provider-client';
import type { RequestBudgetGate } from '../runtime/http/request-budget';

/**
 * Proves an API key works before it is stored, with the provider's cheap "who am I"
 * call (Luma: GET /public/v1/user/get-self). 401/403 → the key is refused.
 */
export async function verifyApiKey(provider: ResolvedProvider, apiKey: string, opts: { logRequest: (e: RequestLogEntry) => void; budget: RequestBudgetGate | null }): Promise<void> {
  const verify = provider.definition.apiKey?.verify;
  if (!verify) return;
  const client = new ProviderClient({
    provider,
    authorize: (headers) => authorizeRequest(provider, { type: 'API_KEY', apiKey }, headers),
    budget: opts.budget,
    logRequest: opts.logRequest,
    maxInlineWaitMs: 5_000,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  });
  try {
    await client.request({ method: verify.method, endpoint: verify.endpoint, retries: 1 });
  } catch (err) {
    if (err instanceof ProviderAuthError || (err instanceof ProviderHttpError && err.providerStatus === 403)) {
      throw new BadRequestError('invalid_credentials', `${provider.definition.displayName} refused the API key.`);
    }
    if (err instanceof WeftError) {
      throw new WeftError('credentials_verification_failed', `Could not verify the API key with ${provider.definition.displayName}: ${err.message}`, 424);
    }
    throw err;
  }
}
