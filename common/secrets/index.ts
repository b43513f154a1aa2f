/**
 * What Weft considers secret, decided in one place for every output: logs, the request log,
 * webhook delivery records, OpenTelemetry spans, dry-run output and saved mocks
 * (docs/secrets-and-redaction.md).
 */
export { REDACTED, isRedacted, secretHint } from './hint';
export { scrubLiterals, MIN_SECRET_LENGTH } from './literals';
export { isSecretFieldName, isSecretHeader, isSecretQueryParam, isSavedRequestHeader, normalizeName } from './names';
export { redactUrl, redactUrlsInText, type UrlRedactionOptions } from './url';
export { redactFormBody, redactJson, redactText, type JsonRedactionOptions } from './json';
export { redactHeaders, savedRequestHeaders } from './headers';
export { secretValuesOf } from './values';
