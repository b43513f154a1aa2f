import { REDACTED } from './hint';

/** Literal secrets shorter than this are not scrubbed: they would match ordinary text. */
const MIN_SECRET_LENGTH = 6;

/**
 * Every occurrence of a known secret value (a connection's token, an API key, an alert
 * URL) replaced, longest first so that a secret holding another is removed whole.
 */
export function scrubLiterals(text: string, secrets: Iterable<string>): string {
  const known = [...new Set(secrets)].filter((s) => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  let out = text;
  for (const secret of known) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
