import { ConflictError, NotFoundError } from '../../common/errors';
import type { WebhookDeliveryDoc } from '../../store/webhook-deliveries';
import type { WebhookOutboxDoc } from '../../store/webhook-outbox';
import { replayWebhook, replayWebhooks, type OutboxDeps } from '../../webhooks/outbox';
import type { BulkReplayBody, ListWebhookEventsQuery } from '../schemas/webhooks';

/** An event as the API shows it: the body the app receives, where it stands, nothing internal (gate, lease, URL override). */
export interface WebhookEventView {
  id: string;
  type: string;
  status: WebhookOutboxDoc['status'];
  connection_id: string | null;
  created_at: string;
  settled_at: string | null;
  /** Failed attempts of the current delivery (the latest replay's, if replayed). */
  attempts: number;
  last_error: string | null;
  /** How often the event was replayed. */
  replays: number;
  payload: Record<string, unknown>;
}

export interface WebhookAttemptView {
  at: string;
  target: WebhookDeliveryDoc['target'];
  /** Redacted by common/secrets: secret query values, userinfo and the secret path of webhook URLs (Slack, Discord, Teams, ...). */
  url: string;
  /** Per URL, counted from 1 in each delivery. */
  attempt: number;
  /** 0: the first delivery; n: replay n. */
  replay: number;
  status: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
}

type EventDeps = Pick<OutboxDeps, 'stores'>;

/**
 * One page of an environment's events, newest first. Type, connection and failed pick the key
 * read (an `_id` range, store/webhook-outbox.ts); other filters are checked within it, so a
 * page may hold fewer than `limit` events and still carry a `next_cursor`.
 */
export async function listWebhookEvents(deps: EventDeps, environment: string, q: ListWebhookEventsQuery) {
  const page = await deps.stores.webhookOutbox.list({
    environment,
    type: q.type,
    connectionId: q.connection_id,
    status: q.status,
    from: q.from,
    to: q.to,
    cursor: q.cursor,
    limit: q.limit,
  });
  return { events: page.events.map(eventView), next_cursor: page.nextCursor };
}

/** The event with every recorded attempt, oldest first, each marked with the delivery (first or replay n) it belongs to. */
export async function getWebhookEvent(deps: EventDeps, environment: string, id: string) {
  const event = await deps.stores.webhookOutbox.get(id);
  if (!event || event.environment !== environment) throw unknownEvent(id);
  const attempts = await deps.stores.webhookDeliveries.listForEvent(environment, id);
  // A replay starts only once the event is settled, so an attempt belongs to the latest replay asked for before it.
  const replays = [...new Map((event.replays ?? []).map((r) => [r.n, r.at.getTime()])).entries()].sort((a, b) => a[0] - b[0]);
  const replayOf = (at: Date) => replays.reduce((n, [replay, asked]) => (asked <= at.getTime() ? replay : n), 0);
  return {
    ...eventView(event),
    delivery_attempts: attempts.map((a): WebhookAttemptView => ({
      at: a.created_at.toISOString(),
      target: a.target,
      url: a.url,
      attempt: a.attempt,
      replay: replayOf(a.created_at),
      status: a.status,
      error: a.error,
      duration_ms: a.duration_ms,
      response_excerpt: a.response_excerpt ?? null,
    })),
  };
}

/** `POST /webhooks/events/:id/replay`: 404 for an event not in this environment, 409 while it is being delivered. */
export async function replayWebhookEvent(deps: OutboxDeps, environment: string, id: string) {
  const result = await replayWebhook(deps, environment, id);
  if (result.outcome === 'unknown') throw unknownEvent(id);
  if (result.outcome === 'pending')
    throw new ConflictError('webhook_event_pending', `Webhook event ${id} is being delivered; it can be replayed once it is delivered or failed.`);
  return { id, status: 'pending' as const, replay: result.replay };
}

/**
 * The failed events of a time range, oldest first, replayed (at most `limit` per call; the
 * `next_cursor` continues after the last one read). They are requeued before the answer;
 * their workflows start right after it (webhooks/outbox.ts, `replayWebhooks`).
 */
export async function replayFailedWebhookEvents(deps: OutboxDeps, environment: string, body: BulkReplayBody) {
  const page = await deps.stores.webhookOutbox.list({
    environment,
    status: 'failed',
    type: body.type,
    connectionId: body.connection_id,
    from: body.from,
    to: body.to,
    cursor: body.cursor,
    limit: body.limit,
    direction: 'asc',
  });
  const replayed = await replayWebhooks(
    deps,
    environment,
    page.events.map((e) => e._id),
  );
  // Replayed meanwhile by someone else: not in `ids`, theirs delivers it.
  const ids = replayed.map((r) => r.id);
  return { replayed: ids.length, ids, next_cursor: page.nextCursor };
}

function eventView(e: WebhookOutboxDoc): WebhookEventView {
  return {
    id: e._id,
    type: e.type,
    status: e.status,
    connection_id: e.connection_id ?? null,
    created_at: e.created_at.toISOString(),
    settled_at: e.settled_at ? e.settled_at.toISOString() : null,
    attempts: e.rounds,
    last_error: e.last_error,
    replays: e.replay ?? 0,
    payload: e.payload,
  };
}

function unknownEvent(id: string): NotFoundError {
  return new NotFoundError('unknown_webhook_event', `No webhook event ${id} in this environment.`);
}
