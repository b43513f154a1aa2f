import type { ActionDefinition, IntegrationDefinition, ProviderDefinition, SyncDefinition } from './types';

/** Looks up integrations by provider name: the pre-built ones and those of WEFT_INTEGRATIONS_DIR, built once by the composition root. */
export class IntegrationRegistry {
  private readonly byProvider = new Map<string, IntegrationDefinition>();

  constructor(definitions: IntegrationDefinition[]) {
    for (const def of definitions) this.byProvider.set(def.provider.name, def);
  }

  providers(): ProviderDefinition[] {
    return [...this.byProvider.values()].map((d) => d.provider);
  }

  /** Every request header a registered provider sends a secret in (its API key header, its `secretHeaders`), lower-case. */
  secretHeaders(): string[] {
    const headers = this.providers().flatMap((p) => [p.apiKey?.header, ...(p.secretHeaders ?? [])]);
    return [...new Set(headers.filter((h): h is string => !!h).map((h) => h.toLowerCase()))];
  }

  get(provider: string): IntegrationDefinition | undefined {
    return this.byProvider.get(provider);
  }

  getSync(provider: string, name: string): SyncDefinition | undefined {
    return this.byProvider.get(provider)?.syncs.find((s) => s.name === name);
  }

  getAction(provider: string, name: string): ActionDefinition | undefined {
    return this.byProvider.get(provider)?.actions.find((a) => a.name === name);
  }
}
