import { createHash } from 'node:crypto';

/**
 * What never goes into a mock file: credentials, signed-URL secrets and the literal secret
 * values the recorder knows. Mocks are committed to a repository, so redaction errs on the
 * side of removing too much; the same rules run on a request when it is saved and when a
 * test looks it up, so a redacted value still matches.
 */

const REDACTED = 'REDACTED';

/**
 * Query parameters that authorize whoever holds the URL: OAuth's, API keys, and the
 * signatures of pre-authenticated URLs (Graph's `tempauth`, Azure SAS `sig`, S3's
 * `X-Amz-*`, Google's `X-Goog-*`).
 */
const SECRET_QUERY =
  /^(access_token|refresh_token|id_token|client_secret|code|token|api_key|apikey|key|sig|signature|tempauth|password|secret|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential)$/i;

/** Field names whose value is a credential (compared without case, `-` or `_`): `teamsiteAccessToken`, `client_secret`. */
const SECRET_FIELD = /(accesstoken|refreshtoken|idtoken|clientsecret|password|apikey|privatekey|secret)$/;
const SECRET_FIELD_EXACT = new Set(['token', 'signature', 'tempauth']);

/** Literal secrets shorter than this are not scrubbed: they would match ordinary text. */
const MIN_SECRET_LENGTH = 6;

export function isSecretQueryParam(name: string): boolean {
  return SECRET_QUERY.test(name);
}

/**
 * A secret query value's stand-in: `REDACTED-<8 hex of its SHA-256>`. Not the value, but
 * distinct per value, so the pages of a listing whose next links differ only in a `token`
 * (Graph's delta) stay distinct requests, and a link read back from a mock file (already
 * redacted) identifies the same request as the one recorded.
 */
export function redactQueryValue(value: string): string {
  return value.startsWith(REDACTED) ? value : `${REDACTED}-${createHash('sha256').update(value).digest('hex').slice(0, 8)}`;
}

function isSecretField(name: string): boolean {
  const normalized = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_FIELD_EXACT.has(normalized) || SECRET_FIELD.test(normalized);
}

/** A text with the literal secrets and the secret query values of every URL in it replaced. */
export function redactSecretsInText(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  return redactUrlSecrets(out);
}

/** Rewrites only the secret parameters' values, leaving each URL otherwise byte for byte as it was. */
function redactUrlSecrets(text: string): string {
  if (!/https?:\/\//i.test(text)) return text;
  return text.replace(/https?:\/\/[^\s"'<>]+/gi, (url) =>
    url
      .replace(/^(https?:\/\/)[^/?#@]*@/i, '$1')
      .replace(/([?&])([^=&#]+)=([^&#]*)/g, (whole, sep: string, name: string, value: string) =>
        isSecretQueryParam(safeDecode(name)) ? `${sep}${name}=${redactQueryValue(safeDecode(value.replace(/\+/g, ' ')))}` : whole,
      ),
  );
}

/** A JSON value with every secret removed: secret-named fields' strings, literal secrets, signed-URL parameters. */
export function redactDeep<T>(value: T, secrets: string[]): T {
  return walk(value, secrets) as T;
}

function walk(value: unknown, secrets: string[]): unknown {
  if (typeof value === 'string') return redactSecretsInText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => walk(v, secrets));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    out[key] = typeof v === 'string' && v !== '' && isSecretField(key) ? REDACTED : walk(v, secrets);
  }
  return out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
