import { randomBytes } from 'node:crypto';
import { prefixRange } from './key-range';
import { BSON, MongoServerError, type Collection, type Db } from 'mongodb';
import type { RecordDoc } from './record-doc';

/**
 * What a writer must know of a stored record to classify a new version of it without
 * reading the record: a fingerprint of its content, when it was first seen, and whether it
 * is deleted. Kept per scope as a log of chunks (see RecordIndex), so an incremental run
 * reads a few dozen compact documents instead of one document per incoming record, which
 * is what each read costs on FerretDB (about 0.3 ms per record, more than a write).
 */
export interface IndexedState {
  fingerprint: string;
  firstSeenAt: number;
  deleted: boolean;
}

/** 96 bits of the record's base64url SHA-256: a content change goes unnoticed with odds of 2^-96. */
const FINGERPRINT_CHARS = 16;

export function fingerprintOf(hash: string): string {
  return hash.slice(0, FINGERPRINT_CHARS);
}

export function indexedStateOf(doc: Pick<RecordDoc, 'hash' | 'first_seen_at' | 'deleted_at'>): IndexedState {
  return { fingerprint: fingerprintOf(doc.hash), firstSeenAt: doc.first_seen_at.getTime(), deleted: doc.deleted_at !== null };
}

/**
 * Entries as text, one line per record: `id TAB fingerprint TAB firstSeen(base 36) TAB d?`
 * (ids URI-encoded, so they hold no tab or newline). One string field parses far faster on
 * FerretDB than an array of subdocuments, and takes a third of the space.
 */
export function encodeEntries(entries: Iterable<readonly [string, IndexedState]>): string {
  const lines: string[] = [];
  for (const [id, s] of entries) lines.push(`${encodeURIComponent(id)}\t${s.fingerprint}\t${s.firstSeenAt.toString(36)}\t${s.deleted ? 'd' : ''}`);
  return lines.join('\n');
}

/**
 * The entries of a scope by id, the later line winning. Keys stay URI-encoded and values
 * in their compact text form (`fingerprint TAB firstSeen TAB flag`) until asked for: a
 * 100,000-record scope loads in a few tens of milliseconds and takes about 10 MB of heap.
 */
export class IndexedStates {
  /** Encoded id → `fingerprint TAB firstSeen TAB flag`. */
  private readonly byId = new Map<string, string>();

  get size(): number {
    return this.byId.size;
  }

  addText(text: string): void {
    if (text === '') return;
    for (const line of text.split('\n')) {
      const tab = line.indexOf('\t');
      this.byId.set(line.slice(0, tab), line.slice(tab + 1));
    }
  }

  set(id: string, s: IndexedState): void {
    this.byId.set(encodeURIComponent(id), `${s.fingerprint}\t${s.firstSeenAt.toString(36)}\t${s.deleted ? 'd' : ''}`);
  }

  get(id: string): IndexedState | undefined {
    const value = this.byId.get(encodeURIComponent(id));
    if (value === undefined) return undefined;
    const [fingerprint, firstSeen, flag] = value.split('\t');
    return { fingerprint, firstSeenAt: parseInt(firstSeen, 36), deleted: flag === 'd' };
  }

  *entries(): IterableIterator<[string, IndexedState]> {
    for (const key of this.byId.keys()) {
      const id = decodeURIComponent(key);
      yield [id, this.get(id)!];
    }
  }
}

export interface IndexScope {
  connection: string;
  model: string;
  variant: string;
}

interface ChunkDoc extends IndexScope {
  _id: string;
  entries: string;
  created_at: Date;
}

/**
 * New versions of existing records in flight: written before the old versions are deleted
 * and removed once the new ones are in, so a crash between the two loses nothing (the next
 * writer of the scope puts them back). `entries` is the batch's index chunk.
 */
interface SwapDoc extends IndexScope {
  _id: string;
  /**
   * The documents as one Extended JSON string: FerretDB parses every document it deletes
   * (to match the filter), and an array of a thousand records takes it 200 ms to parse, a
   * string a few.
   */
  docs: string;
  entries: string;
  created_at: Date;
}

export interface Swap {
  id: string;
  docs: RecordDoc[];
  entries: string;
}

/** Entries per chunk written by a rebuild or a compaction (a batch writes one chunk of its own). */
const ENTRIES_PER_CHUNK = 1_000;

/**
 * The per-scope index: chunk documents in `record_index`, listed in order on the scope's
 * counter (`RecordStore` keeps the list). Every batch that writes records adds one chunk;
 * compaction rewrites the list when it has grown to twice its size.
 */
export class RecordIndex {
  private readonly chunks: Collection<ChunkDoc>;
  private readonly swaps: Collection<SwapDoc>;

  constructor(db: Db) {
    this.chunks = db.collection<ChunkDoc>('record_index');
    this.swaps = db.collection<SwapDoc>('record_swaps');
  }

  async ensureIndexes(withSecondary: boolean): Promise<void> {
    if (!withSecondary) return;
    await this.chunks.createIndex({ connection: 1, model: 1, variant: 1 });
    await this.swaps.createIndex({ connection: 1, model: 1, variant: 1 });
  }

  /** A fresh chunk id in the scope's key space. */
  newChunkId(scopeKey: string): string {
    return `${scopeKey}#${randomBytes(6).toString('hex')}`;
  }

  /** The states in the listed chunks, applied in list order. A listed chunk that was never written (its batch crashed first) is skipped. */
  async load(chunkIds: string[]): Promise<IndexedStates> {
    const states = new IndexedStates();
    const texts = new Map<string, string>();
    for (let i = 0; i < chunkIds.length; i += ENTRIES_PER_CHUNK) {
      for await (const chunk of this.chunks.find({ _id: { $in: chunkIds.slice(i, i + ENTRIES_PER_CHUNK) } })) texts.set(chunk._id, chunk.entries);
    }
    for (const id of chunkIds) states.addText(texts.get(id) ?? '');
    return states;
  }

  /** Writes a chunk; writing the same chunk again (a repair) is a no-op. */
  async writeChunk(id: string, scope: IndexScope, entries: string): Promise<void> {
    await ignoreDuplicate(this.chunks.insertOne({ _id: id, ...pick(scope), entries, created_at: new Date() }));
  }

  /** Writes `states` as new chunks of ENTRIES_PER_CHUNK entries; yields their ids in order. */
  async *writeChunksFrom(
    scopeKey: string,
    scope: IndexScope,
    states: AsyncIterable<readonly [string, IndexedState]> | Iterable<readonly [string, IndexedState]>,
  ): AsyncGenerator<string> {
    let pending: Array<readonly [string, IndexedState]> = [];
    const flush = async () => {
      const id = this.newChunkId(scopeKey);
      await this.writeChunk(id, scope, encodeEntries(pending));
      pending = [];
      return id;
    };
    for await (const entry of states) {
      pending.push(entry);
      if (pending.length >= ENTRIES_PER_CHUNK) yield await flush();
    }
    if (pending.length) yield await flush();
  }

  async deleteChunks(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += ENTRIES_PER_CHUNK) await this.chunks.deleteMany({ _id: { $in: ids.slice(i, i + ENTRIES_PER_CHUNK) } });
  }

  async putSwap(id: string, scope: IndexScope, docs: RecordDoc[], entries: string): Promise<void> {
    await ignoreDuplicate(
      this.swaps.insertOne({ _id: id, ...pick(scope), docs: BSON.EJSON.stringify(docs, { relaxed: false }), entries, created_at: new Date() }),
    );
  }

  async dropSwap(id: string): Promise<void> {
    await this.swaps.deleteOne({ _id: id });
  }

  /** Swaps of the scope a crashed writer left behind. */
  async leftoverSwaps(scopeKey: string): Promise<Swap[]> {
    // A swap's id is its chunk's (newChunkId): the scope's key first, so the scope's swaps are one `_id` range.
    const swaps = await this.swaps.find({ _id: prefixRange(scopeKey) }).toArray();
    return swaps.map((s) => ({ id: s._id, docs: BSON.EJSON.parse(s.docs, { relaxed: false }) as RecordDoc[], entries: s.entries }));
  }

  /**
   * Forgets the index of every scope under a key prefix (a connection's, a model's or one
   * scope's key, ending in '|'): its records are gone. Chunk and swap ids start with their scope's key.
   */
  async deleteScope(prefix: string): Promise<void> {
    await this.chunks.deleteMany({ _id: prefixRange(prefix) });
    await this.swaps.deleteMany({ _id: prefixRange(prefix) });
  }
}

function pick(scope: IndexScope): IndexScope {
  return { connection: scope.connection, model: scope.model, variant: scope.variant };
}

async function ignoreDuplicate(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (err) {
    if (!(err instanceof MongoServerError && err.code === 11000)) throw err;
  }
}
