import pino, { type Logger } from 'pino';
import { isSecretFieldName, isSecretHeader, redactUrlsInText } from './secrets';

export type { Logger };

export interface LoggerOptions {
  /**
   * Request headers that carry secrets besides the ones common/secrets names: every header a
   * registered provider declares (the registry's `secretHeaders()`), so a careless
   * `log.info({ headers })` prints none of them.
   */
  secretHeaders?: string[];
}

const CENSOR = '[redacted]';
/** How deep a log object is searched for secrets: headers sit a level or two down (`{ req: { headers } }`). */
const MAX_DEPTH = 4;

/**
 * One JSON logger for the process. Secrets are removed by common/secrets' rules so that a
 * careless `log.info({ headers })` or `log.warn({ url })` never prints a credential: fields
 * and headers named as secrets (and those the providers declare) censored, and the secrets
 * of every URL in a string field or the message (a Slack webhook's path, `?code=`) replaced.
 */
export function createLogger(level: string, destination?: pino.DestinationStream, opts: LoggerOptions = {}): Logger {
  const declared = (opts.secretHeaders ?? []).map((h) => h.toLowerCase());
  return pino(
    {
      level,
      base: { service: 'weft' },
      formatters: { log: (object) => redactLogObject(object, declared, 0) as Record<string, unknown> },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? redactUrlsInText(a) : a)) as Parameters<typeof method>);
        },
      },
    },
    destination,
  );
}

function redactLogObject(value: unknown, declared: string[], depth: number, inHeaders = false): unknown {
  if (typeof value === 'string') return redactUrlsInText(value);
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (value instanceof Error) return redactError(value);
  if (Array.isArray(value)) return value.map((v) => redactLogObject(v, declared, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    // Header names are judged as headers (any `…-token` is a credential there); other keys as fields, where `nextPageToken` is a cursor.
    const secret = inHeaders || declared.includes(key.toLowerCase()) ? isSecretHeader(key, declared) : isSecretFieldName(key);
    out[key] =
      secret && v !== undefined && v !== null && v !== '' && typeof v !== 'boolean' ? CENSOR : redactLogObject(v, declared, depth + 1, /^headers?$/i.test(key));
  }
  return out;
}

/** An error keeps its type and stack for pino's serializer; its message loses the secrets of any URL in it. */
function redactError(err: Error): Error {
  const message = redactUrlsInText(err.message);
  if (message === err.message) return err;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(err) as object) as Error, err, { message });
  if (err.stack) copy.stack = err.stack.split(err.message).join(message);
  return copy;
}
