import type { AuthMode, ProviderDefinition } from './types';

/** Every auth mode a provider supports. */
export function supportedAuthModes(def: ProviderDefinition): AuthMode[] {
  return def.authModes ?? [def.authMode];
}

/**
 * The auth mode of an integration's connections: what its client credentials are for
 * (a GitHub integration with OAuth App credentials connects users by OAuth), else the
 * provider's default.
 */
export function integrationAuthMode(def: ProviderDefinition, clientCredentialsType: AuthMode | undefined): AuthMode {
  return clientCredentialsType && supportedAuthModes(def).includes(clientCredentialsType) ? clientCredentialsType : def.authMode;
}
