import { z } from 'zod';

/** `status=`: one code (`429`), a class (`5xx`), or `error` (no answer, or an error recorded). */
const statusFilter = z.union([z.coerce.number().int().min(100).max(599), z.enum(['1xx', '2xx', '3xx', '4xx', '5xx', 'error'])]);

// Log keys hold times from 1970 to 9999 (store/key-range.ts); anything else is no time of an entry.
const logTime = z.iso
  .datetime({ offset: true })
  .transform((v) => new Date(v))
  .refine((d) => d.getTime() >= 0 && d.getTime() <= 253_402_300_799_999, 'a time between 1970 and 9999');

export const listLogsQuery = z
  .strictObject({
    connection_id: z.string().min(1).max(255).optional(),
    integration: z.string().min(1).max(255).optional(),
    operation: z.string().min(1).max(255).optional(),
    status: statusFilter.optional(),
    from: logTime.optional(),
    to: logTime.optional(),
    cursor: z.string().min(1).max(512).optional(),
    limit: z.coerce.number().int().min(1).max(1_000).default(100),
  })
  .refine((q) => !q.from || !q.to || q.from.getTime() <= q.to.getTime(), { message: '`from` must not be after `to`', path: ['from'] });

export type ListLogsQuery = z.infer<typeof listLogsQuery>;
