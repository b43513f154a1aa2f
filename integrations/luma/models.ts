import { z } from 'zod';

const isoDateTime = z.iso.datetime({ offset: true });

export const CalendarEvent = z.object({
  id: z.string().min(1),
  name: z.string(),
  description: z.string().nullable(),
  start_at: isoDateTime,
  end_at: isoDateTime.nullable(),
  timezone: z.string().nullable(),
  url: z.string().url().nullable(),
  visibility: z.string().nullable(),
  meeting_url: z.string().nullable(),
  cover_url: z.string().nullable(),
  geo_address: z
    .object({
      address: z.string().nullable(),
      city: z.string().nullable(),
      region: z.string().nullable(),
      country: z.string().nullable(),
      full_address: z.string().nullable(),
    })
    .nullable(),
  created_at: isoDateTime.nullable(),
  tags: z.array(z.object({ id: z.string(), name: z.string() })),
});
export type CalendarEvent = z.infer<typeof CalendarEvent>;

/** An entry of `list-events`: legacy `{ api_id, event, tags }` or the current flat event. */
export const LumaEventEntry = z.looseObject({
  api_id: z.string().optional(),
  id: z.string().optional(),
  event: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.looseObject({ api_id: z.string().optional(), id: z.string().optional(), name: z.string() })).optional(),
});
export type LumaEventEntry = z.infer<typeof LumaEventEntry>;
