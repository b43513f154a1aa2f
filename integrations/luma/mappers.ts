import type { UnifiedEvent } from '../../runtime/unified-models';
import type { CalendarEvent, LumaEventEntry } from './models';

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Maps either Luma entry shape to the `CalendarEvent` model. */
export function toCalendarEvent(entry: LumaEventEntry): CalendarEvent {
  const event = (entry.event ?? entry) as Record<string, unknown>;
  const geo = (event.geo_address_json ?? null) as Record<string, unknown> | null;
  return {
    id: String(event.id ?? event.api_id ?? entry.id ?? entry.api_id ?? ''),
    name: String(event.name ?? ''),
    description: str(event.description_md) ?? str(event.description),
    start_at: String(event.start_at ?? ''),
    end_at: str(event.end_at),
    timezone: str(event.timezone),
    url: str(event.url),
    visibility: str(event.visibility),
    meeting_url: str(event.meeting_url) ?? str(event.zoom_meeting_url),
    cover_url: str(event.cover_url),
    geo_address: geo
      ? {
          address: str(geo.address),
          city: str(geo.city),
          region: str(geo.region),
          country: str(geo.country),
          full_address: str(geo.full_address),
        }
      : null,
    created_at: str(event.created_at),
    tags: (entry.tags ?? []).map((t) => ({ id: String(t.id ?? t.api_id ?? ''), name: t.name })),
  };
}

export function toUnifiedEvent(record: Record<string, unknown>): UnifiedEvent {
  const e = record as unknown as CalendarEvent;
  return {
    id: e.id,
    title: e.name,
    description: e.description,
    start_at: e.start_at,
    end_at: e.end_at,
    timezone: e.timezone,
    location: e.geo_address?.full_address ?? e.geo_address?.address ?? null,
    online_meeting_url: e.meeting_url,
    web_url: e.url,
  };
}
