import { z } from 'zod';

export const triggerActionBody = z.strictObject({
  action_name: z.string().min(1),
  input: z.unknown().optional(),
});

export const actionHeaders = z.object({
  'connection-id': z.string().min(1),
  'provider-config-key': z.string().min(1),
  'x-async': z.enum(['true', 'false']).optional(),
  'x-max-retries': z.coerce.number().int().min(0).max(5).optional(),
});
