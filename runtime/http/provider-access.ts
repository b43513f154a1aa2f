import { createSharedRequestBudget, type BudgetStore, type RequestBudgetGate } from './request-budget';
import type { ResolvedProvider } from './provider-client';
import type { IntegrationRegistry } from '../registry';
import { WeftError } from '../../common/errors';
import type { ProviderOverrides } from '../../common/stored-documents';

/** The fields of a configured integration that decide how its provider is called (an integration document satisfies it). */
export interface ProviderSettings {
  provider: string;
  provider_overrides?: Pick<ProviderOverrides, 'base_url' | 'rate_limit'> | null;
}

/** The provider definition with the integration's overrides applied (base URL, budget). */
export function resolveProvider(registry: IntegrationRegistry, integration: ProviderSettings): ResolvedProvider {
  const def = registry.get(integration.provider);
  if (!def) throw new WeftError('unknown_provider', `No pre-built integration for provider "${integration.provider}".`, 400);
  const overrides = integration.provider_overrides ?? {};
  const budget = overrides.rate_limit
    ? {
        requests: overrides.rate_limit.requests,
        windowMs: overrides.rate_limit.window_ms,
        lockoutMs: overrides.rate_limit.lockout_ms ?? def.provider.requestBudget?.lockoutMs,
      }
    : (def.provider.requestBudget ?? null);
  return { definition: def.provider, baseUrl: overrides.base_url ?? def.provider.baseUrl, budget };
}

/**
 * Providers count requests per account, so every run (and the key check at connect time)
 * that uses the same account shares one budget. `accountKey` is already hashed.
 */
export function sharedBudgetFor(
  provider: ResolvedProvider,
  accountKey: string,
  opts: { store: BudgetStore; maxInlineWaitMs: number; sleep(ms: number): Promise<void> },
): RequestBudgetGate | null {
  if (!provider.budget) return null;
  return createSharedRequestBudget({
    store: opts.store,
    key: accountKey,
    requests: provider.budget.requests,
    windowMs: provider.budget.windowMs,
    maxInlineWaitMs: opts.maxInlineWaitMs,
    sleep: opts.sleep,
  });
}
