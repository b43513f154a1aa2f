import { isSecretQueryParam as isSecretParam, redactJson, redactText, secretHint } from '../../common/secrets';

/**
 * What never goes into a mock file: credentials, signed-URL secrets, webhook URLs and the
 * literal secret values the recorder knows, by common/secrets' rules. Mocks are committed
 * to a repository, so redaction errs on the side of removing too much; the same rules run on
 * a request when it is saved and when a test looks it up, so a redacted value still matches.
 * Secret query values carry a keyed hint (common/secrets/hint.ts): Graph's delta links that
 * differ only in their `token` stay distinct requests.
 */

export function isSecretQueryParam(name: string): boolean {
  return isSecretParam(name);
}

/** A secret query value's stand-in: `REDACTED-<keyed hint>`, or the value as it is when it is already one. */
export function redactQueryValue(value: string): string {
  return secretHint(value);
}

/** A text with the literal secrets and the secret query values of every URL in it replaced. */
export function redactSecretsInText(text: string, secrets: string[]): string {
  return redactText(text, { secrets, hint: true });
}

/** A JSON value with every secret removed: secret-named fields' values, form bodies, literal secrets, signed-URL parameters. */
export function redactDeep<T>(value: T, secrets: string[]): T {
  return redactJson(value, { secrets, hint: true });
}
