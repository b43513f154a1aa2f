import type { SyncDefinition } from '../../../runtime/types';
import { CalendarEvent, type LumaEventEntry } from '../models';
import { toCalendarEvent, toUnifiedEvent } from '../mappers';

/**
 * Every event managed by the calendar. A full sync: Luma's `after` filters by start time,
 * not by modification, so it cannot drive an incremental run; deletions are detected by
 * Weft at the end of each complete run.
 */
export const listEvents: SyncDefinition = {
  kind: 'sync',
  name: 'list-events',
  description: 'Syncs all events managed by the connected Luma calendar.',
  endpoint: { method: 'GET', path: '/luma/list-events' },
  models: { CalendarEvent },
  unified: { CalendarEvent: { name: 'UnifiedEvent', map: toUnifiedEvent } },
  syncType: 'full',
  frequency: 'every 1h',
  autoStart: true,
  // An event created, changed or canceled on the calendar (Luma's webhook event types).
  webhookSubscriptions: ['event.created', 'event.updated', 'event.canceled'],
  async exec(ctx) {
    for await (const page of ctx.paginate<LumaEventEntry>({ endpoint: '/public/v1/calendar/list-events' })) {
      await ctx.batchSave(
        page.map((entry) => toCalendarEvent(entry)),
        'CalendarEvent',
      );
    }
  },
};
