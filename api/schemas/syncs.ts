import { z } from 'zod';

const syncRef = z.union([z.string().min(1), z.strictObject({ name: z.string().min(1), variant: z.string().min(1) })]);

export const triggerSyncBody = z.strictObject({
  provider_config_key: z.string().min(1),
  connection_id: z.string().min(1).optional(),
  syncs: z.array(syncRef).default([]),
  opts: z.strictObject({ reset: z.boolean().optional(), emptyCache: z.boolean().optional() }).optional(),
});

export const syncStatusQuery = z.object({
  provider_config_key: z.string().min(1),
  syncs: z.string().min(1),
  connection_id: z.string().min(1).optional(),
});

export const syncScheduleBody = z.strictObject({
  provider_config_key: z.string().min(1),
  connection_id: z.string().min(1).optional(),
  syncs: z.array(syncRef).default([]),
});

export type SyncScheduleBody = z.infer<typeof syncScheduleBody>;

export const updateConnectionFrequencyBody = z.strictObject({
  provider_config_key: z.string().min(1),
  connection_id: z.string().min(1),
  sync_name: z.string().min(1),
  sync_variant: z.string().min(1).optional(),
  /** "every 30 minutes", "2h", ...; null: back to the sync's default. */
  frequency: z.string().min(1).nullable(),
});

/** POST / DELETE /sync/:name/variant/:variant (Nango's SDK sends these in the body; query works too). */
export const syncVariantTarget = z.object({
  provider_config_key: z.string().min(1),
  connection_id: z.string().min(1),
});
