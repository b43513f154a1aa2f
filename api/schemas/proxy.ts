import { z } from 'zod';

/** An empty header is no header (Nango's SDK sends `Base-Url-Override: ''` when none is set). */
const optionalHeader = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

/** The proxy's own headers (everything else the app sends is not forwarded, except `Weft-Proxy-*` / `Nango-Proxy-*`). */
export const proxyHeaders = z.object({
  'connection-id': z.string().min(1),
  'provider-config-key': z.string().min(1),
  /** Extra attempts (network errors, 5xx, throttling, `retry-on` statuses); at most 10. */
  retries: optionalHeader(z.coerce.number().int().min(0).max(10)).default(0),
  /** More statuses to retry, comma-separated (`409,423`). */
  'retry-on': optionalHeader(
    z
      .string()
      .regex(/^\s*\d{3}\s*(,\s*\d{3}\s*)*$/, 'status codes separated by commas, e.g. "409,423"')
      .transform((v) => v.split(',').map((s) => Number(s.trim()))),
  ).default([]),
  'base-url-override': optionalHeader(z.string().max(2_000)),
  /**
   * `true`: the URL carries its own authorization (Graph's upload session, a signed link), so
   * the connection's credentials are not added. It needs `Base-Url-Override`: the call goes
   * only to a host the integration allows. (Nango's proxy has no such header.)
   */
  'weft-pre-authenticated': optionalHeader(z.enum(['true', 'false']).transform((v) => v === 'true'))
    .default(false)
    .describe(
      '`true`: the URL carries its own authorization (an upload session, a signed link): sent without the connection’s credentials. Needs `Base-Url-Override` (a host the integration allows).',
    ),
});

export type ProxyHeaders = z.infer<typeof proxyHeaders>;
