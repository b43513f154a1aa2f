import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key';
import { keyId, keyPrefixRange } from './key-ids';
import { runOnce } from './migrations';
import { IntegrationTallyStore, rebuildTallies, syncEntryOf, SYNC_NEVER_RUN } from './integration-tallies';

export type ModelCounts = Record<string, { added: number; updated: number; deleted: number }>;

/** Why a sync run failed: a stable code, a message, and the structured detail where there is one. */
export interface SyncRunError {
  code: string;
  message: string;
  /** E.g. the validation failure record `{ validation: [{ path, message, code }], model }`. */
  detail?: unknown;
}

/** INITIAL: the sync has no successful run yet (or was reset); INCREMENTAL: it goes on from its last successful one. */
export type SyncRunType = 'INITIAL' | 'INCREMENTAL';

export interface SyncDoc {
  /** syncId(key): read and written by `_id` only (documents of earlier versions are moved at start-up). */
  _id: string;
  environment: string;
  connection: string; // ConnectionDoc._id
  connection_id: string;
  provider_config_key: string;
  name: string;
  variant: string;
  /** The connection's override as it was asked for (null: the sync's default); read only to rebuild or reconcile the schedule. */
  frequency: string | null;
  /**
   * Where checkpoints lived before they moved to `sync_checkpoints`; still read when that
   * has none. (A checkpoint can be large, a delta cursor with a folder map of hundreds of
   * KB, and every status update of the sync would read and rewrite it.)
   */
  checkpoint?: unknown;
  /** Start time of the last successful run: what `ctx.lastSyncDate` is on the next one. */
  last_success_started_at: Date | null;
  last_run: {
    id: string;
    status: 'RUNNING' | 'SUCCESS' | 'ERROR';
    started_at: Date;
    finished_at: Date | null;
    result: ModelCounts | null;
    error: SyncRunError | null;
  } | null;
  record_count: Record<string, number>;
  /**
   * The last run that ended, kept while the next one runs (`last_run` then says RUNNING):
   * a run ending as the one before did changes nothing in the integration's tally (see
   * IntegrationTallyStore), so a no-change run writes nothing more. Absent in documents of
   * earlier versions until their next run ends.
   */
  last_finished?: { status: 'SUCCESS' | 'ERROR'; at: Date };
  /** A variant's place among its sync's variants (`sync_variant_slots`); absent: the base, or a variant made before places. */
  slot?: number;
  created_at: Date;
  updated_at: Date;
}

type NewSyncState = Pick<SyncDoc, 'environment' | 'connection' | 'connection_id' | 'provider_config_key' | 'name' | 'variant'>;

export interface SyncKey {
  connection: string;
  name: string;
  variant: string;
}

/** The integration-level checkpoint of one sync, kept across runs (ctx.getCheckpoint / saveCheckpoint). */
interface CheckpointDoc {
  /** checkpointId(key): read and written by `_id` only. */
  _id: string;
  connection: string;
  checkpoint: unknown;
  updated_at: Date;
}

/**
 * One of a sync's numbered places for variants, taken by inserting its `_id` (the only
 * uniqueness FerretDB keeps): a duplicate key means another variant holds it.
 */
interface VariantSlotDoc {
  /** slotId(connection, sync, n); a connection's slots share its prefix. */
  _id: string;
  connection: string;
  variant: string;
  claimed_at: Date;
}

/**
 * A slot whose variant has no state holding it is left by a create or delete that stopped
 * half-way (the slot is taken before the state is written and freed after it is deleted);
 * once this old, it is free again.
 */
const ABANDONED_SLOT_MS = 60_000;

function slotId(connection: string, name: string, n: number): string {
  return keyId(connection, name, String(n));
}

/** A sync's state and its checkpoint share this `_id`; a connection's syncs share its prefix. */
function syncId(key: SyncKey): string {
  return keyId(key.connection, key.name, key.variant);
}
const checkpointId = syncId;

export class SyncStore {
  private readonly col: Collection<SyncDoc>;
  private readonly checkpoints: Collection<CheckpointDoc>;
  private readonly slots: Collection<VariantSlotDoc>;
  private readonly tallies: IntegrationTallyStore;
  constructor(private readonly db: Db) {
    this.tallies = new IntegrationTallyStore(db);
    this.col = db.collection<SyncDoc>('syncs');
    this.checkpoints = db.collection<CheckpointDoc>('sync_checkpoints');
    this.slots = db.collection<VariantSlotDoc>('sync_variant_slots');
  }

  async ensureIndexes(): Promise<void> {
    await this.col.createIndex({ environment: 1, provider_config_key: 1 });
    // deleteForConnection reads `_id` ranges now; these indexes only cost writes.
    await this.checkpoints.dropIndex('connection_1').catch(() => undefined);
    await this.col.dropIndex('connection_1').catch(() => undefined);
    await runOnce(this.db, 'syncs_by_key', () => this.moveToKeyedIds());
    // After the move: entries are keyed by the states' `_id`s.
    await runOnce(this.db, 'integration_tallies', async () => {
      await rebuildTallies(this.db, this.tallies);
    });
  }

  /**
   * Earlier versions gave sync states random `_id`s, found by (connection, name, variant)
   * with a unique index: each moves to its syncId (inserted there, then deleted where it
   * was; a copy already there, written by a newer process, wins). Idempotent.
   */
  private async moveToKeyedIds(): Promise<void> {
    // The key is the `_id` now; the old unique index would refuse the copy beside its original.
    await this.col.dropIndex('connection_1_name_1_variant_1').catch(() => undefined);
    for await (const doc of this.col.find({})) {
      const id = syncId(doc);
      if (doc._id === id) continue;
      try {
        await this.col.insertOne({ ...doc, _id: id });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      await this.col.deleteOne({ _id: doc._id });
    }
  }

  /** Creates the sync's state document if missing (idempotent; concurrent callers get the same one). */
  async ensure(input: NewSyncState): Promise<SyncDoc> {
    const _id = syncId(input);
    return (await this.col.findOne({ _id })) ?? (await this.create(input)) ?? ((await this.col.findOne({ _id })) as SyncDoc);
  }

  /**
   * A new variant of a sync, in the first free one of the sync's `limit` slots: creates
   * racing in any number of processes never make more than `limit` variants, nor refuse
   * one while a slot is free. `exists`: the name is taken; `full`: no slot is free (nothing
   * created either way). Variants made before slots hold none and count against the limit:
   * slots are taken below `limit` minus their number (which only ever falls).
   */
  async createVariant(input: NewSyncState, opts: { limit: number; base: string }): Promise<SyncDoc | 'exists' | 'full'> {
    const variants = (await this.listForConnection(input.connection)).filter((s) => s.name === input.name && s.variant !== opts.base);
    if (variants.some((s) => s.variant === input.variant)) return 'exists';
    const unslotted = variants.filter((s) => s.slot === undefined).length;
    for (const n of await this.freeSlots(input, opts.limit - unslotted, variants)) {
      const claim: VariantSlotDoc = {
        _id: slotId(input.connection, input.name, n),
        connection: input.connection,
        variant: input.variant,
        claimed_at: new Date(),
      };
      try {
        await this.slots.insertOne(claim);
      } catch (err) {
        if (isDuplicateKey(err)) continue;
        throw err;
      }
      const doc = await this.create(input, n);
      if (doc) return doc;
      // A concurrent create of the same name won.
      await this.slots.deleteOne({ _id: claim._id, claimed_at: claim.claimed_at });
      return 'exists';
    }
    // The last slot may have gone to a concurrent create of this very name, its state not yet written.
    // Filtered here, not in the query: FerretDB reads only a bare `_id` range through its index.
    const claims = await this.slots.find({ _id: keyPrefixRange(input.connection, input.name) }).toArray();
    return claims.some((c) => c.variant === input.variant) ? 'exists' : 'full';
  }

  /** The slot numbers below `below` that no variant holds, once abandoned claims are freed. */
  private async freeSlots(key: Pick<SyncKey, 'connection' | 'name'>, below: number, variants: SyncDoc[]): Promise<number[]> {
    const held = new Set<string>();
    const abandonedBefore = Date.now() - ABANDONED_SLOT_MS;
    for (const slot of await this.slots.find({ _id: keyPrefixRange(key.connection, key.name) }).toArray()) {
      const holder = variants.find((s) => s.variant === slot.variant && s.slot !== undefined && slotId(key.connection, key.name, s.slot) === slot._id);
      if (!holder && slot.claimed_at.getTime() < abandonedBefore) {
        // Conditional: a claim made again meanwhile stays.
        await this.slots.deleteOne({ _id: slot._id, claimed_at: slot.claimed_at });
      } else held.add(slot._id);
    }
    return Array.from({ length: Math.max(0, below) }, (_, n) => n).filter((n) => !held.has(slotId(key.connection, key.name, n)));
  }

  /** A new sync state (a variant, in `slot` if it holds one), or null when one with this key exists already (a concurrent create won). */
  async create(input: NewSyncState, slot?: number): Promise<SyncDoc | null> {
    const now = new Date();
    const doc: SyncDoc = {
      _id: syncId(input),
      ...input,
      frequency: null,
      last_success_started_at: null,
      last_run: null,
      record_count: {},
      ...(slot === undefined ? {} : { slot }),
      created_at: now,
      updated_at: now,
    };
    try {
      await this.col.insertOne(doc);
    } catch (err) {
      if (isDuplicateKey(err)) return null;
      throw err;
    }
    await this.tallies.setSync(doc, doc._id, SYNC_NEVER_RUN, null);
    return doc;
  }

  /** Sync states by `_id` (the integration status's latest errors): one `_id $in` read. */
  async getMany(ids: string[]): Promise<SyncDoc[]> {
    if (ids.length === 0) return [];
    return this.col.find({ _id: { $in: ids } }).toArray();
  }

  async get(key: SyncKey): Promise<SyncDoc | null> {
    return this.col.findOne({ _id: syncId(key) });
  }

  /** The connection's syncs by name and variant: one `_id` range (their ids share the connection's prefix). */
  async listForConnection(connection: string): Promise<SyncDoc[]> {
    const docs = await this.col
      .find({ _id: keyPrefixRange(connection) })
      .sort({ _id: 1 })
      .toArray();
    return docs.sort((a, b) => (a.name === b.name ? cmp(a.variant, b.variant) : cmp(a.name, b.name)));
  }

  /** Every sync state of every environment, in `_id` order (the worker's schedule reconcile pass reads them all). */
  all(): AsyncIterable<SyncDoc> {
    return this.col.find({}).sort({ _id: 1 });
  }

  async markRunStarted(key: SyncKey, runId: string, startedAt: Date): Promise<void> {
    await this.col.updateOne(
      { _id: syncId(key) },
      {
        $set: {
          last_run: { id: runId, status: 'RUNNING', started_at: startedAt, finished_at: null, result: null, error: null },
          updated_at: new Date(),
        },
      },
    );
  }

  async markRunSucceeded(key: SyncKey, run: { id: string; startedAt: Date; result: ModelCounts; recordCount: Record<string, number> }): Promise<void> {
    const now = new Date();
    await this.markRunEnded(key, 'SUCCESS', now, {
      last_run: { id: run.id, status: 'SUCCESS', started_at: run.startedAt, finished_at: now, result: run.result, error: null },
      last_success_started_at: run.startedAt,
      record_count: run.recordCount,
    });
  }

  async markRunFailed(key: SyncKey, run: { id: string; startedAt: Date; error: SyncRunError }): Promise<void> {
    const now = new Date();
    await this.markRunEnded(key, 'ERROR', now, {
      last_run: { id: run.id, status: 'ERROR', started_at: run.startedAt, finished_at: now, result: null, error: run.error },
    });
  }

  /**
   * One write, which also answers what the state was (findAndModify, as an update costs);
   * the integration's tally is written only when the outcome changed, or on every error
   * (its time orders the latest errors). A state deleted meanwhile is not brought back.
   */
  private async markRunEnded(key: SyncKey, status: 'SUCCESS' | 'ERROR', now: Date, set: Partial<SyncDoc>): Promise<void> {
    const before = await this.col.findOneAndUpdate(
      { _id: syncId(key) },
      { $set: { ...set, last_finished: { status, at: now }, updated_at: now } },
      // No projection: FerretDB's findAndModify has none.
      { returnDocument: 'before' },
    );
    if (!before) return;
    const previous = syncEntryOf(before);
    const next = syncEntryOf({ last_finished: { status, at: now } });
    if (status === 'SUCCESS' && previous.code === next.code) return;
    await this.tallies.setSync(before, before._id, next.code, now);
  }

  async getCheckpoint(key: SyncKey): Promise<unknown> {
    const doc = await this.checkpoints.findOne({ _id: checkpointId(key) });
    if (doc) return doc.checkpoint;
    return (await this.get(key))?.checkpoint ?? null;
  }

  /** Every checkpoint of a connection's syncs by their state's `_id`: one `_id` range read. */
  async checkpointsForConnection(connection: string): Promise<Map<string, unknown>> {
    const docs = await this.checkpoints.find({ _id: keyPrefixRange(connection) }).toArray();
    return new Map(docs.map((d) => [d._id, d.checkpoint]));
  }

  async saveCheckpoint(key: SyncKey, checkpoint: unknown): Promise<void> {
    await this.checkpoints.replaceOne({ _id: checkpointId(key) }, { connection: key.connection, checkpoint, updated_at: new Date() }, { upsert: true });
  }

  /** The connection's frequency override (null: the sync's default); the schedule carries the interval itself. */
  async setFrequency(key: SyncKey, frequency: string | null): Promise<void> {
    await this.col.updateOne({ _id: syncId(key) }, { $set: { frequency, updated_at: new Date() } });
  }

  /** `reset`: the next run starts from scratch (no checkpoint, no lastSyncDate). */
  async reset(key: SyncKey): Promise<void> {
    await this.checkpoints.deleteOne({ _id: checkpointId(key) });
    await this.col.updateOne({ _id: syncId(key) }, { $set: { last_success_started_at: null, updated_at: new Date() }, $unset: { checkpoint: '' } });
  }

  /** One sync's state and checkpoint (a deleted variant), then its slot: freed only once no state holds it. */
  async delete(key: SyncKey): Promise<void> {
    const doc = await this.col.findOneAndDelete({ _id: syncId(key) });
    if (doc) await this.tallies.removeSyncs(doc, [doc._id]);
    await this.checkpoints.deleteOne({ _id: checkpointId(key) });
    if (doc?.slot !== undefined) await this.slots.deleteOne({ _id: slotId(key.connection, key.name, doc.slot), variant: key.variant });
  }

  /** A connection's sync states, checkpoints and variant slots: their `_id`s start with the connection's (one range each). */
  async deleteForConnection(connection: string): Promise<void> {
    const states = await this.col.find({ _id: keyPrefixRange(connection) }, { projection: { environment: 1, provider_config_key: 1 } }).toArray();
    await this.col.deleteMany({ _id: keyPrefixRange(connection) });
    // After the states: one that stops in between leaves entries naming nothing, which a rebuild removes.
    if (states.length > 0)
      await this.tallies.removeSyncs(
        states[0],
        states.map((s) => s._id),
      );
    await this.checkpoints.deleteMany({ _id: keyPrefixRange(connection) });
    await this.slots.deleteMany({ _id: keyPrefixRange(connection) });
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
