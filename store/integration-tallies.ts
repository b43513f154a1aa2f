import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { keyId, keyPrefixRange } from './key-ids';

/**
 * What `GET /integrations/:key/status` counts, kept so that it reads a few documents
 * however many connections an integration has: reading every connection and sync state
 * costs FerretDB a decode per document (~0.1-0.5 ms each; 1,000 sync states took 0.4-0.6 s),
 * and a count over an `_id` range decodes them all too.
 *
 * Per integration, SHARDS documents (`_id` keyId(environment, integration, n)); each holds
 * one number per connection (`c.<key>`) and one per sync state (`s.<key>`), the key being
 * the document's own `_id`. The number is `time × 4 + code`, written with `$max`: a write is
 * idempotent (a retried or repeated one changes nothing), needs no read of what was there,
 * and one carrying an older time (a rebuild that read a document before it changed) never
 * undoes a newer one. Removed with `$unset` when the connection or sync state goes.
 */
const SHARDS = 16;

/** A sync's last finished run; the time is when it finished (0 for none). */
export const SYNC_NEVER_RUN = 0;
export const SYNC_SUCCESS = 1;
export const SYNC_ERROR = 2;
/** A connection's auth state; the time is when it last changed. */
export const CONNECTION_OK = 1;
export const CONNECTION_NEEDS_REAUTHORIZATION = 2;

interface TallyDoc {
  _id: string;
  /** connection `_id` (escaped) → time × 4 + CONNECTION_* */
  c?: Record<string, number>;
  /** sync state `_id` (escaped) → time × 4 + SYNC_* */
  s?: Record<string, number>;
}

export interface TallyEntry {
  /** The connection's or sync state's `_id`. */
  id: string;
  code: number;
  at: number;
}

interface IntegrationTally {
  connections: TallyEntry[];
  syncs: TallyEntry[];
}

interface Scope {
  environment: string;
  provider_config_key: string;
}

export class IntegrationTallyStore {
  private readonly col: Collection<TallyDoc>;
  constructor(db: Db) {
    this.col = db.collection<TallyDoc>('integration_tallies');
  }

  /** One range read of the integration's SHARDS documents. */
  async read(environment: string, providerConfigKey: string): Promise<IntegrationTally> {
    const docs = await this.col.find({ _id: keyPrefixRange(environment, providerConfigKey) }).toArray();
    const out: IntegrationTally = { connections: [], syncs: [] };
    for (const doc of docs) {
      for (const [k, v] of Object.entries(doc.c ?? {})) out.connections.push(entry(k, v));
      for (const [k, v] of Object.entries(doc.s ?? {})) out.syncs.push(entry(k, v));
    }
    return out;
  }

  async setConnection(scope: Scope, id: string, code: number, at: Date): Promise<void> {
    await this.write(scope, id, { $max: { [`c.${fieldKey(id)}`]: at.getTime() * 4 + code } });
  }

  async removeConnection(scope: Scope, id: string): Promise<void> {
    await this.write(scope, id, { $unset: { [`c.${fieldKey(id)}`]: '' } }, false);
  }

  /** A sync's last finished run (`at` null: it has none yet). */
  async setSync(scope: Scope, id: string, code: number, at: Date | null): Promise<void> {
    await this.write(scope, id, { $max: { [`s.${fieldKey(id)}`]: (at?.getTime() ?? 0) * 4 + code } });
  }

  async removeSyncs(scope: Scope, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const byShard = new Map<string, Record<string, ''>>();
    for (const id of ids) {
      const shard = shardId(scope, id);
      byShard.set(shard, { ...byShard.get(shard), [`s.${fieldKey(id)}`]: '' });
    }
    await this.col.bulkWrite(
      [...byShard].map(([_id, unset]) => ({ updateOne: { filter: { _id }, update: { $unset: unset } } })),
      { ordered: false },
    );
  }

  /** Every entry of every integration, as `(scope, ids)` (the rebuild's check for entries whose document is gone). */
  async *allEntries(): AsyncIterable<{ scope: Scope; kind: 'c' | 's'; id: string }> {
    for await (const doc of this.col.find({})) {
      const [environment, provider_config_key] = doc._id.split('|').map(decodeURIComponent);
      for (const k of Object.keys(doc.c ?? {})) yield { scope: { environment, provider_config_key }, kind: 'c', id: unescapeKey(k) };
      for (const k of Object.keys(doc.s ?? {})) yield { scope: { environment, provider_config_key }, kind: 's', id: unescapeKey(k) };
    }
  }

  private async write(scope: Scope, id: string, update: object, upsert = true): Promise<void> {
    await upsertRetried(() => this.col.updateOne({ _id: shardId(scope, id) }, update, { upsert }));
  }
}

/**
 * Two upserts of a shard that does not exist yet may both insert it; the one that loses gets
 * a duplicate key error (MongoDB and FerretDB alike), and tried again it finds the shard.
 * Every write here is idempotent, so a write that partly happened is safe to repeat.
 */
async function upsertRetried<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return write();
  }
}

function shardId(scope: Scope, id: string): string {
  const n = createHash('sha1').update(id).digest().readUInt32BE(0) % SHARDS;
  return keyId(scope.environment, scope.provider_config_key, String(n));
}

/** A field name holds no `.` and starts with no `$`: those (and `%`, so that this is one-to-one) are percent-escaped. */
function fieldKey(id: string): string {
  return id.replace(/[%.$]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function unescapeKey(k: string): string {
  return k.replace(/%(25|2E|24)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function entry(k: string, v: number): TallyEntry {
  return { id: unescapeKey(k), code: v % 4, at: Math.floor(v / 4) };
}

/** What a rebuild reads of a connection and of a sync state. */
interface ConnectionFields extends Scope {
  _id: string;
  auth_status: string;
  updated_at: Date;
}
interface SyncFields extends Scope {
  _id: string;
  last_run?: { status: string; finished_at: Date | null } | null;
  last_finished?: { status: string; at: Date } | null;
}

/** The entry of a sync state as its document says: its last finished run. */
export function syncEntryOf(doc: Pick<SyncFields, 'last_run' | 'last_finished'>): { code: number; at: Date | null } {
  const finished =
    doc.last_finished ?? (doc.last_run && doc.last_run.status !== 'RUNNING' ? { status: doc.last_run.status, at: doc.last_run.finished_at } : null);
  if (!finished?.at) return { code: SYNC_NEVER_RUN, at: null };
  return { code: finished.status === 'ERROR' ? SYNC_ERROR : SYNC_SUCCESS, at: finished.at };
}

const REBUILD_BATCH = 500;

/**
 * Writes every connection's and sync state's entry from its document, then removes entries
 * whose document is gone (each checked again by `_id` first: one made during the pass is
 * kept). Idempotent, safe beside live writes (`$max`: a write carrying an older time never
 * undoes a newer one); the first start of this version fills the tallies with it, and the
 * worker's start-up pass repairs what a process that died between two writes left.
 */
export async function rebuildTallies(db: Db, tallies: IntegrationTallyStore = new IntegrationTallyStore(db)): Promise<{ entries: number; removed: number }> {
  const col = db.collection<TallyDoc>('integration_tallies');
  const seen = new Set<string>();
  let batch: Array<{ scope: Scope; field: string; value: number }> = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const writes = batch;
    await upsertRetried(() =>
      col.bulkWrite(
        writes.map((b) => ({
          updateOne: {
            filter: { _id: shardId(b.scope, b.field.slice(2)) },
            update: { $max: { [b.field.slice(0, 2) + fieldKey(b.field.slice(2))]: b.value } },
            upsert: true,
          },
        })),
        { ordered: false },
      ),
    );
    batch = [];
  };
  const add = async (scope: Scope, kind: 'c' | 's', id: string, value: number) => {
    seen.add(`${kind}.${id}`);
    batch.push({ scope, field: `${kind}.${id}`, value });
    if (batch.length >= REBUILD_BATCH) await flush();
  };
  const connections = db.collection<ConnectionFields>('connections');
  const syncs = db.collection<SyncFields>('syncs');
  for await (const c of connections.find({}, { projection: { environment: 1, provider_config_key: 1, auth_status: 1, updated_at: 1 } })) {
    if (typeof c.environment !== 'string' || typeof c.provider_config_key !== 'string') continue;
    const code = c.auth_status === 'ok' ? CONNECTION_OK : CONNECTION_NEEDS_REAUTHORIZATION;
    await add(c, 'c', c._id, c.updated_at.getTime() * 4 + code);
  }
  for await (const s of syncs.find({}, { projection: { environment: 1, provider_config_key: 1, last_run: 1, last_finished: 1 } })) {
    if (typeof s.environment !== 'string' || typeof s.provider_config_key !== 'string' || typeof s._id !== 'string') continue;
    const e = syncEntryOf(s);
    await add(s, 's', s._id, (e.at?.getTime() ?? 0) * 4 + e.code);
  }
  await flush();
  let removed = 0;
  for await (const e of tallies.allEntries()) {
    if (seen.has(`${e.kind}.${e.id}`)) continue;
    const still =
      e.kind === 'c' ? await connections.findOne({ _id: e.id }, { projection: { _id: 1 } }) : await syncs.findOne({ _id: e.id }, { projection: { _id: 1 } });
    if (still) continue;
    if (e.kind === 'c') await tallies.removeConnection(e.scope, e.id);
    else await tallies.removeSyncs(e.scope, [e.id]);
    removed++;
  }
  return { entries: seen.size, removed };
}
