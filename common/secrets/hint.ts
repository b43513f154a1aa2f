import { createHmac, randomBytes } from 'node:crypto';

/** What every redacted value becomes (or starts with, when it carries a hint). */
export const REDACTED = 'REDACTED';

/**
 * The key of the hints this process writes: random, made once per process and never stored.
 * A hint is thus a keyed HMAC that nobody holding the files (a mock, a log) can test guesses
 * of a weak secret against, which a plain hash would allow.
 */
const HINT_KEY = randomBytes(32);

/**
 * A secret's stand-in that still tells values apart: `REDACTED-<8 hex of HMAC-SHA256>`. The
 * same value gives the same hint within one process, so the pages of a listing whose next
 * links differ only in a secret `token` stay distinct requests while one recording is
 * written. A value that is already redacted is returned as it is: a link read back from a
 * saved mock identifies the same request it was recorded as.
 */
export function secretHint(value: string): string {
  if (isRedacted(value)) return value;
  return `${REDACTED}-${createHmac('sha256', HINT_KEY).update(value).digest('hex').slice(0, 8)}`;
}

export function isRedacted(value: string): boolean {
  return value.startsWith(REDACTED);
}
