import type { z } from 'zod';
import { readAppPrivateKey } from '../../auth/github-app';
import { BadRequestError } from '../../common/errors';
import { supportedAuthModes } from '../../runtime/auth-modes';
import type { ProviderDefinition } from '../../runtime/types';
import type { integrationCredentialsSchema } from '../schemas/integrations';

/**
 * Checks an integration's client credentials against its provider before they are
 * stored: the auth mode must be one the provider supports, an App private key must be a
 * readable PEM block, and an OAuth app registration must follow the provider's rules
 * (GitHub: app name at most 34 characters, homepage URL required).
 */
export function validateClientCredentials(provider: ProviderDefinition, credentials: z.infer<typeof integrationCredentialsSchema>): void {
  const modes = supportedAuthModes(provider);
  if (!modes.includes(credentials.type)) {
    throw new BadRequestError(
      'invalid_credentials_type',
      `Provider "${provider.name}" supports ${modes.join(' or ')}; credentials of type ${credentials.type} do not apply.`,
    );
  }
  if (credentials.type === 'APP') {
    readAppPrivateKey(credentials.private_key); // throws invalid_private_key with what was expected
    return;
  }
  const rules = provider.oauth?.registration;
  if (!rules) return;
  const problems: string[] = [];
  if (!credentials.app_name) problems.push("app_name is required (the OAuth app's name as registered)");
  else if (credentials.app_name.length > rules.appNameMaxLength)
    problems.push(`app_name must be at most ${rules.appNameMaxLength} characters (got ${credentials.app_name.length})`);
  if (rules.homepageUrlRequired && !credentials.homepage_url) problems.push('homepage_url is required');
  if (problems.length)
    throw new BadRequestError('invalid_app_registration', `The ${provider.displayName} OAuth app registration is not valid: ${problems.join('; ')}.`);
}
