import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import { insertManyIgnoringDuplicates, isDuplicateKey } from './duplicate-key';
import { runOnce } from './migrations';
import { decodeCursor, encodeCursor, keyPrefix, readRangePage, timeKey, type Direction } from './key-range';
import { ensureExpiry, type ExpiryRule } from './ttl';

/** How long events (delivered, failed) are kept for `GET /webhooks/events` and replays. */
const WEBHOOK_EVENT_RETENTION_SECONDS = 30 * 86_400;

export type WebhookEventStatus = 'pending' | 'delivered' | 'failed';

/**
 * One webhook event, keyed by its `webhook-id`, written before anyone tries to send it: its
 * delivery workflow reads it per attempt, and an event whose workflow could not be started
 * (no worker yet, the process that took it died) stays due until a dispatcher takes it, under the same id. Delivered and failed events stay (with their status) for the events API and
 * replays, until retention removes them.
 */
export interface WebhookOutboxDoc {
  _id: string; // the event's webhook-id (msg_...)
  environment: string;
  type: string; // auth, sync, async_action, forward
  /** Exactly the JSON body the app receives; never holds credentials. */
  payload: Record<string, unknown>;
  /** The boolean environment setting that must still be on at delivery, e.g. send_auth_webhooks. */
  gate: string | null;
  created_at: Date;
  /** Failed delivery attempts so far (events of earlier versions: rounds of a few quick tries each). */
  rounds: number;
  /** When the next round is due. */
  next_attempt_at: Date;
  /** A round in progress holds the event until then; past it (the process died), it is free again. */
  lease_until: Date;
  last_error: string | null;
  status: WebhookEventStatus;
  /** The payload's `connectionId`, the scope `GET /webhooks/events?connection_id=` reads. */
  connection_id?: string | null;
  /** The connection's `webhook_url_override` when the event was queued (events of earlier versions: where they are delivered). */
  url_override?: string | null;
  /**
   * The connection the event is about: each attempt (and a replay) reads its override as it
   * is then; a deleted connection's event goes to no override it had (webhooks/delivery-attempt.ts).
   */
  connection_key?: { provider_config_key: string; connection_id: string } | null;
  /** When the event was delivered or given up on. */
  settled_at?: Date | null;
  /**
   * Replays so far (absent: never replayed). Replay n is delivered by its own workflow
   * (`webhookDeliveryWorkflowId(prefix, id, n)`): the event's first workflow is closed for good.
   */
  replay?: number;
  /** When each replay was asked for (n and time), so its attempts can be told from earlier ones. */
  replays?: Array<{ n: number; at: Date }>;
}

/** What `requeue` did: the event is unknown (here), still pending, or back in the queue as replay `event.replay`. */
export type RequeueResult = { outcome: 'unknown' } | { outcome: 'pending' } | { outcome: 'requeued'; event: WebhookOutboxDoc & { replay: number } };

export type NewWebhookEvent = Pick<WebhookOutboxDoc, '_id' | 'environment' | 'type' | 'payload' | 'gate' | 'created_at' | 'next_attempt_at' | 'lease_until'> &
  Partial<Pick<WebhookOutboxDoc, 'url_override' | 'connection_key'>>;

/**
 * Keys (`webhook_event_keys`), each `_id` only, written once, so every read is an `_id` range
 * (see key-range.ts) and a pointer to the event (its id ends the key):
 *   `<env>|a|<created>|<id>`                the environment's events by time
 *   `<env>|t|<type>|<created>|<id>`         by type
 *   `<env>|c|<connection_id>|<created>|<id>` by connection id
 *   `<env>|f|<created>|<id>`                failed ones (written when an event fails; bulk replay)
 *   `#due|<due time>|<id>`                   the delivery queue: dispatchers read what is due
 *                                            as one range; moved (new key first, then the old
 *                                            one removed) when a round is leased or rescheduled
 *   `#expiry|<created>|<id>`                 where the server has no TTL: what retention deletes
 *   `#replay|<id>|<n>`                       replay n of the event, taken by the one process that inserts it
 * Keys are written before the event, so a listed or queued event never goes missing; a key
 * whose event is gone is skipped (and a due key removed) by its readers.
 */
type KeyDoc = { _id: string; at?: Date; environment?: string; ids?: string[] };

const DUE_PREFIX = '#due|';
const EXPIRY_PREFIX = '#expiry|';
const REPLAY_PREFIX = '#replay|';
/** A due key whose event is missing this long after its time is an orphan, not an insert in progress. */
const ORPHAN_GRACE_MS = 60_000;
const EVENT_TAIL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[0-9a-zA-Z_.%-]{1,128}$/;

export interface WebhookEventQuery {
  environment: string;
  type?: string;
  connectionId?: string;
  status?: WebhookEventStatus;
  /** Inclusive bounds on the event's creation time. */
  from?: Date;
  to?: Date;
  cursor?: string;
  limit: number;
  /** Newest first by default. */
  direction?: Direction;
  /** Events examined per call at most when filters beyond the scope apply (default 5,000). */
  maxExamined?: number;
}

/** A due event as the queue holds it: claim it by this key. */
export interface DueEvent {
  id: string;
  key: string;
  /** The event as `due` read it (its claim need not read it again). */
  doc?: WebhookOutboxDoc;
}

export interface WebhookEventPage {
  events: WebhookOutboxDoc[];
  nextCursor: string | null;
}

export class WebhookOutboxStore {
  private readonly col: Collection<WebhookOutboxDoc>;
  private readonly keys: Collection<KeyDoc>;
  private writeExpiryKeys = true;

  constructor(private readonly db: Db) {
    this.col = db.collection<WebhookOutboxDoc>('webhook_outbox');
    this.keys = db.collection<KeyDoc>('webhook_event_keys');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    const rule = await ensureExpiry(this.col, 'created_at', WEBHOOK_EVENT_RETENTION_SECONDS, { sweep: (cutoff) => this.sweepExpired(cutoff) });
    this.writeExpiryKeys = !rule.native;
    // On MongoDB keys expire with their events (due keys carry no `at`: they leave with delivery).
    if (rule.native) await this.keys.createIndex({ at: 1 }, { expireAfterSeconds: WEBHOOK_EVENT_RETENTION_SECONDS });
    // The due queue replaces the index earlier versions read the sweep from.
    await this.col.dropIndex('next_attempt_at_1').catch(() => undefined);
    await runOnce(this.db, 'webhook_outbox_keyed', () => this.adoptEarlierEvents());
    return [rule];
  }

  /**
   * Records a new event, already leased by the caller for its first round. Returns false,
   * changing nothing, when an event with its id is stored already (a caller that derives ids
   * from what happened, retried).
   */
  async add(event: NewWebhookEvent): Promise<boolean> {
    if (await this.col.findOne({ _id: event._id }, { projection: { _id: 1 } })) return false;
    const doc: WebhookOutboxDoc = { ...event, connection_id: connectionIdOf(event.payload), rounds: 0, last_error: null, status: 'pending', settled_at: null };
    await insertManyIgnoringDuplicates(this.keys, [...this.keysFor(doc), { _id: dueKey(doc) }]);
    try {
      await this.col.insertOne(doc);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /**
   * Events whose next round is due and that nobody holds, oldest due first, each with the
   * queue key it was found under (what `claim` takes). Keys that no longer say when their
   * event is due (left by a move a crash cut short) are replaced by the right one, then removed.
   */
  async due(now: Date, limit: number): Promise<DueEvent[]> {
    const entries = await this.keys
      .find({ _id: { $gte: DUE_PREFIX, $lt: `${DUE_PREFIX}${timeKey(now)}}` } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    if (entries.length === 0) return [];
    const ids = entries.map((e) => eventIdOf(e._id));
    const docs = new Map((await this.col.find({ _id: { $in: [...new Set(ids)] } }).toArray()).map((d) => [d._id, d]));
    const ready: DueEvent[] = [];
    const stale: string[] = [];
    const rightKeys: KeyDoc[] = [];
    for (const [i, entry] of entries.entries()) {
      const doc = docs.get(ids[i]);
      if (!doc) {
        // Keys are written before their event: a young one may belong to an insert in progress.
        if (timeOfKey(entry._id) < now.getTime() - ORPHAN_GRACE_MS) stale.push(entry._id);
      } else if (doc.status !== 'pending') {
        stale.push(entry._id);
      } else if (isDue(doc, now)) {
        if (ready.some((r) => r.id === doc._id)) stale.push(entry._id);
        else ready.push({ id: doc._id, key: entry._id, doc });
      } else {
        rightKeys.push({ _id: dueKey(doc) });
        stale.push(entry._id);
      }
    }
    await insertManyIgnoringDuplicates(this.keys, rightKeys);
    if (stale.length) await this.keys.deleteMany({ _id: { $in: stale } });
    return ready;
  }

  /**
   * Takes the event for one round, unless another process took it, it is held, settled or
   * gone. The queue key is the token: FerretDB's conditional updates are not atomic between
   * processes (two can both match), but of two deletes of one `_id` exactly one deletes it.
   * (A bare id stands for the key the event's own fields give.)
   */
  async claim(due: DueEvent | string, now: Date, leaseMs: number): Promise<WebhookOutboxDoc | null> {
    const id = typeof due === 'string' ? due : due.id;
    // Read by `due` a moment ago, or now; either way the key's deletion below decides.
    const doc = (typeof due === 'string' ? null : due.doc) ?? (await this.col.findOne({ _id: id }));
    if (!doc || doc.status !== 'pending' || !isDue(doc, now)) return null;
    const leaseUntil = new Date(now.getTime() + leaseMs);
    // The key for "the lease ran out" first: if this process dies, the event comes back then.
    await insertManyIgnoringDuplicates(this.keys, [{ _id: dueKeyAt(leaseUntil, id) }]);
    const taken = await this.keys.deleteOne({ _id: typeof due === 'string' ? dueKey(doc) : due.key });
    if (taken.deletedCount !== 1) return null; // another process has it; the key above is cleared by `due`
    await this.col.updateOne({ _id: id }, { $set: { lease_until: leaseUntil } });
    return { ...doc, lease_until: leaseUntil };
  }

  /**
   * Delivered (or nothing left to deliver), or given up on: the event leaves the queue and
   * keeps its status. `known`: the event as its holder has it now (saves reading it again).
   */
  async settle(id: string, outcome: { status: 'delivered' } | { status: 'failed'; error: string }, now = new Date(), known?: WebhookOutboxDoc): Promise<void> {
    const doc = known ?? (await this.col.findOne({ _id: id }));
    if (!doc) return;
    if (outcome.status === 'failed')
      await insertManyIgnoringDuplicates(this.keys, [{ _id: keyPrefix(doc.environment, 'f') + tailOf(doc), at: doc.created_at }]);
    await this.col.updateOne(
      { _id: id },
      { $set: { status: outcome.status, settled_at: now, lease_until: new Date(0), ...(outcome.status === 'failed' ? { last_error: outcome.error } : {}) } },
    );
    await this.dropKey(dueKey(doc));
  }

  /** A failed round: the next one at `at`; the lease ends now. */
  async retryAt(id: string, at: Date, error: string): Promise<void> {
    const doc = await this.col.findOne({ _id: id });
    if (!doc || doc.status !== 'pending') return;
    const next = dueKeyAt(at, id);
    await insertManyIgnoringDuplicates(this.keys, [{ _id: next }]);
    // By `_id` alone (checked pending above): see `holdUntil`.
    await this.col.updateOne({ _id: id }, { $set: { next_attempt_at: at, lease_until: new Date(0), last_error: error }, $inc: { rounds: 1 } });
    await this.dropKey(dueKey(doc), next);
  }

  /**
   * A pending event handed to its delivery workflow: dispatchers leave it alone until
   * `until` (past the workflow's whole schedule), then checks on it again. The due key moves
   * as in `retryAt` (new one first); the event's rounds and error stay.
   */
  async holdUntil(id: string, until: Date): Promise<void> {
    const doc = await this.col.findOne({ _id: id });
    if (!doc || doc.status !== 'pending') return;
    const next = dueKeyAt(until, id);
    await insertManyIgnoringDuplicates(this.keys, [{ _id: next }]);
    // By `_id` alone (checked pending above): FerretDB (SQLite) serves an update filtered on more
    // than `_id` 15-20x slower once several run at once (~70 vs ~1,300 a second, 20 at once), and
    // its conditional updates are no guard between processes anyway (see `claim`).
    await this.col.updateOne({ _id: id }, { $set: { lease_until: until } });
    await this.dropKey(dueKey(doc), next);
  }

  /** A failed attempt of a durable delivery: counted, with its error, while the workflow holds the event (its caller read it pending). */
  async noteFailedAttempt(id: string, error: string): Promise<void> {
    // By `_id` alone: see `holdUntil`.
    await this.col.updateOne({ _id: id }, { $set: { last_error: error }, $inc: { rounds: 1 } });
  }

  /**
   * A settled event back in the queue, due at `now`, same id and payload (a replay), as
   * replay n+1; its rounds start again. Returns the event, or why not: unknown (here), or
   * pending (being delivered, or another replay of it took this number first).
   */
  async requeue(environment: string, id: string, now = new Date()): Promise<RequeueResult> {
    const doc = await this.col.findOne({ _id: id });
    if (!doc || doc.environment !== environment) return { outcome: 'unknown' };
    if (doc.status === 'pending') return { outcome: 'pending' };
    const [event] = await this.takeReplays([doc], now);
    return event ? { outcome: 'requeued', event } : { outcome: 'pending' };
  }

  /**
   * `requeue` for a batch (a bulk replay), in a few requests for the whole batch (`_id $in`,
   * insertMany, bulkWrite). Returns the events now pending as their next replay, in the order
   * of `ids`; unknown, other environments', pending and raced ones are left out.
   */
  async requeueMany(environment: string, ids: readonly string[], now = new Date()): Promise<Array<WebhookOutboxDoc & { replay: number }>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return [];
    const found = new Map((await this.col.find({ _id: { $in: unique } }).toArray()).map((d) => [d._id, d]));
    const settled = unique.flatMap((id) => {
      const doc = found.get(id);
      return doc && doc.environment === environment && doc.status !== 'pending' ? [doc] : [];
    });
    return this.takeReplays(settled, now);
  }

  /**
   * Makes each settled event replay n+1 of itself. The replay's key (`#replay|<id>|<n>`) is
   * the claim: of processes naming the same replay, exactly one inserts it (FerretDB's
   * conditional updates could let several match, and on FerretDB an update filtering on more
   * than `_id` reads the whole collection), so the events are then updated by `_id` alone.
   * A key older than ORPHAN_GRACE_MS whose event was never updated belongs to a process that
   * died in between, before any workflow of that replay was started: it is taken over.
   */
  private async takeReplays(settled: WebhookOutboxDoc[], now: Date): Promise<Array<WebhookOutboxDoc & { replay: number }>> {
    if (settled.length === 0) return [];
    const claims = settled.map((doc) => ({ doc, replay: (doc.replay ?? 0) + 1 }));
    const keyOf = (c: (typeof claims)[number]) => replayKey(c.doc._id, c.replay);
    const taken = await insertEach(
      this.keys,
      claims.map((c) => ({ _id: keyOf(c), at: now })),
    );
    if (taken.includes(false)) {
      const held = new Map((await this.keys.find({ _id: { $in: claims.filter((_, i) => !taken[i]).map(keyOf) } }).toArray()).map((k) => [k._id, k]));
      for (const [i, c] of claims.entries()) {
        const at = held.get(keyOf(c))?.at;
        if (!taken[i]) taken[i] = at instanceof Date && at.getTime() < now.getTime() - ORPHAN_GRACE_MS;
      }
    }
    const mine = claims.filter((_, i) => taken[i]);
    if (mine.length === 0) return [];

    const set = { status: 'pending' as const, rounds: 0, next_attempt_at: now, lease_until: new Date(0), settled_at: null };
    await insertManyIgnoringDuplicates(
      this.keys,
      mine.map((c) => ({ _id: dueKeyAt(now, c.doc._id) })),
    );
    await this.col.bulkWrite(
      mine.map((c) => ({
        updateOne: { filter: { _id: c.doc._id }, update: { $set: { ...set, replay: c.replay }, $push: { replays: { n: c.replay, at: now } } } },
      })),
      { ordered: false },
    );
    // Where retention runs on the expiry keys, the replay's key leaves with its event.
    if (this.writeExpiryKeys)
      await this.keys.bulkWrite(
        mine.map((c) => ({ updateOne: { filter: { _id: EXPIRY_PREFIX + tailOf(c.doc) }, update: { $push: { ids: keyOf(c) } } } })),
        { ordered: false },
      );
    await this.keys.deleteMany({ _id: { $in: mine.map((c) => keyPrefix(c.doc.environment, 'f') + tailOf(c.doc)) } });
    return mine.map((c) => ({ ...c.doc, ...set, replay: c.replay, replays: [...(c.doc.replays ?? []), { n: c.replay, at: now }] }));
  }

  async get(id: string): Promise<WebhookOutboxDoc | null> {
    return this.col.findOne({ _id: id });
  }

  /** One page of an environment's events by creation time; the narrowest key the query names is read. */
  async list(q: WebhookEventQuery): Promise<WebhookEventPage> {
    const env = q.environment;
    const prefix =
      q.status === 'failed'
        ? keyPrefix(env, 'f')
        : q.connectionId !== undefined
          ? keyPrefix(env, 'c', q.connectionId)
          : q.type !== undefined
            ? keyPrefix(env, 't', q.type)
            : keyPrefix(env, 'a');
    // The key answers the environment and its own scope; the rest is read off the event
    // (status always: a failed key outlives a replay until the replay removes it).
    const checks: Array<(e: WebhookOutboxDoc) => boolean> = [];
    if (q.status) checks.push((e) => e.status === q.status);
    if (q.type !== undefined && !prefix.startsWith(keyPrefix(env, 't'))) checks.push((e) => e.type === q.type);
    if (q.connectionId !== undefined && !prefix.startsWith(keyPrefix(env, 'c'))) checks.push((e) => e.connection_id === q.connectionId);
    const page = await readRangePage<KeyDoc, WebhookOutboxDoc>(
      this.keys,
      {
        prefix,
        from: q.from,
        to: q.to,
        after: q.cursor === undefined ? undefined : decodeCursor(q.cursor, EVENT_TAIL),
        direction: q.direction ?? 'desc',
        limit: q.limit,
        match: checks.length ? (e) => checks.every((c) => c(e)) : undefined,
        maxExamined: q.maxExamined,
      },
      async (keys) => {
        const ids = keys.map((k) => eventIdOf(k._id));
        const docs = new Map((await this.col.find({ _id: { $in: ids } }).toArray()).map((d) => [d._id, d]));
        return ids.map((id) => docs.get(id) ?? null);
      },
    );
    return { events: page.items, nextCursor: page.next === null ? null : encodeCursor(page.next) };
  }

  /**
   * Deletes events created before `cutoff`, with their keys, through the expiry keys: each
   * batch is one range read and two deletes by `_id $in`. (Their delivery attempts expire
   * on their own, see webhook-deliveries.ts.)
   */
  async sweepExpired(cutoff: Date, batch = 500): Promise<number> {
    let removed = 0;
    for (;;) {
      const due = await this.keys
        .find({ _id: { $gte: EXPIRY_PREFIX, $lt: EXPIRY_PREFIX + timeKey(cutoff) } })
        .sort({ _id: 1 })
        .limit(batch)
        .toArray();
      if (due.length === 0) return removed;
      const tails = due.map((d) => d._id.slice(EXPIRY_PREFIX.length));
      const keyIds = due.flatMap((d, i) => [d._id, ...(d.ids ?? []), ...(d.environment === undefined ? [] : [keyPrefix(d.environment, 'f') + tails[i]])]);
      removed += (await this.col.deleteMany({ _id: { $in: tails.map(eventIdOfTail) } })).deletedCount;
      await this.keys.deleteMany({ _id: { $in: keyIds } });
      if (due.length < batch) return removed;
    }
  }

  private keysFor(doc: WebhookOutboxDoc): KeyDoc[] {
    const tail = tailOf(doc);
    const at = doc.created_at;
    const scopes = [keyPrefix(doc.environment, 'a'), keyPrefix(doc.environment, 't', doc.type)];
    if (typeof doc.connection_id === 'string') scopes.push(keyPrefix(doc.environment, 'c', doc.connection_id));
    const keys: KeyDoc[] = scopes.map((prefix) => ({ _id: prefix + tail, at }));
    if (this.writeExpiryKeys) keys.push({ _id: EXPIRY_PREFIX + tail, at, environment: doc.environment, ids: keys.map((k) => k._id) });
    return keys;
  }

  private async dropKey(key: string, unless?: string): Promise<void> {
    if (key !== unless) await this.keys.deleteOne({ _id: key });
  }

  /**
   * Events queued by earlier versions (no status: all were pending, delivered ones were
   * removed) get their keys and a due key once, so a dispatcher delivers them and the API
   * lists them. One scan of the outbox, which those versions kept small, at the first start.
   */
  private async adoptEarlierEvents(): Promise<void> {
    for await (const earlier of this.col.find({ status: { $exists: false } })) {
      const doc: WebhookOutboxDoc = {
        ...earlier,
        status: 'pending',
        connection_id: connectionIdOf(earlier.payload ?? {}),
        rounds: earlier.rounds ?? 0,
        last_error: earlier.last_error ?? null,
      };
      if (!(doc.created_at instanceof Date) || !(doc.next_attempt_at instanceof Date) || !(doc.lease_until instanceof Date)) continue;
      await insertManyIgnoringDuplicates(this.keys, [...this.keysFor(doc), { _id: dueKey(doc) }]);
      await this.col.updateOne({ _id: doc._id, status: { $exists: false } }, { $set: { status: 'pending', connection_id: doc.connection_id } });
    }
  }
}

function connectionIdOf(payload: Record<string, unknown>): string | null {
  return typeof payload.connectionId === 'string' ? payload.connectionId : null;
}

function tailOf(doc: Pick<WebhookOutboxDoc, '_id' | 'created_at'>): string {
  return `${timeKey(doc.created_at)}|${encodeURIComponent(doc._id)}`;
}

function eventIdOfTail(tail: string): string {
  return decodeURIComponent(tail.slice(tail.indexOf('|') + 1));
}

/** The event a scope or due key points to: what follows its last `|`. */
function eventIdOf(key: string): string {
  return decodeURIComponent(key.slice(key.lastIndexOf('|') + 1));
}

function timeOfKey(key: string): number {
  return Date.parse(key.slice(DUE_PREFIX.length, key.indexOf('|', DUE_PREFIX.length)));
}

function isDue(doc: Pick<WebhookOutboxDoc, 'next_attempt_at' | 'lease_until'>, now: Date): boolean {
  return doc.next_attempt_at.getTime() <= now.getTime() && doc.lease_until.getTime() <= now.getTime();
}

function replayKey(id: string, replay: number): string {
  return `${REPLAY_PREFIX}${encodeURIComponent(id)}|${replay}`;
}

/** Inserts each document on its own (unordered); which ones went in, false where the `_id` was taken. */
async function insertEach(col: Collection<KeyDoc>, docs: KeyDoc[]): Promise<boolean[]> {
  const inserted = docs.map(() => true);
  try {
    await col.insertMany(docs, { ordered: false });
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) {
      if (docs.length === 1 && isDuplicateKey(err)) return [false];
      throw err;
    }
    for (const e of Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors]) {
      if (e.code !== 11000) throw err;
      inserted[e.index] = false;
    }
  }
  return inserted;
}

function dueKeyAt(at: Date, id: string): string {
  return `${DUE_PREFIX}${timeKey(at)}|${encodeURIComponent(id)}`;
}

/** Where a pending event waits in the queue: its next round, or the end of the lease holding it. */
function dueKey(doc: Pick<WebhookOutboxDoc, '_id' | 'next_attempt_at' | 'lease_until'>): string {
  return dueKeyAt(new Date(Math.max(doc.next_attempt_at.getTime(), doc.lease_until.getTime())), doc._id);
}
