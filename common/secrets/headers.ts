import { REDACTED } from './hint';
import { isSavedRequestHeader, isSecretHeader } from './names';

type HeaderValue = string | number | boolean | string[] | undefined | null;

/**
 * Headers as a log or an error may show them: every secret one (by name, or declared by an
 * integration) REDACTED, the rest as they were.
 */
export function redactHeaders<T extends Record<string, HeaderValue>>(headers: T, declared: Iterable<string> = []): T {
  const names = [...declared];
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v !== undefined && v !== null && isSecretHeader(k, names) ? REDACTED : v])) as T;
}

/**
 * The request headers a saved request keeps, lower-cased: only those on the allow-list
 * (names.ts), and of those none the integration declares secret. Whatever else an
 * integration sends (a custom credential header no rule knows) is dropped.
 */
export function savedRequestHeaders(headers: Record<string, HeaderValue>, declared: Iterable<string> = []): Array<[string, string]> {
  const names = [...declared];
  return Object.entries(headers)
    .filter(([k, v]) => v !== undefined && v !== null && isSavedRequestHeader(k) && !isSecretHeader(k, names))
    .map(([k, v]) => [k.toLowerCase(), String(v)]);
}
