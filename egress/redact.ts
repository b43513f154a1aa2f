/**
 * Secrets out of the addresses and texts of outbound calls before they are logged (provider
 * calls, webhook deliveries, the request log). The rules are common/secrets' (one module
 * decides what is secret); these are the names the egress side has always used.
 */
import { redactUrl as redactSecretsOfUrl, scrubLiterals } from '../common/secrets';

/** A URL as the request log, errors and delivery records show it: userinfo, secret query values and webhook path secrets replaced. */
export function redactUrl(url: string): string {
  return redactSecretsOfUrl(url);
}

/** Removes every occurrence of the given secret values from a string (error messages, bodies). */
export function scrubSecrets(text: string, secrets: string[]): string {
  return scrubLiterals(text, secrets);
}
