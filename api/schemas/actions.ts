import { z } from 'zod';

/** An action attempt may run 5 minutes (workflows/action-run.ts); waiting longer in one HTTP call helps nobody. */
const MAX_ACTION_TIMEOUT_SECONDS = 300;

export const triggerActionBody = z.strictObject({
  action_name: z.string().min(1),
  input: z.unknown().optional(),
});

export const actionHeaders = z.object({
  'connection-id': z.string().min(1),
  'provider-config-key': z.string().min(1),
  'x-async': z.enum(['true', 'false']).optional(),
  'x-max-retries': z.coerce.number().int().min(0).max(5).optional(),
  /** Sync mode: seconds to wait for the output before 504 action_timeout (the action keeps running). */
  'x-action-timeout': z.coerce.number().int().min(1).max(MAX_ACTION_TIMEOUT_SECONDS).optional(),
});
