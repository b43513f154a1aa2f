import { z } from 'zod';

export const Task = z.object({
  id: z.string().min(1),
  title: z.string(),
  done: z.boolean(),
  updated_at: z.iso.datetime({ offset: true }),
});
export type Task = z.infer<typeof Task>;

/** A task as Acme's API lists it. */
export const AcmeTask = z.object({ task_id: z.string(), title: z.string(), state: z.enum(['open', 'done']), updated: z.string() });
export type AcmeTask = z.infer<typeof AcmeTask>;
