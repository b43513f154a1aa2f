export { createLumaSimulator, LUMA_DEFAULT_API_KEY, encodeCursor, decodeCursor } from './simulator';
export type { LumaSimulator, LumaSimulatorOptions, ResolvedLumaSimulatorOptions, LumaSimulatorStats, LumaRequestLogEntry } from './simulator';
export { isoDuration } from './data';
export type { LumaEvent, LumaEventEntry, LumaGeoAddress, LumaTag, LumaUser, LumaCalendar, LumaVisibility } from './data';
export type { LumaWebhook, LumaWebhookEventType } from './webhooks';
export type { WebhookDeliveryRecord } from '../shared/webhook-sender';
