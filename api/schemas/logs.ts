import { z } from 'zod';
import { inOrder, keyTime } from './key-time';

/** `status=`: one code (`429`), a class (`5xx`), or `error` (no answer, or an error recorded). */
const statusFilter = z.union([z.coerce.number().int().min(100).max(599), z.enum(['1xx', '2xx', '3xx', '4xx', '5xx', 'error'])]);

export const listLogsQuery = z
  .strictObject({
    connection_id: z.string().min(1).max(255).optional(),
    integration: z.string().min(1).max(255).optional(),
    operation: z.string().min(1).max(255).optional(),
    status: statusFilter.optional(),
    from: keyTime.optional(),
    to: keyTime.optional(),
    cursor: z.string().min(1).max(512).optional(),
    limit: z.coerce.number().int().min(1).max(1_000).default(100),
  })
  .refine((q) => inOrder(q), { message: '`from` must not be after `to`', path: ['from'] });

export type ListLogsQuery = z.infer<typeof listLogsQuery>;
