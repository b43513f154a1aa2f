/**
 * The names that mark a value as secret: query parameters, JSON or form fields, headers.
 * Names are compared normalized (lower case, without `-`, `_`, `.` or spaces), so
 * `client_secret`, `clientSecret` and `Client-Secret` are one name.
 */

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/**
 * Query parameters that authorize whoever holds the URL: OAuth's, API keys, passwords, the
 * signatures and credentials of pre-authenticated URLs (Graph's `tempauth`, Azure SAS `sig`,
 * S3's `X-Amz-*`, Google's `X-Goog-*`) and Weft's own session tokens.
 */
const SECRET_QUERY_NAMES = new Set(
  [
    'access_token',
    'refresh_token',
    'id_token',
    'auth_token',
    'api_token',
    'session_token',
    'connect_session_token',
    'client_secret',
    'client_assertion',
    'code',
    'code_verifier',
    'token',
    'api_key',
    'apikey',
    'key',
    'sig',
    'signature',
    'tempauth',
    'password',
    'passwd',
    'pass',
    'secret',
    'x-amz-signature',
    'x-amz-credential',
    'x-amz-security-token',
  ].map(normalizeName),
);
/** Every `X-Goog-*` parameter of a Google signed URL: its credential and signature among them. */
const SECRET_QUERY_PREFIXES = ['xgoog'];

/**
 * Parameters secret only in the URLs Weft itself serves (the OAuth callback's `state` binds a
 * flow in progress), redacted in what those URLs leave behind (telemetry). A provider's
 * `state=open` stays readable in the request log and identifies its request in saved mocks.
 */
const INBOUND_SECRET_QUERY_NAMES = new Set(['state']);

export interface QueryNameOptions {
  /** Weft's own incoming URLs: also the OAuth flow's `state`. */
  inbound?: boolean;
}

export function isSecretQueryParam(name: string, opts: QueryNameOptions = {}): boolean {
  const n = normalizeName(name);
  if (SECRET_QUERY_NAMES.has(n) || SECRET_QUERY_PREFIXES.some((p) => n.startsWith(p))) return true;
  if (opts.inbound && INBOUND_SECRET_QUERY_NAMES.has(n)) return true;
  return isSecretFieldName(name);
}

/**
 * Field names whose value is a credential. Exact names, and endings: `teamsiteAccessToken`,
 * `webhook_secret`, `db_password`. Not every `…token`: a listing's `nextPageToken` or
 * `deltaToken` is a cursor the integration sends back, and must stay in a saved mock.
 */
const SECRET_FIELD_EXACT = new Set([
  'token',
  'signature',
  'sig',
  'tempauth',
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'pass',
  'passwd',
  'password',
  'passphrase',
  'secret',
  'credential',
  'privatekey',
  'apikey',
  'xapikey',
  'subscriptionkey',
  'ocpapimsubscriptionkey',
  'privatetoken',
  'xauthtoken',
]);
const SECRET_FIELD_ENDING =
  /(access|refresh|id|api|auth|session|bearer|oauth|security|bot|user|private|personalaccess|app|installation|csrf|xsrf)token$|secret$|password$|passwd$|passphrase$|apikey$|privatekey$|secretkey$|accesskey$|signingkey$|subscriptionkey$|clientassertion$|signature$|credential$/;

export function isSecretFieldName(name: string): boolean {
  const n = normalizeName(name);
  if (n === '') return false;
  // A plural names a list of the same things: `api_keys`, `tokens`, `secrets`.
  return [n, n.endsWith('s') ? n.slice(0, -1) : null].some((c) => c !== null && (SECRET_FIELD_EXACT.has(c) || SECRET_FIELD_ENDING.test(c)));
}

/**
 * Request headers that carry a credential in some provider, besides what the field rule
 * already catches (`authorization`, `x-auth-token`, `private-token`, anything ending in
 * `api-key` or `credential`); in a header, any name ending in `token`, `secret` or
 * `signature` too. Logs redact these and the integration's declared ones.
 */
const SECRET_HEADERS = new Set(
  [
    'cookie',
    'set-cookie',
    'proxy-authorization',
    'api-key',
    'x-api-key',
    'ocp-apim-subscription-key',
    'x-amz-security-token',
    'x-goog-api-key',
    'x-functions-key',
  ].map(normalizeName),
);

/** A header whose value is secret: by name, or because the integration declares it (`secretHeaders`, `apiKey.header`). */
export function isSecretHeader(name: string, declared: Iterable<string> = []): boolean {
  const n = normalizeName(name);
  for (const d of declared) if (normalizeName(d) === n) return true;
  return SECRET_HEADERS.has(n) || /token$|secret$|signature$/.test(n) || isSecretFieldName(name);
}

/**
 * The request headers a saved request (a mock's identity) keeps: they change what the
 * provider answers and carry nothing secret. Every other header is left out, so a custom
 * credential header no rule names cannot reach a committed file.
 */
const SAVED_REQUEST_HEADERS = new Set([
  'content-type',
  'content-language',
  'content-range',
  'range',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'prefer',
  'consistencylevel',
  'x-github-api-version',
  'x-http-method-override',
]);

export function isSavedRequestHeader(name: string): boolean {
  return SAVED_REQUEST_HEADERS.has(name.toLowerCase());
}
