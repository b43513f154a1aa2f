import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * One JSON logger for the process. Secrets are removed by path so that a careless
 * `log.info({ headers })` never prints a credential.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'weft' },
      redact: {
        paths: [
          '*.authorization',
          '*.Authorization',
          '*["x-luma-api-key"]',
          'headers.authorization',
          'headers["x-luma-api-key"]',
          '*.apiKey',
          '*.api_key',
          '*.access_token',
          '*.refresh_token',
          '*.client_secret',
          '*.private_key',
          'credentials',
          '*.credentials',
          'secretKey',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
