import type { Collection, Db } from 'mongodb';

/**
 * Webhook events waiting to be delivered, one document per event keyed by its `webhook-id`,
 * written before anyone tries to send it: a process that dies mid-delivery leaves the
 * event here, and a sweeper delivers it later under the same id. Delivered events are
 * removed, so the collection holds only what is in flight or waiting for a retry (FerretDB
 * answers the sweep's query by scanning it; it stays small).
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
  /** Delivery rounds so far (each round may make a few quick attempts per URL). */
  rounds: number;
  /** When the next round is due. */
  next_attempt_at: Date;
  /** A round in progress holds the event until then; past it (the process died), it is free again. */
  lease_until: Date;
  last_error: string | null;
}

export class WebhookOutboxStore {
  private readonly col: Collection<WebhookOutboxDoc>;
  constructor(db: Db) {
    this.col = db.collection<WebhookOutboxDoc>('webhook_outbox');
  }

  async ensureIndexes(): Promise<void> {
    // Serves the sweep on MongoDB; FerretDB's SQLite backend scans (the collection stays small).
    await this.col.createIndex({ next_attempt_at: 1 });
  }

  /** Records a new event, already leased by the caller for its first round. */
  async add(doc: Omit<WebhookOutboxDoc, 'rounds' | 'last_error'>): Promise<void> {
    await this.col.insertOne({ ...doc, rounds: 0, last_error: null });
  }

  /** Ids of events whose next round is due and that nobody holds. */
  async due(now: Date, limit: number): Promise<string[]> {
    const docs = await this.col
      .find({ next_attempt_at: { $lte: now }, lease_until: { $lte: now } }, { projection: { _id: 1 } })
      .sort({ next_attempt_at: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => d._id);
  }

  /** Takes the event for one round, unless another process holds it or it is gone. */
  async claim(id: string, now: Date, leaseMs: number): Promise<WebhookOutboxDoc | null> {
    return this.col.findOneAndUpdate(
      { _id: id, next_attempt_at: { $lte: now }, lease_until: { $lte: now } },
      { $set: { lease_until: new Date(now.getTime() + leaseMs) } },
      { returnDocument: 'after' },
    );
  }

  /** Delivered (or nothing left to deliver): the event leaves the outbox. */
  async remove(id: string): Promise<void> {
    await this.col.deleteOne({ _id: id });
  }

  /** A failed round: the next one at `at`; the lease ends now. */
  async retryAt(id: string, at: Date, error: string): Promise<void> {
    await this.col.updateOne({ _id: id }, { $set: { next_attempt_at: at, lease_until: new Date(0), last_error: error }, $inc: { rounds: 1 } });
  }

  async get(id: string): Promise<WebhookOutboxDoc | null> {
    return this.col.findOne({ _id: id });
  }
}
