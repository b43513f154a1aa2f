/**
 * Graph writes: a file uploaded in one request, an upload session taking
 * byte ranges, a folder created. Every write is one change of the drive (store.ts), so it
 * bumps the parents' eTag/size and comes in the next delta page.
 *
 * Conflict behavior (`@microsoft.graph.conflictBehavior`): `fail` answers 409
 * `nameAlreadyExists`, `rename` picks a free name (`name (2).txt`), `replace` writes over the
 * existing file (same id, 200) or, for a folder, deletes the existing item and creates a new one.
 */
import { isoSeconds, type Tenant } from './data';
import { GraphError } from './errors';
import { driveItemJson, type GraphDriveItem, type PathMode } from './serialize';
import { KIND_FILE, validateName, type DriveStore } from './store';

export type ConflictBehavior = 'fail' | 'replace' | 'rename';

/** Fragments of an upload session are multiples of 320 KiB (the last excepted), at most 60 MiB. */
const FRAGMENT_MULTIPLE = 327_680;
const MAX_FRAGMENT = 60 * 1024 * 1024;

export function parseConflictBehavior(raw: unknown, fallback: ConflictBehavior): ConflictBehavior {
  if (raw === undefined) return fallback;
  if (raw === 'fail' || raw === 'replace' || raw === 'rename') return raw;
  throw new GraphError(400, 'invalidRequest', `Invalid value '${String(raw)}' for @microsoft.graph.conflictBehavior (fail, replace or rename).`);
}

/** Where a new item goes: a live folder of the drive and the name asked for. */
export interface Placement {
  store: DriveStore;
  parent: number;
  name: string;
}

export function checkPlacement(p: Placement): void {
  if (!p.store.isLive(p.parent)) throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
  if (p.store.kind[p.parent] === KIND_FILE) throw new GraphError(400, 'invalidRequest', 'The parent item is not a folder.');
  const problem = validateName(p.name);
  if (problem) throw new GraphError(400, 'invalidRequest', `The name is not valid: ${problem}.`);
}

export function nameTaken(name: string): GraphError {
  return new GraphError(409, 'nameAlreadyExists', `An item named '${name}' already exists in this folder.`);
}

/** Writes a file's bytes at `p`; `created` is false when an existing file was replaced. */
export function writeFile(p: Placement, content: Buffer, conflict: ConflictBehavior, now: number): { index: number; created: boolean } {
  checkPlacement(p);
  const existing = p.store.childNamed(p.parent, p.name);
  if (existing < 0) return { index: p.store.createItem(p.parent, p.name, content, now), created: true };
  if (conflict === 'fail') throw nameTaken(p.name);
  if (conflict === 'replace') {
    // A folder is not overwritten by a file.
    if (p.store.kind[existing] !== KIND_FILE) throw nameTaken(p.name);
    p.store.replaceContent(existing, content, now);
    return { index: existing, created: false };
  }
  return { index: p.store.createItem(p.parent, p.store.uniqueNameIn(p.parent, p.name, true), content, now), created: true };
}

export function createFolder(p: Placement, conflict: ConflictBehavior, now: number): number {
  checkPlacement(p);
  const existing = p.store.childNamed(p.parent, p.name);
  if (existing < 0) return p.store.createItem(p.parent, p.name, null, now);
  if (conflict === 'fail') throw nameTaken(p.name);
  if (conflict === 'replace') {
    p.store.deleteItems([existing], now);
    return p.store.createItem(p.parent, p.name, null, now);
  }
  return p.store.createItem(p.parent, p.store.uniqueNameIn(p.parent, p.name, false), null, now);
}

/** The driveItem a write answers with. */
export function writtenItemJson(store: DriveStore, tenant: Tenant, i: number, pathMode: PathMode): GraphDriveItem {
  return driveItemJson(store, tenant, i, { pathMode });
}

// ---------------------------------------------------------------------------------------
// Upload sessions
// ---------------------------------------------------------------------------------------

export interface UploadSession {
  id: number;
  placement: Placement;
  conflict: ConflictBehavior;
  pathMode: PathMode;
  expiresMs: number;
  /** Declared by the first fragment's Content-Range. */
  total: number | null;
  fragments: Buffer[];
  received: number;
}

/** Open sessions by id; an expired one is gone (its URL answers 404). */
export class UploadSessions {
  private nextId = 1;
  private readonly open = new Map<number, UploadSession>();

  constructor(private readonly ttlMs: number) {}

  create(placement: Placement, conflict: ConflictBehavior, pathMode: PathMode, now: number): UploadSession {
    const session: UploadSession = {
      id: this.nextId++,
      placement,
      conflict,
      pathMode,
      expiresMs: now + this.ttlMs,
      total: null,
      fragments: [],
      received: 0,
    };
    this.open.set(session.id, session);
    return session;
  }

  get(id: number, now: number): UploadSession | undefined {
    const s = this.open.get(id);
    if (s && now >= s.expiresMs) {
      this.open.delete(id);
      return undefined;
    }
    return s;
  }

  delete(id: number): void {
    this.open.delete(id);
  }

  /** Sessions still open (for inspection). */
  count(now: number): number {
    let n = 0;
    for (const id of [...this.open.keys()]) if (this.get(id, now)) n++;
    return n;
  }
}

/** What an upload session answers between fragments (and at its creation, plus `uploadUrl`). */
export function sessionStatusJson(s: UploadSession): { expirationDateTime: string; nextExpectedRanges: string[] } {
  return { expirationDateTime: isoSeconds(s.expiresMs), nextExpectedRanges: [`${s.received}-`] };
}

/**
 * One fragment: `Content-Range: bytes {start}-{end}/{total}` with exactly those bytes,
 * starting where the last one ended. Returns the whole file once the last byte arrived.
 */
export function acceptFragment(s: UploadSession, contentRange: string | undefined, body: Buffer): Buffer | null {
  const m = contentRange ? /^bytes (\d+)-(\d+)\/(\d+)$/.exec(contentRange.trim()) : null;
  if (!m) throw new GraphError(400, 'invalidRequest', 'A fragment needs a Content-Range header: bytes {start}-{end}/{total}.');
  const [start, end, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (end < start || end >= total) throw new GraphError(400, 'invalidRequest', `The Content-Range '${contentRange}' is not valid.`);
  if (s.total !== null && s.total !== total) {
    throw new GraphError(400, 'invalidRequest', `The Content-Range total ${total} differs from the session's ${s.total}.`);
  }
  const length = end - start + 1;
  if (body.length !== length) throw new GraphError(400, 'invalidRequest', `The fragment has ${body.length} bytes; its Content-Range announces ${length}.`);
  if (length > MAX_FRAGMENT) throw new GraphError(400, 'invalidRequest', 'A fragment must not exceed 60 MiB.');
  if (start !== s.received) {
    throw new GraphError(416, 'invalidRange', `The fragment starts at byte ${start}; the session expects ${s.received}-.`);
  }
  const last = end === total - 1;
  if (!last && length % FRAGMENT_MULTIPLE !== 0) {
    throw new GraphError(400, 'invalidRequest', `A fragment other than the last must be a multiple of 320 KiB (327,680 bytes); this one has ${length}.`);
  }
  s.total = total;
  s.fragments.push(body);
  s.received = end + 1;
  return last ? Buffer.concat(s.fragments) : null;
}
