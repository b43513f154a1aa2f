import type { Collection, Db } from 'mongodb';
import { ensureExpiry, type ExpiryRule } from './ttl';

/** One third-party request, as an operator sees it in `GET /logs`. Secrets already removed. */
export interface RequestLogDoc {
  at: Date;
  environment: string;
  connection: string | null;
  connection_id: string | null;
  integration: string;
  operation: string; // sync:<name>, action:<name>, proxy, auth
  run_id: string | null;
  method: string;
  url: string;
  status: number | null;
  duration_ms: number;
  attempt: number;
  rate_limit_wait_ms: number;
  error: string | null;
}

export class RequestLogStore {
  private readonly col: Collection<RequestLogDoc>;
  constructor(db: Db, private readonly ttlDays: number) {
    this.col = db.collection<RequestLogDoc>('request_logs');
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    const rule = await ensureExpiry(this.col, 'at', this.ttlDays * 86_400);
    await this.col.createIndex({ environment: 1, connection_id: 1, at: -1 });
    return [rule];
  }

  async insert(entry: RequestLogDoc): Promise<void> {
    await this.col.insertOne(entry);
  }

  async list(filter: { environment: string; runId?: string; connectionId?: string }, limit = 100): Promise<RequestLogDoc[]> {
    const q: Record<string, unknown> = { environment: filter.environment };
    if (filter.runId) q.run_id = filter.runId;
    if (filter.connectionId) q.connection_id = filter.connectionId;
    return this.col.find(q, { projection: { _id: 0 } }).sort({ at: -1 }).limit(limit).toArray();
  }
}
