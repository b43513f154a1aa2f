import { createHash } from 'node:crypto';
import type { Credentials } from '../../auth/credentials';
import type { RateBudgetStore } from '../../store/rate-budgets';
import { createSharedRequestBudget, type RequestBudgetGate } from './request-budget';
import type { ResolvedProvider } from './provider-client';
import type { IntegrationRegistry } from '../registry';
import type { IntegrationDoc } from '../../store/integrations';
import { WeftError } from '../../common/errors';

/** The provider definition with the integration's overrides applied (base URL, budget). */
export function resolveProvider(registry: IntegrationRegistry, integration: IntegrationDoc): ResolvedProvider {
  const def = registry.get(integration.provider);
  if (!def) throw new WeftError('unknown_provider', `No pre-built integration for provider "${integration.provider}".`, 400);
  const overrides = integration.provider_overrides ?? {};
  const budget = overrides.rate_limit
    ? { requests: overrides.rate_limit.requests, windowMs: overrides.rate_limit.window_ms, lockoutMs: overrides.rate_limit.lockout_ms ?? def.provider.requestBudget?.lockoutMs }
    : (def.provider.requestBudget ?? null);
  return { definition: def.provider, baseUrl: overrides.base_url ?? def.provider.baseUrl, budget };
}

/** Puts the connection's credentials on a request, per the provider's auth mode. */
export async function authorizeRequest(provider: ResolvedProvider, credentials: Credentials, headers: Record<string, string>): Promise<string[]> {
  switch (credentials.type) {
    case 'API_KEY': {
      const header = provider.definition.apiKey?.header;
      if (header) headers[header] = credentials.apiKey;
      else headers.authorization = `Bearer ${credentials.apiKey}`;
      return [credentials.apiKey];
    }
    case 'OAUTH2':
      headers.authorization = `Bearer ${credentials.access_token}`;
      return [credentials.access_token];
    case 'APP':
      throw new WeftError('auth_mode_not_supported', 'GitHub App installation tokens are not minted yet.', 501);
  }
}

/**
 * Providers count requests per account key, so every run (and the key check at connect
 * time) that uses the same key shares one budget. Only a hash of the secret is used.
 */
export function sharedBudgetFor(
  provider: ResolvedProvider,
  credentials: Credentials,
  opts: { store: RateBudgetStore; maxInlineWaitMs: number; sleep(ms: number): Promise<void> },
): RequestBudgetGate | null {
  if (!provider.budget) return null;
  const secret = credentials.type === 'API_KEY' ? credentials.apiKey : credentials.type === 'OAUTH2' ? credentials.access_token : credentials.installation_id;
  const account = createHash('sha256').update(secret).digest('hex').slice(0, 24);
  return createSharedRequestBudget({
    store: opts.store,
    key: `${provider.definition.name}:${account}`,
    requests: provider.budget.requests,
    windowMs: provider.budget.windowMs,
    maxInlineWaitMs: opts.maxInlineWaitMs,
    sleep: opts.sleep,
  });
}
