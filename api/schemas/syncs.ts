import { z } from 'zod';

const syncRef = z.union([z.string().min(1), z.strictObject({ name: z.string().min(1), variant: z.string().min(1) })]);

const legacySyncModes = ['incremental', 'full_refresh', 'full_refresh_and_clear_cache'] as const;

/** The `opts` that Nango's deprecated trigger fields stand for. */
function legacyTriggerOpts(syncMode: (typeof legacySyncModes)[number] | undefined, fullResync: boolean | undefined) {
  if (syncMode === 'full_refresh_and_clear_cache') return { reset: true, emptyCache: true };
  if (syncMode === 'full_refresh' || (syncMode === undefined && fullResync)) return { reset: true };
  return undefined;
}

export const triggerSyncBody = z
  .strictObject({
    provider_config_key: z.string().min(1),
    connection_id: z.string().min(1).optional(),
    syncs: z.array(syncRef).default([]),
    opts: z.strictObject({ reset: z.boolean().optional(), emptyCache: z.boolean().optional() }).optional(),
    // Nango's SDK still offers triggerSync(key, syncs, id, true | 'full_refresh' | ...), deprecated: it sends these.
    sync_mode: z.enum(legacySyncModes).optional(),
    full_resync: z.boolean().optional(),
  })
  .refine((b) => b.opts === undefined || (b.sync_mode === undefined && b.full_resync === undefined), {
    message: 'give opts, or the deprecated sync_mode / full_resync, not both',
  })
  .transform(({ sync_mode, full_resync, ...body }) => ({ ...body, opts: body.opts ?? legacyTriggerOpts(sync_mode, full_resync) }));

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
