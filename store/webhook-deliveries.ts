import type { Collection, Db } from 'mongodb';
import { redactText, redactUrl } from '../common/secrets';
import { keyPrefix, readRangePage, timeKey, uniqueSuffix } from './key-range';
import { rekeyEarlierDocuments, runOnce } from './migrations';
import { ensureExpiry, type ExpiryRule } from './ttl';

/** How long delivery attempts are kept for operators to inspect. */
const RETENTION_SECONDS = 30 * 86_400;

/**
 * One attempt to POST one webhook event to one URL. Holds no payload: the outcome and
 * where it went, nothing an app or a third party would consider secret.
 */
export interface WebhookDeliveryDoc {
  event_id: string; // the `webhook-id` header, stable across attempts and URLs
  type: string; // auth, sync, async_action, forward
  environment: string;
  /** `override`: the connection's `webhook_url_override`, sent to instead of the environment's URLs; `alert`: the chat alert URL. */
  target: 'primary' | 'secondary' | 'override' | 'alert';
  url: string; // redacted (common/secrets): query secrets, userinfo, a webhook's secret path (Slack, Discord, Teams)
  attempt: number; // 1-based, per URL
  status: number | null; // HTTP status, null when no response came back
  error: string | null;
  duration_ms: number;
  created_at: Date;
  /** The start of the receiver's answer, secrets replaced (deliveries since durable delivery). */
  response_excerpt?: string | null;
}

/**
 * `_id` = `<event id>|<time>|<suffix>`: an event's attempts are one `_id` range (key-range.ts).
 * Where the server has no TTL, `#expiry|<time>|<suffix>` names each attempt for the retention
 * sweep, which then reads what expired as a range. Attempts expire on their own clock, also
 * those of deliveries made outside the outbox.
 */
type Stored = (WebhookDeliveryDoc & { _id: string }) | { _id: string; at: Date; created_at?: Date; ids: string[] };

const EXPIRY_PREFIX = '#expiry|';
/** More attempts than one event can have (rounds over a day, a few tries per URL each). */
const MAX_ATTEMPTS_LISTED = 2_000;

export class WebhookDeliveryStore {
  private readonly col: Collection<Stored>;
  private writeExpiryKeys = true;

  constructor(private readonly db: Db) {
    this.col = db.collection<Stored>('webhook_deliveries');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    const rule = await ensureExpiry(this.col, 'created_at', RETENTION_SECONDS, { sweep: (cutoff) => this.sweepExpired(cutoff) });
    this.writeExpiryKeys = !rule.native;
    // Reads are `_id` ranges now; these only cost writes (and on FerretDB served nothing).
    for (const name of ['environment_1_event_id_1_created_at_1', 'environment_1_type_1_created_at_-1', ...(rule.native ? [] : ['created_at_1'])]) {
      await this.col.dropIndex(name).catch(() => undefined);
    }
    await runOnce(this.db, 'webhook_deliveries_keyed', () => this.adoptEarlierAttempts());
    return [rule];
  }

  async record(entry: WebhookDeliveryDoc, suffix: string = uniqueSuffix()): Promise<void> {
    await this.col.insertMany(this.documentsFor(redacted(entry), suffix), { ordered: false });
  }

  /** Every attempt of one event, oldest first. */
  async listForEvent(environment: string, eventId: string): Promise<WebhookDeliveryDoc[]> {
    const page = await readRangePage(this.col as unknown as Collection<WebhookDeliveryDoc & { _id: string }>, {
      prefix: keyPrefix(eventId),
      direction: 'asc',
      limit: MAX_ATTEMPTS_LISTED,
    });
    return (
      page.items
        .filter((d) => d.environment === environment)
        // Redacted again as read: attempts recorded before a rule existed (a Slack URL's path) are shown without it.
        .map(({ _id, ...attempt }) => redacted(attempt))
        .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.target.localeCompare(b.target) || a.attempt - b.attempt)
    );
  }

  /** Deletes attempts made before `cutoff`: per batch one range read and one delete by `_id $in`. */
  async sweepExpired(cutoff: Date, batch = 500): Promise<number> {
    let removed = 0;
    for (;;) {
      const due = (await this.col
        .find({ _id: { $gte: EXPIRY_PREFIX, $lt: EXPIRY_PREFIX + timeKey(cutoff) } })
        .sort({ _id: 1 })
        .limit(batch)
        .toArray()) as Array<{ _id: string; ids?: string[] }>;
      if (due.length === 0) return removed;
      const ids = due.flatMap((d) => d.ids ?? []);
      removed += (await this.col.deleteMany({ _id: { $in: [...ids, ...due.map((d) => d._id)] } })).deletedCount - due.length;
      if (due.length < batch) return removed;
    }
  }

  private documentsFor(entry: WebhookDeliveryDoc, suffix: string): Stored[] {
    const tail = `${timeKey(entry.created_at)}|${suffix}`;
    const id = keyPrefix(entry.event_id) + tail;
    const docs: Stored[] = [{ ...entry, _id: id }];
    // `created_at` too: should one be written where the TTL index runs, it expires with its attempt.
    if (this.writeExpiryKeys) docs.push({ _id: EXPIRY_PREFIX + tail, at: entry.created_at, created_at: entry.created_at, ids: [id] });
    return docs;
  }

  /**
   * Attempts recorded by earlier versions (ObjectId `_id`) are rewritten once into the keyed
   * layout (suffix: their ObjectId, so processes starting together write the same keys).
   */
  private async adoptEarlierAttempts(): Promise<void> {
    await rekeyEarlierDocuments<WebhookDeliveryDoc, Stored>(
      this.col,
      (doc) => doc.created_at instanceof Date && typeof doc.event_id === 'string',
      (attempt, suffix) => this.documentsFor(attempt, suffix),
    );
  }
}

/**
 * The attempt as it may be kept and shown: the URL, the error and the receiver's answer
 * without secrets. Whoever records an attempt passes the URL redacted already; this holds
 * for every writer and for attempts kept before a rule was added.
 */
function redacted(attempt: WebhookDeliveryDoc): WebhookDeliveryDoc {
  return {
    ...attempt,
    url: redactUrl(attempt.url),
    error: attempt.error === null ? null : redactText(attempt.error),
    ...(typeof attempt.response_excerpt === 'string' && { response_excerpt: redactText(attempt.response_excerpt) }),
  };
}
