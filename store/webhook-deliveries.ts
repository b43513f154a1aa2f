import type { Collection, Db } from 'mongodb';
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
  target: 'primary' | 'secondary';
  url: string; // secrets in the query string redacted
  attempt: number; // 1-based, per URL
  status: number | null; // HTTP status, null when no response came back
  error: string | null;
  duration_ms: number;
  created_at: Date;
}

export class WebhookDeliveryStore {
  private readonly col: Collection<WebhookDeliveryDoc>;
  constructor(db: Db) {
    this.col = db.collection<WebhookDeliveryDoc>('webhook_deliveries');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    const rule = await ensureExpiry(this.col, 'created_at', RETENTION_SECONDS);
    await this.col.createIndex({ environment: 1, event_id: 1, created_at: 1 });
    await this.col.createIndex({ environment: 1, type: 1, created_at: -1 });
    return [rule];
  }

  async record(entry: WebhookDeliveryDoc): Promise<void> {
    await this.col.insertOne({ ...entry });
  }

  /** Every attempt of one event, oldest first. */
  async listForEvent(environment: string, eventId: string): Promise<WebhookDeliveryDoc[]> {
    return this.col.find({ environment, event_id: eventId }, { projection: { _id: 0 } }).sort({ created_at: 1, target: 1, attempt: 1 }).toArray();
  }

  async list(filter: { environment: string; type?: string }, limit = 100): Promise<WebhookDeliveryDoc[]> {
    const q: Record<string, unknown> = { environment: filter.environment };
    if (filter.type) q.type = filter.type;
    return this.col.find(q, { projection: { _id: 0 } }).sort({ created_at: -1 }).limit(limit).toArray();
  }
}
