/**
 * What Weft considers secret, decided in one place for every output: logs, the request log,
 * webhook delivery records, OpenTelemetry spans, dry-run output and saved mocks
 * (docs/secrets-and-redaction.md).
 */
export { REDACTED, secretHint } from './hint';
export { scrubLiterals } from './literals';
export { isSecretFieldName, isSecretHeader, isSecretQueryParam } from './names';
export { redactUrl, redactUrlsInText, type UrlRedactionOptions } from './url';
export { redactJson, redactText, type JsonRedactionOptions } from './json';
export { redactHeaders, savedRequestHeaders } from './headers';
export { secretValuesOf } from './values';
