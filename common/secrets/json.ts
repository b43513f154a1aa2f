import { REDACTED, isRedacted } from './hint';
import { scrubLiterals } from './literals';
import { isSecretFieldName, isSecretQueryParam } from './names';
import { redactUrlsInText, safeDecode, type UrlRedactionOptions } from './url';

export interface JsonRedactionOptions extends UrlRedactionOptions {
  /** Literal secret values known at the call (a connection's credentials), removed wherever they appear. */
  secrets?: Iterable<string>;
}

/**
 * A JSON value with every secret removed: the values of secret-named fields (strings,
 * numbers, and lists of them), secret fields of form-encoded strings (`a=b&password=c`),
 * the secrets of every URL in a string, and the literal secrets given.
 */
export function redactJson<T>(value: T, opts: JsonRedactionOptions = {}): T {
  const secrets = [...(opts.secrets ?? [])];
  return walk(value, { ...opts, secrets }, 0) as T;
}

/** A string with its URLs' secrets, the literal secrets and the secret fields of a form body removed. */
export function redactText(text: string, opts: JsonRedactionOptions = {}): string {
  return redactFormBody(redactUrlsInText(scrubLiterals(text, opts.secrets ?? []), opts));
}

/** Deeper than any real document; a cycle or a pathological one stops here. */
const MAX_DEPTH = 64;

function walk(value: unknown, opts: JsonRedactionOptions, depth: number): unknown {
  if (typeof value === 'string') return redactText(value, opts);
  if (depth > MAX_DEPTH) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => walk(v, opts, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    out[key] = isSecretFieldName(key) ? redactSecretValue(v, opts, depth + 1) : walk(v, opts, depth + 1);
  }
  return out;
}

/**
 * The value of a secret-named field: a string or number becomes REDACTED, a list's items
 * each; an object is walked (its own fields decide: `credentials: { type, access_token }`);
 * an empty string, a boolean or null says nothing secret and stays.
 */
function redactSecretValue(value: unknown, opts: JsonRedactionOptions, depth: number): unknown {
  if (typeof value === 'string') return value === '' ? value : REDACTED;
  if (typeof value === 'number' || typeof value === 'bigint') return REDACTED;
  if (Array.isArray(value)) return value.map((v) => redactSecretValue(v, opts, depth + 1));
  return walk(value, opts, depth);
}

/** `name=value&…` and nothing else: a form-encoded body (an OAuth token request, a login). */
const FORM_BODY = /^[^=&\s?#/]+=[^&\s]*(&[^=&\s]+=[^&\s]*)+$|^[^=&\s?#/]+=[^&\s]*$/;

/** A form-encoded string with the values of its secret fields replaced; any other string as it is. */
function redactFormBody(text: string): string {
  if (!text.includes('=') || !FORM_BODY.test(text)) return text;
  return text
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      // Already redacted stays as it is: redacting twice (a saved request's body inside its file) changes nothing.
      if (eq <= 0 || value === '' || isRedacted(value) || !isSecretQueryParam(safeDecode(name.replace(/\+/g, ' ')))) return pair;
      return `${name}=${REDACTED}`;
    })
    .join('&');
}
