import pino, { type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /**
   * Request headers that carry secrets besides `authorization`: every header a registered
   * provider declares (the registry's `secretHeaders()`), so a careless `log.info({ headers })`
   * prints none of them.
   */
  secretHeaders?: string[];
}

/** Secrets by key name wherever they sit: an API key header of any provider (`x-luma-api-key`, `x-acme-api-key`, ...). */
const GENERIC_SECRET_HEADER = /^x-[a-z0-9-]*api-?key$/i;

/**
 * One JSON logger for the process. Secrets are removed by path so that a careless
 * `log.info({ headers })` never prints a credential: the generic ones (authorization,
 * tokens, keys) and every header the providers declare.
 */
export function createLogger(level: string, destination?: pino.DestinationStream, opts: LoggerOptions = {}): Logger {
  const headerPaths = (opts.secretHeaders ?? []).flatMap((h) => {
    const key = JSON.stringify(h.toLowerCase());
    return [`[${key}]`, `*[${key}]`, `*.*[${key}]`];
  });
  return pino(
    {
      level,
      base: { service: 'weft' },
      redact: {
        paths: [
          'authorization',
          '*.authorization',
          '*.Authorization',
          '*.*.authorization',
          '*.apiKey',
          '*.api_key',
          '*.access_token',
          '*.refresh_token',
          '*.client_secret',
          '*.private_key',
          'credentials',
          '*.credentials',
          'secretKey',
          ...headerPaths,
        ],
        censor: '[redacted]',
      },
      formatters: { log: redactApiKeyHeaders },
    },
    destination,
  );
}

/** The generic rule: `x-…-api-key` keys at the top level or one object down, censored. */
function redactApiKeyHeaders(object: Record<string, unknown>): Record<string, unknown> {
  let out = object;
  for (const [key, value] of Object.entries(object)) {
    if (GENERIC_SECRET_HEADER.test(key)) {
      out = { ...out, [key]: '[redacted]' };
    } else if (value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Error)) {
      const nested = value as Record<string, unknown>;
      const secret = Object.keys(nested).filter((k) => GENERIC_SECRET_HEADER.test(k));
      if (secret.length > 0) out = { ...out, [key]: { ...nested, ...Object.fromEntries(secret.map((k) => [k, '[redacted]'])) } };
    }
  }
  return out;
}
