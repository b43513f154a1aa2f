import type { Credentials } from '../../auth/credentials';
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
