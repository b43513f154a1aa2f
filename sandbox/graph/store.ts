/**
 * One drive's state: a compact skeleton per item (typed arrays indexed by item index, plus
 * the id and name strings) and a change sequence. JSON is built on demand elsewhere from
 * (seed, index, version), so 100,000 items cost a few MB and start in well under a second.
 *
 * Change tracking: every mutation is one "op" that bumps `seq`; each item it changes gets
 * `changedSeq = seq` (and a new eTag version). A delta token is just a seq: the changes
 * since it are the items with a larger changedSeq. Deleted items stay in the arrays as
 * tombstones (dead = 1) so later deltas can report them.
 *
 * Folders change too when their content does (childCount, size, personal cTag), like on
 * OneDrive, where a folder reappears in delta when something below it changes.
 */
import {
  businessItemId,
  CONTENT_VERSIONS,
  createdAtMs,
  driveKey,
  fileName,
  fileSize,
  folderName,
  modifiedAtMs,
  personalItemId,
  stream,
  T_TREE,
  withSuffix,
  type DriveIdentity,
} from './data';

export const KIND_ROOT = 0;
const KIND_FOLDER = 1;
export const KIND_FILE = 2;

/** Deepest folder level generated below the root. */
const MAX_FOLDER_DEPTH = 4;
/** Roughly one folder per this many files. */
const FILES_PER_FOLDER = 25;

/** Characters OneDrive / SharePoint reject in names (control characters included, on purpose). */
// eslint-disable-next-line no-control-regex
const INVALID_NAME = /["*:<>?/\\|\u0000-\u001f]/;

export function validateName(name: string): string | null {
  if (typeof name !== 'string' || name.length === 0) return 'name must not be empty';
  if (name.length > 400) return 'name is too long';
  if (INVALID_NAME.test(name)) return 'name contains a character OneDrive does not allow';
  if (name !== name.trim() || name.endsWith('.')) return 'name must not start/end with spaces or end with a dot';
  if (name === '.' || name === '..') return 'invalid name';
  return null;
}

export class DriveStore {
  readonly dk: number;
  private cap = 0;
  /** Number of item slots used (live + tombstones). */
  count = 0;

  parent = new Int32Array(0);
  kind = new Uint8Array(0);
  dead = new Uint8Array(0);
  /** eTag version: bumps on every change of the item. */
  version = new Int32Array(0);
  /** cTag version: bumps when the content changes (file bytes; a folder's children). */
  cversion = new Int32Array(0);
  changedSeq = new Int32Array(0);
  createdSeq = new Int32Array(0);
  createdMs = new Float64Array(0);
  /** lastModifiedDateTime; for a tombstone, the deletion time. */
  modifiedMs = new Float64Array(0);
  /** Files: bytes. Folders/root: total bytes of the live files below. */
  size = new Float64Array(0);
  childCount = new Int32Array(0);
  ids: string[] = [];
  names: string[] = [];
  /** Every id ever issued (tombstones too) → index. */
  readonly byId = new Map<string, number>();
  /** Folder index → live child indices, ascending (creation order; keyset paging relies on it). */
  readonly children = new Map<number, number[]>();

  /** Folder index → path / percent-encoded path; cleared when any item is renamed or moved. */
  private readonly pathCache = new Map<number, string>();
  private readonly encodedPathCache = new Map<number, string>();

  /** Current change sequence; 0 = the generated state. */
  seq = 0;
  /** seqTimes[s] = time of op s (seqTimes[0] = when the drive was built). */
  readonly seqTimes: number[];
  /** Bytes of live files, and of deleted ones (the recycle bin). */
  usedBytes = 0;
  deletedBytes = 0;
  lastModifiedMs: number;

  constructor(
    readonly driveIndex: number,
    readonly ident: DriveIdentity,
    seedK: number,
    fileCount: number,
    builtAtMs: number,
  ) {
    this.dk = driveKey(seedK, driveIndex);
    this.seqTimes = [builtAtMs];
    this.lastModifiedMs = ident.createdMs;
    this.build(fileCount);
  }

  // ---- storage -------------------------------------------------------------------------

  private grow(min: number): void {
    if (min <= this.cap) return;
    const cap = Math.max(min, Math.ceil(this.cap * 1.5), 64);
    const g = <T extends Int32Array | Uint8Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a);
      return b;
    };
    this.parent = g(this.parent, (n) => new Int32Array(n));
    this.kind = g(this.kind, (n) => new Uint8Array(n));
    this.dead = g(this.dead, (n) => new Uint8Array(n));
    this.version = g(this.version, (n) => new Int32Array(n));
    this.cversion = g(this.cversion, (n) => new Int32Array(n));
    this.changedSeq = g(this.changedSeq, (n) => new Int32Array(n));
    this.createdSeq = g(this.createdSeq, (n) => new Int32Array(n));
    this.createdMs = g(this.createdMs, (n) => new Float64Array(n));
    this.modifiedMs = g(this.modifiedMs, (n) => new Float64Array(n));
    this.size = g(this.size, (n) => new Float64Array(n));
    this.childCount = g(this.childCount, (n) => new Int32Array(n));
    this.cap = cap;
  }

  private newId(index: number): string {
    if (this.ident.driveType === 'personal') return personalItemId(this.ident.itemIdPrefix, index);
    let attempt = 0;
    let id = businessItemId(this.dk, this.ident.itemIdPrefix, index, attempt);
    while (this.byId.has(id)) id = businessItemId(this.dk, this.ident.itemIdPrefix, index, ++attempt);
    return id;
  }

  /** Appends a slot; the caller fills in the rest. */
  private alloc(kind: number, parent: number, name: string): number {
    const i = this.count++;
    this.grow(this.count);
    const id = this.newId(i);
    this.ids[i] = id;
    this.names[i] = name;
    this.byId.set(id, i);
    this.kind[i] = kind;
    this.parent[i] = parent;
    if (kind !== KIND_FILE) this.children.set(i, []);
    return i;
  }

  // ---- generation ----------------------------------------------------------------------

  private build(fileCount: number): void {
    const dk = this.dk;
    const folderCount = fileCount > 0 ? Math.max(1, Math.round(fileCount / FILES_PER_FOLDER)) : 0;
    const total = 1 + folderCount + fileCount;
    this.grow(total);
    const depth = new Uint8Array(total);
    // Lower-cased names per folder, only while building (names must be unique per folder).
    const taken = new Map<number, Set<string>>();
    const uniqueName = (parent: number, name: string, isFile: boolean): string => {
      let set = taken.get(parent);
      if (!set) taken.set(parent, (set = new Set()));
      let out = name;
      for (let n = 2; set.has(out.toLowerCase()); n++) out = withSuffix(name, n, isFile);
      set.add(out.toLowerCase());
      return out;
    };

    const root = this.alloc(KIND_ROOT, -1, 'root');
    this.createdMs[root] = this.ident.createdMs;
    this.modifiedMs[root] = this.ident.createdMs;
    this.version[root] = 1;
    this.cversion[root] = 1;

    const topCount = Math.min(folderCount, Math.max(3, Math.min(24, Math.round(Math.sqrt(folderCount) * 1.5))));
    for (let k = 1; k <= folderCount; k++) {
      const rng = stream(dk, T_TREE, k);
      let parent = 0;
      if (k > topCount) {
        for (let attempt = 0; attempt < 4; attempt++) {
          const p = rng.int(1, k - 1);
          if (depth[p] < MAX_FOLDER_DEPTH) {
            parent = p;
            break;
          }
        }
      }
      depth[k] = depth[parent] + 1;
      const i = this.alloc(KIND_FOLDER, parent, uniqueName(parent, folderName(dk, k, depth[k]), false));
      this.initTimes(i, parent);
      this.version[i] = rng.int(1, 3);
      this.cversion[i] = this.version[i];
      this.children.get(parent)!.push(i);
      this.childCount[parent]++;
    }

    for (let k = folderCount + 1; k < total; k++) {
      const rng = stream(dk, T_TREE, k);
      const parent = folderCount === 0 || rng.chance(0.04) ? 0 : rng.int(1, folderCount);
      const i = this.alloc(KIND_FILE, parent, uniqueName(parent, fileName(dk, k), true));
      this.initTimes(i, parent);
      const cv = CONTENT_VERSIONS.pick(rng);
      this.cversion[i] = cv;
      this.version[i] = cv + rng.int(0, 2);
      const bytes = fileSize(dk, i, cv, this.names[i]);
      this.size[i] = bytes;
      this.usedBytes += bytes;
      this.children.get(parent)!.push(i);
      this.childCount[parent]++;
      for (let a = parent; a !== -1; a = this.parent[a]) this.size[a] += bytes;
    }
  }

  private initTimes(i: number, parent: number): void {
    const created = createdAtMs(this.dk, i, this.createdMs[parent], this.kind[i] !== KIND_FILE);
    this.createdMs[i] = created;
    const modified = modifiedAtMs(this.dk, i, created);
    this.modifiedMs[i] = modified;
    if (modified > this.lastModifiedMs) this.lastModifiedMs = modified;
  }

  // ---- reads ---------------------------------------------------------------------------

  isLive(i: number): boolean {
    return i >= 0 && i < this.count && this.dead[i] === 0;
  }

  /** Live item index for an id, or -1. */
  liveIndex(id: string): number {
    const i = this.byId.get(id);
    return i !== undefined && this.dead[i] === 0 ? i : -1;
  }

  isContainer(i: number): boolean {
    return this.kind[i] !== KIND_FILE;
  }

  childrenOf(i: number): readonly number[] {
    return this.children.get(i) ?? [];
  }

  depth(i: number): number {
    let d = 0;
    for (let a = this.parent[i]; a !== -1; a = this.parent[a]) d++;
    return d;
  }

  /** `Documents/Sub/file.txt` (no leading slash; '' for the root). */
  pathOf(i: number): string {
    if (i === 0) return '';
    if (this.kind[i] === KIND_FILE) {
      const p = this.pathOf(this.parent[i]);
      return p ? `${p}/${this.names[i]}` : this.names[i];
    }
    let cached = this.pathCache.get(i);
    if (cached === undefined) {
      const p = this.pathOf(this.parent[i]);
      cached = p ? `${p}/${this.names[i]}` : this.names[i];
      this.pathCache.set(i, cached);
    }
    return cached;
  }

  /** pathOf with every segment percent-encoded (for webUrl). */
  encodedPathOf(i: number): string {
    if (i === 0) return '';
    const own = encodeURIComponent(this.names[i]);
    if (this.kind[i] === KIND_FILE) {
      const p = this.encodedPathOf(this.parent[i]);
      return p ? `${p}/${own}` : own;
    }
    let cached = this.encodedPathCache.get(i);
    if (cached === undefined) {
      const p = this.encodedPathOf(this.parent[i]);
      cached = p ? `${p}/${own}` : own;
      this.encodedPathCache.set(i, cached);
    }
    return cached;
  }

  /** Child of folder `parent` named `name` (case-insensitive, as OneDrive), or -1. */
  childNamed(parent: number, name: string): number {
    const lower = name.toLowerCase();
    for (const c of this.childrenOf(parent)) if (this.names[c].toLowerCase() === lower) return c;
    return -1;
  }

  resolvePath(segments: readonly string[], from = 0): number {
    let i = from;
    if (i < 0) return -1;
    for (const seg of segments) {
      if (!this.isContainer(i)) return -1;
      i = this.childNamed(i, seg);
      if (i < 0) return -1;
    }
    return i;
  }

  /** Live items below (and including) `start`, parents before children (pre-order). */
  preorder(start = 0): Int32Array {
    const out: number[] = [];
    const stack: number[] = [start];
    while (stack.length) {
      const i = stack.pop()!;
      out.push(i);
      const kids = this.children.get(i);
      if (kids) for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
    }
    return Int32Array.from(out);
  }

  /**
   * Items whose state changed after `seq` (live or tombstones), each once, sorted by
   * (depth, changedSeq, index) so parents come before their children. Items created and
   * deleted after `seq` are left out: the client never knew them.
   */
  changedSince(seq: number): Int32Array {
    const picked: number[] = [];
    const changed = this.changedSeq;
    for (let i = 0; i < this.count; i++) {
      if (changed[i] > seq && !(this.dead[i] === 1 && this.createdSeq[i] > seq)) picked.push(i);
    }
    const depth = new Map<number, number>();
    for (const i of picked) depth.set(i, this.depth(i));
    picked.sort((a, b) => depth.get(a)! - depth.get(b)! || changed[a] - changed[b] || a - b);
    return Int32Array.from(picked);
  }

  /** The op sequence number in effect at time `ms` (for timestamp delta tokens). */
  seqAt(ms: number): number {
    let s = 0;
    while (s + 1 < this.seqTimes.length && this.seqTimes[s + 1] <= ms) s++;
    return s;
  }

  liveFiles(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.count; i++) if (this.kind[i] === KIND_FILE && this.dead[i] === 0) out.push(i);
    return out;
  }

  liveContainers(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.count; i++) if (this.kind[i] !== KIND_FILE && this.dead[i] === 0) out.push(i);
    return out;
  }

  isDescendant(i: number, ancestor: number): boolean {
    for (let a = i; a !== -1; a = this.parent[a]) if (a === ancestor) return true;
    return false;
  }

  // ---- mutations -----------------------------------------------------------------------

  private beginOp(now: number): void {
    this.seq++;
    this.seqTimes.push(now);
    this.lastModifiedMs = now;
  }

  /** Marks `i` changed in the current op (once per op: one eTag bump). */
  private touch(i: number, content: boolean): void {
    if (this.changedSeq[i] !== this.seq) {
      this.changedSeq[i] = this.seq;
      this.version[i]++;
      if (content) this.cversion[i]++;
    }
  }

  /** A folder's content changed: childCount/size of it and sizes of all its ancestors. */
  private adjustAncestors(folder: number, bytes: number, children: number): void {
    this.childCount[folder] += children;
    for (let a = folder; a !== -1; a = this.parent[a]) {
      this.size[a] += bytes;
      this.touch(a, true);
    }
  }

  /** A name not yet used in `parent` (adds " (2)", " (3)", ... like OneDrive's rename). */
  uniqueNameIn(parent: number, name: string, isFile: boolean): string {
    let out = name;
    for (let n = 2; this.childNamed(parent, out) >= 0; n++) out = withSuffix(name, n, isFile);
    return out;
  }

  editFiles(indices: readonly number[], now: number): void {
    if (indices.length === 0) return;
    this.beginOp(now);
    for (const i of indices) {
      const before = this.size[i];
      this.touch(i, true);
      this.uploaded.delete(i);
      const after = fileSize(this.dk, i, this.cversion[i], this.names[i]);
      this.size[i] = after;
      this.modifiedMs[i] = now;
      this.usedBytes += after - before;
      this.adjustAncestors(this.parent[i], after - before, 0);
    }
  }

  /** Deletes items (and everything below folders); returns all deleted indices. */
  deleteItems(indices: readonly number[], now: number): number[] {
    if (indices.length === 0) return [];
    this.beginOp(now);
    const all: number[] = [];
    for (const r of indices) {
      if (this.dead[r]) continue; // already deleted as part of an earlier folder in the list
      const subtree = this.preorder(r);
      let bytes = 0;
      for (const x of subtree) {
        if (this.kind[x] === KIND_FILE) bytes += this.size[x];
        this.dead[x] = 1;
        this.uploaded.delete(x);
        this.changedSeq[x] = this.seq;
        this.version[x]++;
        this.modifiedMs[x] = now;
        if (this.kind[x] !== KIND_FILE) this.children.delete(x);
        all.push(x);
      }
      const p = this.parent[r];
      const siblings = this.children.get(p)!;
      siblings.splice(lowerBound(siblings, r), 1);
      this.adjustAncestors(p, -bytes, -1);
      this.usedBytes -= bytes;
      this.deletedBytes += bytes;
    }
    return all;
  }

  /** Adds files (one op); `placement` gives each new file's parent and base name. */
  addFiles(placement: ReadonlyArray<{ parent: number; name: string }>, now: number): number[] {
    if (placement.length === 0) return [];
    this.beginOp(now);
    const out: number[] = [];
    for (const { parent, name } of placement) {
      const i = this.alloc(KIND_FILE, parent, this.uniqueNameIn(parent, name, true));
      this.version[i] = 1;
      this.cversion[i] = 1;
      this.createdMs[i] = now;
      this.modifiedMs[i] = now;
      this.createdSeq[i] = this.seq;
      this.changedSeq[i] = this.seq;
      const bytes = fileSize(this.dk, i, 1, this.names[i]);
      this.size[i] = bytes;
      this.usedBytes += bytes;
      this.children.get(parent)!.push(i); // the largest index so far: stays sorted
      this.adjustAncestors(parent, bytes, 1);
      out.push(i);
    }
    return out;
  }

  /** Bytes of files written through the API (uploads), by item index; other files have synthetic content. */
  readonly uploaded = new Map<number, Buffer>();

  /** A new empty folder, or a file with the given bytes, under `parent` (one op); its index. */
  createItem(parent: number, name: string, content: Buffer | null, now: number): number {
    this.beginOp(now);
    const i = this.alloc(content ? KIND_FILE : KIND_FOLDER, parent, name);
    this.version[i] = 1;
    this.cversion[i] = 1;
    this.createdMs[i] = now;
    this.modifiedMs[i] = now;
    this.createdSeq[i] = this.seq;
    this.changedSeq[i] = this.seq;
    const bytes = content?.length ?? 0;
    if (content) this.uploaded.set(i, content);
    this.size[i] = bytes;
    this.usedBytes += bytes;
    this.children.get(parent)!.push(i); // the largest index so far: stays sorted
    this.adjustAncestors(parent, bytes, 1);
    return i;
  }

  /** New bytes for an existing file (an upload with conflict behavior `replace`). */
  replaceContent(i: number, content: Buffer, now: number): void {
    this.beginOp(now);
    const before = this.size[i];
    this.touch(i, true);
    this.uploaded.set(i, content);
    this.size[i] = content.length;
    this.modifiedMs[i] = now;
    this.usedBytes += content.length - before;
    this.adjustAncestors(this.parent[i], content.length - before, 0);
  }

  private invalidatePaths(): void {
    this.pathCache.clear();
    this.encodedPathCache.clear();
  }

  rename(i: number, name: string, now: number): void {
    this.beginOp(now);
    if (this.kind[i] !== KIND_FILE) this.invalidatePaths();
    this.names[i] = name;
    this.touch(i, false);
    this.modifiedMs[i] = now;
  }

  move(i: number, newParent: number, now: number): void {
    this.beginOp(now);
    if (this.kind[i] !== KIND_FILE) this.invalidatePaths();
    const old = this.parent[i];
    const bytes = this.size[i]; // a folder's size is its subtree's total
    const from = this.children.get(old)!;
    from.splice(lowerBound(from, i), 1);
    this.adjustAncestors(old, -bytes, -1);
    const to = this.children.get(newParent)!;
    to.splice(lowerBound(to, i), 0, i);
    this.parent[i] = newParent;
    this.adjustAncestors(newParent, bytes, 1);
    this.touch(i, false);
    this.modifiedMs[i] = now;
  }
}

/** First position in ascending `arr` whose value is >= x. */
function lowerBound(arr: readonly number[], x: number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First position in ascending `arr` whose value is > x. */
export function upperBound(arr: readonly number[], x: number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
