import { z } from 'zod';
import { MAX_REPEATED_QUERY_VALUES } from '../query-parser';

const actions = ['added', 'updated', 'deleted'] as const;

export const listRecordsQuery = z.object({
  model: z.string().min(1),
  variant: z.string().min(1).default('base'),
  cursor: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
  modified_after: z.iso.datetime({ offset: true }).optional(),
  filter: z
    .string()
    .refine((v) => {
      const parts = v.split(',').map((s) => s.trim().toLowerCase());
      return parts.length <= 2 && parts.every((p) => (actions as readonly string[]).includes(p));
    }, 'one or two of added, updated, deleted, joined by a comma')
    .optional(),
  // One `ids=` arrives as a string, several as an array: both become a list.
  ids: z
    .preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(z.string()).max(MAX_REPEATED_QUERY_VALUES, `at most ${MAX_REPEATED_QUERY_VALUES} ids`))
    .optional(),
});

/** `GET /records` (and a sync's own `/v1/...` endpoint, whose model is implied), parsed. */
export type ListRecordsQuery = z.infer<typeof listRecordsQuery>;

export const connectionHeaders = z.object({
  'connection-id': z.string().min(1),
  'provider-config-key': z.string().min(1),
});

/** `PATCH /records/prune`, as Nango's SDK `pruneRecords` sends it. */
export const pruneRecordsBody = z.strictObject({
  model: z.string().min(1).max(255),
  variant: z.string().min(1).max(255).default('base'),
  until_cursor: z.string().min(1).max(1000),
  limit: z.coerce.number().int().min(1).max(10_000).default(1_000),
});
