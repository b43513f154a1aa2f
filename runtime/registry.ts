import type { ActionDefinition, IntegrationDefinition, ProviderDefinition, SyncDefinition } from './types';

/** Looks up pre-built integrations by provider name. Built once from `integrations/`. */
export class IntegrationRegistry {
  private readonly byProvider = new Map<string, IntegrationDefinition>();

  constructor(definitions: IntegrationDefinition[]) {
    for (const def of definitions) this.byProvider.set(def.provider.name, def);
  }

  providers(): ProviderDefinition[] {
    return [...this.byProvider.values()].map((d) => d.provider);
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
