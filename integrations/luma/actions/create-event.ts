import { z } from 'zod';
import { ActionError, isProviderStatus } from '../../../runtime/errors';
import { defineAction } from '../../../runtime/types';
import { toCalendarEvent } from '../mappers';
import { CalendarEvent, type LumaEventEntry } from '../models';

const isoDateTime = z.iso.datetime({ offset: true });

const Input = z
  .object({
    name: z.string().trim().min(1).max(500),
    start_at: isoDateTime,
    /** IANA time zone of the event, e.g. `Europe/Berlin`. */
    timezone: z.string().min(1),
    end_at: isoDateTime.optional(),
    /** ISO 8601 duration such as `PT2H` (instead of `end_at`; Luma's default is one hour). */
    duration_interval: z
      .string()
      .regex(/^P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?)?$/, 'must be an ISO 8601 duration such as PT2H')
      .optional(),
    description_md: z.string().max(100_000).optional(),
    meeting_url: z.url({ protocol: /^https?$/ }).optional(),
    visibility: z.enum(['public', 'members-only', 'private']).optional(),
    geo_address_json: z
      .object({
        address: z.string().optional(),
        city: z.string().optional(),
        region: z.string().optional(),
        country: z.string().optional(),
        full_address: z.string().optional(),
      })
      .optional(),
  })
  .strict()
  .refine((i) => !(i.end_at && i.duration_interval), { message: 'give end_at or duration_interval, not both', path: ['end_at'] })
  .refine((i) => !i.end_at || Date.parse(i.end_at) > Date.parse(i.start_at), { message: 'end_at must be after start_at', path: ['end_at'] })
  .refine((i) => isTimeZone(i.timezone), { message: 'must be an IANA time zone, e.g. Europe/Berlin', path: ['timezone'] });

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates an event on the connected calendar (`POST /public/v1/event/create`), reads it
 * back (`GET /public/v1/event/get`: the create answer carries only its id) and saves it to
 * the records cache as list-events would, so GET /records shows it at once and the next
 * sync run finds it unchanged.
 */
export const createEventAction = defineAction<z.infer<typeof Input>, CalendarEvent>({
  kind: 'action',
  name: 'create-event',
  description: 'Creates an event on the connected Luma calendar; returns it as a CalendarEvent record.',
  endpoint: { method: 'POST', path: '/luma/create-event' },
  input: Input,
  output: CalendarEvent,
  async exec(ctx, input) {
    let created: { api_id?: string; id?: string };
    try {
      created = (
        await ctx.post<{ api_id?: string; id?: string }>({
          endpoint: '/public/v1/event/create',
          data: input,
          // Not idempotent: a create repeated after a lost answer would make a second event.
          retries: 0,
        })
      ).data;
    } catch (err) {
      if (isProviderStatus(err, 400, 422)) {
        const message = (err.providerBody as { message?: unknown } | null)?.message;
        throw new ActionError('event_rejected', `Luma refused the event${typeof message === 'string' ? `: ${message}` : ''}.`, 424, err.details);
      }
      throw err;
    }
    const id = created.api_id ?? created.id;
    if (!id) throw new ActionError('event_id_missing', 'Luma answered the create without an event id.', 424);
    const got = await ctx.get<{ event: Record<string, unknown> }>({ endpoint: '/public/v1/event/get', params: { api_id: id } });
    // A new event has no tags yet; list-events lists it with `tags: []`.
    const record = toCalendarEvent({ api_id: id, event: got.data.event, tags: [] } satisfies LumaEventEntry);
    await ctx.batchSave([record], 'CalendarEvent');
    return record;
  },
});
