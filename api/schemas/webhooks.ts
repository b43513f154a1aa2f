import { z } from 'zod';
import { inOrder, keyTime } from './key-time';

const eventType = z.enum(['auth', 'sync', 'async_action', 'forward', 'alert']);
const connectionId = z.string().min(1).max(255);
const cursor = z.string().min(1).max(512);

/** The longest time range one bulk replay covers (events are kept 30 days). */
const MAX_REPLAY_RANGE_MS = 31 * 86_400_000;
/** Events one bulk replay call requeues at most; the rest by calling again with `cursor`. */
const MAX_REPLAY_BATCH = 1_000;

export const listWebhookEventsQuery = z
  .strictObject({
    type: eventType.optional(),
    connection_id: connectionId.optional(),
    status: z.enum(['pending', 'delivered', 'failed']).optional(),
    from: keyTime.optional(),
    to: keyTime.optional(),
    cursor: cursor.optional(),
    limit: z.coerce.number().int().min(1).max(1_000).default(100),
  })
  .refine((q) => inOrder(q), {
    message: '`from` must not be after `to`',
    path: ['from'],
  });

export type ListWebhookEventsQuery = z.infer<typeof listWebhookEventsQuery>;

export const webhookEventParams = z.strictObject({ id: z.string().min(1).max(128) });

export const bulkReplayBody = z
  .strictObject({
    from: keyTime,
    to: keyTime,
    type: eventType.optional(),
    connection_id: connectionId.optional(),
    /** Where an earlier call stopped (its `next_cursor`). */
    cursor: cursor.optional(),
    limit: z.number().int().min(1).max(MAX_REPLAY_BATCH).default(MAX_REPLAY_BATCH),
  })
  .refine((b) => inOrder(b, true), {
    message: '`from` must be before `to`',
    path: ['from'],
  })
  .refine((b) => !(b.from instanceof Date && b.to instanceof Date) || b.to.getTime() - b.from.getTime() <= MAX_REPLAY_RANGE_MS, {
    message: 'the range may span 31 days at most',
    path: ['to'],
  });

export type BulkReplayBody = z.infer<typeof bulkReplayBody>;
