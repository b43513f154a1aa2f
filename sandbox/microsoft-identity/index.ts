export { createMicrosoftIdentitySimulator } from './simulator';
export type {
  MicrosoftIdentitySimulator,
  MicrosoftIdentityStats,
  MicrosoftIdentityRequestLogEntry,
  MicrosoftIdentityEndpoint,
  MicrosoftIdentityEndpoints,
  AccessTokenListener,
} from './simulator';
export {
  MicrosoftIdentitySimulatorOptionsSchema,
  MS_IDENTITY_DEFAULT_CLIENT_ID,
  MS_IDENTITY_DEFAULT_CLIENT_SECRET,
  MS_IDENTITY_DEFAULT_ADMIN_PASSWORD,
  MS_IDENTITY_DEFAULT_USER_PASSWORD,
} from './options';
export type { MicrosoftIdentitySimulatorOptions, ResolvedMicrosoftIdentitySimulatorOptions, AppRegistration, UserRegistration } from './options';
export type { AccessTokenEvent, AccessTokenInfo } from './tokens';
export type { MicrosoftIdentityUser, MicrosoftIdentityApp, TenantInfo } from './directory';
export type { GrantSnapshot } from './grants';
