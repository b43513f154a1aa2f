/**
 * Graph files routes (after auth, throttling and injected failures have been handled by
 * the simulator's pipeline). Each handler returns a Reply or throws a GraphError.
 *
 *   GET /me                                  user
 *   GET /me/drives                           drives, paged ($top, $skiptoken)
 *   GET /me/drive | /drives/{d} | /sites/{s}/drive
 *   GET {drive}/root | /items/{id} | /root:/{path}[:]              driveItem
 *   GET {drive}/root/children | /items/{id}/children | /root:/{path}:/children
 *   GET {drive}/items/{id}/content | /root:/{path}:/content          302 → download URL
 *   GET {drive}/root/delta[?token=] | /root/delta(token='...')
 *   GET /sites/root | /sites/{id} | /sites/{s}/drives
 *   PUT {drive}/items/{parent}:/{name}:/content | /root:/{path}:/content | /items/{id}/content   upload (writes.ts)
 *   POST {drive}/items/{parent}:/{name}:/createUploadSession                                     upload session
 *   POST {drive}/items/{parent}/children | /root/children                                         create folder
 */
import { GraphError, RESYNC_MESSAGE } from './errors';
import type { Tenant } from './data';
import { takePage, type DeltaListing, type DeltaListings } from './delta';
import { cTag, driveItemJson, driveJson, eTag, hasCTag, librarySiteJson, siteJson, tombstoneJson, userJson, type PathMode } from './serialize';
import { KIND_FILE, upperBound, type DriveStore } from './store';
import { TOKEN, type TokenCodec } from './tokens';
import {
  checkPlacement,
  createFolder,
  nameTaken,
  parseConflictBehavior,
  sessionStatusJson,
  writeFile,
  writtenItemJson,
  type Placement,
  type UploadSessions,
} from './writes';

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** JSON body; undefined = empty body. */
  body?: unknown;
}

/** Simulator state the routes read (and, for delta listings and nonces, update). */
export interface GraphState {
  tenant: Tenant;
  drives: DriveStore[];
  driveById: Map<string, DriveStore>;
  codec: TokenCodec;
  listings: DeltaListings;
  /** Current delta-token epoch; tokens from earlier epochs answer 410. */
  epoch(): number;
  defaultPageSize: number;
  maxPageSize: number;
  /** Open upload sessions (createUploadSession). */
  uploads: UploadSessions;
  /** The pre-authenticated URL of an upload session. */
  mintUploadUrl(base: string, sessionId: number): string;
  /** A new pre-authenticated download URL for an item (new expiry every call). */
  mintDownloadUrl(base: string, store: DriveStore, i: number, now: number): string;
}

export interface RequestContext {
  /** `http://127.0.0.1:PORT` */
  base: string;
  version: 'v1.0' | 'beta';
  method: string;
  /** Path after the version segment, still percent-encoded, e.g. `/drives/b!x/root:/A%20B`. */
  rawPath: string;
  /** Raw query string without `?` (kept to rebuild links with the original options). */
  rawQuery: string;
  query: URLSearchParams;
  ifNoneMatch: string | undefined;
  now: number;
  /** The request body (writes); empty for reads. */
  body: Buffer;
}

// ---------------------------------------------------------------------------------------
// Route parsing
// ---------------------------------------------------------------------------------------

type DriveRef = { kind: 'me' } | { kind: 'id'; id: string } | { kind: 'site'; site: string };
type ItemRef = { kind: 'root' } | { kind: 'id'; id: string } | { kind: 'path'; segments: string[]; from?: string };
type Action = 'get' | 'children' | 'content' | 'delta' | 'createUploadSession';

type Target =
  | { t: 'me' }
  | { t: 'myDrives' }
  | { t: 'site'; site: string }
  | { t: 'siteDrives'; site: string }
  | { t: 'drive'; drive: DriveRef }
  | { t: 'item'; drive: DriveRef; item: ItemRef; action: Action; pathToken?: string; linkPath: string };

function dec(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new GraphError(400, 'BadRequest', 'The request URI is not valid: malformed percent-encoding.');
  }
}

/** Resolves a raw path to a target, or null for an unknown segment. */
function parseTarget(raw: string): Target | null {
  const path = raw.length > 1 && raw.endsWith('/') && !raw.endsWith(':/') ? raw.slice(0, -1) : raw;
  let m: RegExpExecArray | null;
  if (path === '/me') return { t: 'me' };
  if (path === '/me/drives') return { t: 'myDrives' };
  if ((m = /^\/sites\/([^/]+)$/.exec(path))) return { t: 'site', site: dec(m[1]) };
  if ((m = /^\/sites\/([^/]+)\/drives$/.exec(path))) return { t: 'siteDrives', site: dec(m[1]) };

  let drive: DriveRef;
  let rest: string;
  let drivePrefix: string;
  if ((m = /^\/me\/drive(\/.*)?$/.exec(path))) {
    drive = { kind: 'me' };
    rest = m[1] ?? '';
    drivePrefix = '/me/drive';
  } else if ((m = /^\/drives\/([^/]+)(\/.*)?$/.exec(path))) {
    drive = { kind: 'id', id: dec(m[1]) };
    rest = m[2] ?? '';
    drivePrefix = `/drives/${m[1]}`;
  } else if ((m = /^\/sites\/([^/]+)\/drive(\/.*)?$/.exec(path))) {
    drive = { kind: 'site', site: dec(m[1]) };
    rest = m[2] ?? '';
    drivePrefix = `/sites/${m[1]}/drive`;
  } else {
    return null;
  }
  if (rest === '') return { t: 'drive', drive };

  let item: ItemRef;
  let tail: string;
  if ((m = /^\/root:(\/[^:]*)?(?::(.*))?$/.exec(rest))) {
    const segments = (m[1] ?? '')
      .split('/')
      .filter((s) => s !== '')
      .map(dec);
    item = segments.length ? { kind: 'path', segments } : { kind: 'root' };
    tail = m[2] ?? '';
  } else if ((m = /^\/root(\/.*)?$/.exec(rest))) {
    item = { kind: 'root' };
    tail = m[1] ?? '';
  } else if ((m = /^\/items\/([^/:]+):(\/[^:]*)?(?::(.*))?$/.exec(rest))) {
    // A path below an item: `/items/{parent-id}:/{name}:/content` (uploads).
    const segments = (m[2] ?? '')
      .split('/')
      .filter((s) => s !== '')
      .map(dec);
    item = segments.length ? { kind: 'path', segments, from: dec(m[1]) } : { kind: 'id', id: dec(m[1]) };
    tail = m[3] ?? '';
  } else if ((m = /^\/items\/([^/:]+)(\/.*)?$/.exec(rest))) {
    item = { kind: 'id', id: dec(m[1]) };
    tail = m[2] ?? '';
  } else {
    return null;
  }
  const base = { t: 'item' as const, drive, item };
  if (tail === '' || tail === '/') return { ...base, action: 'get', linkPath: '' };
  if (tail === '/children') return { ...base, action: 'children', linkPath: '' };
  if (tail === '/content') return { ...base, action: 'content', linkPath: '' };
  if (tail === '/createUploadSession') return { ...base, action: 'createUploadSession', linkPath: '' };
  if ((m = /^\/delta(?:\(\)|\(token='([^']*)'\))?$/.exec(tail))) {
    const itemPart = path.slice(drivePrefix.length, path.length - tail.length);
    return { ...base, action: 'delta', pathToken: m[1] === undefined ? undefined : dec(m[1]), linkPath: `${drivePrefix}${itemPart}/delta` };
  }
  return null;
}

// ---------------------------------------------------------------------------------------
// Query options
// ---------------------------------------------------------------------------------------

const UNSUPPORTED_OPTIONS = new Set(['$filter', '$orderby', '$expand', '$search', '$count', '$skip', '$format']);

/** The single value of an OData option ($-prefixed; the prefix is optional on beta only). */
function option(ctx: RequestContext, name: string): string | undefined {
  let found: string | undefined;
  let seen = 0;
  for (const [k, v] of ctx.query) {
    const key = k.toLowerCase();
    if (key === '$' + name || (ctx.version === 'beta' && key === name)) {
      seen++;
      found = v;
    }
  }
  if (seen > 1) {
    throw new GraphError(400, 'BadRequest', `Query option '$${name}' was specified more than once, but it must be specified at most once.`);
  }
  return found;
}

function rejectUnsupported(ctx: RequestContext): void {
  for (const k of ctx.query.keys()) {
    const key = k.toLowerCase();
    const dollar = key.startsWith('$') ? key : ctx.version === 'beta' ? '$' + key : key;
    if (UNSUPPORTED_OPTIONS.has(dollar)) {
      throw new GraphError(400, 'invalidRequest', `The query option '${dollar}' is not supported by this simulator.`);
    }
  }
}

function parseTop(ctx: RequestContext, state: GraphState): number {
  const raw = option(ctx, 'top');
  if (raw === undefined) return state.defaultPageSize;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
    throw new GraphError(400, 'invalidRequest', `Invalid value '${raw}' for query option $top: it must be a positive integer.`);
  }
  return Math.min(Number(raw), state.maxPageSize);
}

const ITEM_PROPERTIES = new Set([
  'id',
  'name',
  'description',
  'eTag',
  'createdBy',
  'createdDateTime',
  'lastModifiedBy',
  'lastModifiedDateTime',
  'parentReference',
  'webUrl',
  'audio',
  'bundle',
  'content',
  'cTag',
  'deleted',
  'file',
  'fileSystemInfo',
  'folder',
  'image',
  'location',
  'malware',
  'package',
  'pendingOperations',
  'photo',
  'publication',
  'remoteItem',
  'root',
  'searchResult',
  'shared',
  'sharepointIds',
  'size',
  'specialFolder',
  'video',
  'webDavUrl',
  'children',
  'listItem',
  'permissions',
  'thumbnails',
  'versions',
  'analytics',
  'retentionLabel',
  'subscriptions',
  'workbook',
  '@microsoft.graph.downloadUrl',
]);

const DRIVE_PROPERTIES = new Set([
  'id',
  'name',
  'description',
  'eTag',
  'createdBy',
  'createdDateTime',
  'lastModifiedBy',
  'lastModifiedDateTime',
  'parentReference',
  'webUrl',
  'driveType',
  'owner',
  'quota',
  'sharePointIds',
  'system',
  'root',
  'items',
  'special',
  'list',
  'following',
  'bundles',
]);

/** Parsed `$select` (property names as Graph spells them), or null for all properties. */
function parseSelect(ctx: RequestContext, allowed: Set<string>, typeName: string): string[] | null {
  const raw = option(ctx, 'select');
  if (raw === undefined) return null;
  const fields = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (fields.length === 0 || fields.includes('*')) return null;
  const lower = new Map([...allowed].map((p) => [p.toLowerCase(), p]));
  return fields.map((f) => {
    const p = lower.get(f.toLowerCase());
    if (!p) throw new GraphError(400, 'BadRequest', `Could not find a property named '${f}' on type '${typeName}'.`);
    return p;
  });
}

function applySelect(obj: object, select: string[] | null): Record<string, unknown> {
  const all = obj as Record<string, unknown>;
  if (!select) return all;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(all)) if (select.includes(k)) out[k] = all[k];
  return out;
}

/**
 * A full link back to this API with the request's own query options, minus `drop` (paging
 * tokens, compared case-insensitively), plus `add`. Clients must follow it verbatim.
 */
function link(ctx: RequestContext, path: string, drop: string[], add: [string, string]): string {
  const kept: string[] = [];
  for (const pair of ctx.rawQuery.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    let key: string;
    try {
      key = decodeURIComponent((eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, ' ')).toLowerCase();
    } catch {
      key = pair;
    }
    if (drop.includes(key)) continue;
    kept.push(pair);
  }
  kept.push(`${add[0]}=${encodeURIComponent(add[1])}`);
  return `${ctx.base}/${ctx.version}${path}?${kept.join('&')}`;
}

/** Paging parameters replaced in nextLinks (beta accepts them without `$`). */
const SKIP_PARAMS = ['$skiptoken', 'skiptoken'];

function context(ctx: RequestContext, fragment: string): string {
  return `${ctx.base}/${ctx.version}/$metadata#${fragment}`;
}

// ---------------------------------------------------------------------------------------
// Handlers
// ---------------------------------------------------------------------------------------

function itemNotFound(): GraphError {
  return new GraphError(404, 'itemNotFound', 'The resource could not be found.');
}

function resolveDrive(state: GraphState, ref: DriveRef): DriveStore {
  if (ref.kind === 'me') return state.drives[0];
  if (ref.kind === 'id') {
    const d = state.driveById.get(ref.id);
    if (!d) throw new GraphError(404, 'itemNotFound', 'The requested drive was not found.');
    return d;
  }
  const libs = siteDrives(state, ref.site);
  if (libs.length === 0) throw new GraphError(404, 'itemNotFound', 'The site has no default document library.');
  return libs[0];
}

function resolveItem(store: DriveStore, ref: ItemRef): number {
  let i: number;
  if (ref.kind === 'root') i = 0;
  else if (ref.kind === 'id') i = store.liveIndex(ref.id);
  else i = store.resolvePath(ref.segments, ref.from === undefined ? 0 : store.liveIndex(ref.from));
  if (i < 0) throw itemNotFound();
  return i;
}

function pathModeOf(ref: DriveRef): PathMode {
  return ref.kind === 'id' ? 'drives' : 'drive';
}

function matchesIfNoneMatch(ctx: RequestContext, store: DriveStore, i: number): boolean {
  const h = ctx.ifNoneMatch;
  if (!h) return false;
  if (h.trim() === '*') return true;
  // Entity tags are quoted and Graph's contain commas (`"{GUID},3"`): match the quoted strings.
  const tags = (h.match(/(?:W\/)?"[^"]*"/g) ?? []).map((t) => t.replace(/^W\//, ''));
  return tags.includes(eTag(store, i)) || (hasCTag(store, i) && tags.includes(cTag(store, i)));
}

function siteDrives(state: GraphState, site: string): DriveStore[] {
  const libs = state.drives.filter((d) => d.ident.driveType === 'documentLibrary');
  const t = state.tenant;
  if (site === 'root' || site === t.hostname || site === `${t.hostname},${t.siteCollectionGuid},${t.rootWebGuid}`) return libs;
  const own = libs.filter((d) => d.ident.site?.id === site);
  if (own.length) return own;
  throw new GraphError(404, 'itemNotFound', 'Requested site could not be found');
}

function getSite(state: GraphState, ctx: RequestContext, site: string): Reply {
  const t = state.tenant;
  let body: Record<string, unknown> | undefined;
  if (site === 'root' || site === t.hostname || site === `${t.hostname},${t.siteCollectionGuid},${t.rootWebGuid}`) {
    body = siteJson(t);
  } else {
    const d = state.drives.find((s) => s.ident.site?.id === site);
    if (d) body = librarySiteJson(d, t);
  }
  if (!body) throw new GraphError(404, 'itemNotFound', 'Requested site could not be found');
  return { status: 200, body: { '@odata.context': context(ctx, 'sites/$entity'), ...body } };
}

function listDrives(state: GraphState, ctx: RequestContext, drives: DriveStore[]): Reply {
  const select = parseSelect(ctx, DRIVE_PROPERTIES, 'microsoft.graph.drive');
  const top = parseTop(ctx, state);
  const skip = option(ctx, 'skiptoken');
  let start = 0;
  if (skip !== undefined) {
    const f = state.codec.decodeInts(TOKEN.drives, skip, 1);
    if (!f) throw new GraphError(400, 'invalidRequest', 'Invalid $skiptoken.');
    start = f[0];
  }
  const page = drives.slice(start, start + top);
  const body: Record<string, unknown> = {
    '@odata.context': context(ctx, 'drives'),
    value: page.map((d) => applySelect(driveJson(d, state.tenant), select)),
  };
  if (start + top < drives.length) {
    body['@odata.nextLink'] = link(ctx, ctx.rawPath, SKIP_PARAMS, ['$skiptoken', state.codec.encode(TOKEN.drives, [start + top])]);
  }
  return { status: 200, body };
}

function getItem(state: GraphState, ctx: RequestContext, store: DriveStore, i: number, mode: PathMode): Reply {
  const select = parseSelect(ctx, ITEM_PROPERTIES, 'microsoft.graph.driveItem');
  if (matchesIfNoneMatch(ctx, store, i)) return { status: 304 };
  const wantUrl = store.kind[i] === KIND_FILE && (!select || select.includes('@microsoft.graph.downloadUrl'));
  const item = driveItemJson(store, state.tenant, i, {
    pathMode: mode,
    downloadUrl: wantUrl ? state.mintDownloadUrl(ctx.base, store, i, ctx.now) : undefined,
  });
  const fragment = i === 0 ? `drives('${store.ident.id}')/root/$entity` : `drives('${store.ident.id}')/items/$entity`;
  return { status: 200, body: { '@odata.context': context(ctx, fragment), ...applySelect(item, select) } };
}

function listChildren(state: GraphState, ctx: RequestContext, store: DriveStore, i: number, mode: PathMode): Reply {
  const select = parseSelect(ctx, ITEM_PROPERTIES, 'microsoft.graph.driveItem');
  const top = parseTop(ctx, state);
  if (matchesIfNoneMatch(ctx, store, i)) return { status: 304 };
  const skip = option(ctx, 'skiptoken');
  const kids = store.childrenOf(i);
  let start = 0;
  if (skip !== undefined) {
    const f = state.codec.decodeInts(TOKEN.children, skip, 3);
    if (!f || f[0] !== store.driveIndex || f[1] !== i) throw new GraphError(400, 'invalidRequest', 'Invalid $skiptoken.');
    // Keyset paging on creation order: deleted or added children never shift the cursor.
    start = upperBound(kids, f[2]);
  }
  const page = kids.slice(start, start + top);
  const wantUrl = !select || select.includes('@microsoft.graph.downloadUrl');
  const value = page.map((c) =>
    applySelect(
      driveItemJson(store, state.tenant, c, {
        pathMode: mode,
        downloadUrl: wantUrl && store.kind[c] === KIND_FILE ? state.mintDownloadUrl(ctx.base, store, c, ctx.now) : undefined,
      }),
      select,
    ),
  );
  const body: Record<string, unknown> = {
    '@odata.context': context(ctx, `drives('${store.ident.id}')/items('${store.ids[i]}')/children`),
    value,
  };
  if (start + top < kids.length) {
    const token = state.codec.encode(TOKEN.children, [store.driveIndex, i, page[page.length - 1]]);
    body['@odata.nextLink'] = link(ctx, ctx.rawPath, SKIP_PARAMS, ['$skiptoken', token]);
  }
  return { status: 200, body };
}

function getContent(state: GraphState, ctx: RequestContext, store: DriveStore, i: number): Reply {
  if (store.kind[i] !== KIND_FILE) {
    throw new GraphError(400, 'invalidRequest', 'The content of a folder cannot be downloaded.');
  }
  return { status: 302, headers: { location: state.mintDownloadUrl(ctx.base, store, i, ctx.now) } };
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function delta(state: GraphState, ctx: RequestContext, store: DriveStore, i: number, target: { pathToken?: string; linkPath: string }): Reply {
  if (i !== 0) {
    throw new GraphError(400, 'invalidRequest', 'Delta is only supported on the root folder of a drive.');
  }
  const select = parseSelect(ctx, ITEM_PROPERTIES, 'microsoft.graph.driveItem');
  const top = parseTop(ctx, state);
  // `token` is a function parameter (no `$`): `?token=` or `delta(token='...')`.
  const queryTokens = ctx.query.getAll('token');
  if (queryTokens.length + (target.pathToken === undefined ? 0 : 1) > 1) {
    throw new GraphError(400, 'invalidRequest', "The 'token' parameter was specified more than once.");
  }
  const token = target.pathToken ?? queryTokens[0];
  const dropParams = ['token', '$skiptoken', '$deltatoken'];
  const deltaLink = (seq: number) =>
    link(ctx, target.linkPath, dropParams, ['token', state.codec.encode(TOKEN.deltaLink, [store.driveIndex, seq, state.epoch()])]);
  const resync = (): GraphError => {
    // Location: where to start over (a fresh enumeration with the same options).
    const kept = ctx.rawQuery.split('&').filter((p) => p !== '' && !dropParams.includes(p.split('=')[0].toLowerCase()));
    const location = `${ctx.base}/${ctx.version}${target.linkPath}${kept.length ? '?' + kept.join('&') : ''}`;
    return new GraphError(410, 'resyncRequired', RESYNC_MESSAGE, { location }, { code: 'resyncChangesApplyDifferences' });
  };
  const malformed = () => new GraphError(400, 'invalidRequest', 'Invalid delta token.');

  const fresh = (enumerate: boolean, since: number): DeltaListing => ({
    driveIndex: store.driveIndex,
    list: enumerate ? store.preorder(0) : store.changedSince(since),
    endSeq: store.seq,
    since,
    enumerate,
    epoch: state.epoch(),
  });
  let listing: DeltaListing;
  let listingId: number | undefined;
  let offset = 0;
  if (token === undefined || token === '') {
    listing = fresh(true, 0);
  } else if (token === 'latest') {
    return { status: 200, body: { '@odata.context': context(ctx, 'Collection(driveItem)'), value: [], '@odata.deltaLink': deltaLink(store.seq) } };
  } else if (ISO_TIMESTAMP.test(token)) {
    // OneDrive for Business / SharePoint accept a timestamp instead of a token.
    if (store.ident.driveType === 'personal') throw malformed();
    const ms = Date.parse(token);
    if (Number.isNaN(ms)) throw malformed();
    listing = ms < store.seqTimes[0] ? fresh(true, 0) : fresh(false, store.seqAt(ms));
  } else {
    const at = state.codec.decodeInts(TOKEN.deltaLink, token, 3);
    const next = at ? null : state.codec.decodeInts(TOKEN.deltaNext, token, 7);
    if (at) {
      const [driveIndex, seq, epoch] = at;
      if (driveIndex !== store.driveIndex || seq > store.seq) throw malformed();
      if (epoch < state.epoch()) throw resync();
      listing = fresh(false, seq);
    } else if (next) {
      const [driveIndex, id, off, epoch, endSeq, enumerate, since] = next;
      if (driveIndex !== store.driveIndex || endSeq > store.seq || since > endSeq) throw malformed();
      if (epoch < state.epoch()) throw resync();
      let found = state.listings.get(id);
      if (!found) {
        // Evicted (many listings in flight): rebuild it if the drive has not changed since
        // the cut, which gives the identical list; otherwise the client must start over.
        if (store.seq !== endSeq) throw resync();
        found = fresh(enumerate === 1, since);
        state.listings.put(id, found);
      }
      if (found.driveIndex !== store.driveIndex || off > found.list.length) throw malformed();
      listing = found;
      listingId = id;
      offset = off;
    } else {
      throw malformed();
    }
  }

  const page = takePage(listing, offset, top, (x) => store.isLive(x));
  const wantUrl = !select || select.includes('@microsoft.graph.downloadUrl');
  const value = page.items.map((x) => {
    if (!store.isLive(x)) return applySelect(tombstoneJson(store, x), select);
    const url = wantUrl && store.kind[x] === KIND_FILE ? state.mintDownloadUrl(ctx.base, store, x, ctx.now) : undefined;
    return applySelect(driveItemJson(store, state.tenant, x, { pathMode: null, downloadUrl: url }), select);
  });
  const body: Record<string, unknown> = { '@odata.context': context(ctx, 'Collection(driveItem)'), value };
  if (page.next !== null) {
    if (listingId === undefined) listingId = state.listings.add(listing);
    const nextToken = state.codec.encode(TOKEN.deltaNext, [
      store.driveIndex,
      listingId,
      page.next,
      listing.epoch,
      listing.endSeq,
      listing.enumerate ? 1 : 0,
      listing.since,
    ]);
    body['@odata.nextLink'] = link(ctx, target.linkPath, dropParams, ['token', nextToken]);
  } else {
    body['@odata.deltaLink'] = deltaLink(listing.endSeq);
  }
  return { status: 200, body };
}

// ---------------------------------------------------------------------------------------
// Writes (the rules themselves are in writes.ts)
// ---------------------------------------------------------------------------------------

function isWrite(method: string, action: Action): boolean {
  return (method === 'PUT' && action === 'content') || (method === 'POST' && (action === 'children' || action === 'createUploadSession'));
}

function jsonObjectBody(ctx: RequestContext): Record<string, unknown> {
  if (ctx.body.length === 0) return {};
  try {
    const v: unknown = JSON.parse(ctx.body.toString('utf8'));
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new GraphError(400, 'invalidRequest', 'The request body is not a valid JSON object.');
}

/** A new item is addressed by its path: `/items/{parent-id}:/{name}:` or `/root:/{folder}/{name}:`. */
function placementOf(store: DriveStore, ref: ItemRef): Placement {
  if (ref.kind !== 'path') {
    throw new GraphError(400, 'invalidRequest', 'Address the new item by path: /items/{parent-id}:/{file-name}:/... .');
  }
  const parentRef: ItemRef =
    ref.segments.length > 1 ? { ...ref, segments: ref.segments.slice(0, -1) } : ref.from === undefined ? { kind: 'root' } : { kind: 'id', id: ref.from };
  return { store, parent: resolveItem(store, parentRef), name: ref.segments[ref.segments.length - 1] };
}

function handleWrite(state: GraphState, ctx: RequestContext, target: Extract<Target, { t: 'item' }>): Reply {
  const store = resolveDrive(state, target.drive);
  const mode = pathModeOf(target.drive);
  const itemReply = (i: number, status: number): Reply => ({
    status,
    body: { '@odata.context': context(ctx, `drives('${store.ident.id}')/items/$entity`), ...writtenItemJson(store, state.tenant, i, mode) },
  });
  // Defaults when the request names no conflict behavior: uploads replace, a new folder fails.
  if (target.action === 'content') {
    const conflict = parseConflictBehavior(ctx.query.get('@microsoft.graph.conflictBehavior') ?? undefined, 'replace');
    if (target.item.kind === 'path') {
      const { index, created } = writeFile(placementOf(store, target.item), ctx.body, conflict, ctx.now);
      return itemReply(index, created ? 201 : 200);
    }
    const i = resolveItem(store, target.item);
    if (store.kind[i] !== KIND_FILE) throw new GraphError(400, 'invalidRequest', 'Only a file has content to replace.');
    store.replaceContent(i, ctx.body, ctx.now);
    return itemReply(i, 200);
  }
  const body = jsonObjectBody(ctx);
  if (target.action === 'children') {
    const parent = resolveItem(store, target.item);
    if (typeof body.name !== 'string') throw new GraphError(400, 'invalidRequest', 'The new item needs a name.');
    if (body.folder === null || typeof body.folder !== 'object') {
      throw new GraphError(400, 'invalidRequest', 'A folder is created with the folder facet ({"folder": {}}); files are uploaded.');
    }
    const conflict = parseConflictBehavior(body['@microsoft.graph.conflictBehavior'], 'fail');
    return itemReply(createFolder({ store, parent, name: body.name }, conflict, ctx.now), 201);
  }
  const item = body.item ?? {};
  if (item === null || typeof item !== 'object') throw new GraphError(400, 'invalidRequest', "The session's item must be an object.");
  const conflict = parseConflictBehavior((item as Record<string, unknown>)['@microsoft.graph.conflictBehavior'], 'replace');
  const placement = placementOf(store, target.item);
  checkPlacement(placement);
  if (conflict === 'fail' && store.childNamed(placement.parent, placement.name) >= 0) throw nameTaken(placement.name);
  const session = state.uploads.create(placement, conflict, mode, ctx.now);
  return {
    status: 200,
    body: {
      '@odata.context': context(ctx, 'microsoft.graph.uploadSession'),
      uploadUrl: state.mintUploadUrl(ctx.base, session.id),
      ...sessionStatusJson(session),
    },
  };
}

/** Dispatches an authenticated GET. Unknown routes → 400; other methods → 405. */
export function handleApi(state: GraphState, ctx: RequestContext): Reply {
  const target = parseTarget(ctx.rawPath);
  if (!target) {
    const seg = ctx.rawPath.split('/').filter(Boolean)[0] ?? '';
    throw new GraphError(400, 'BadRequest', `Resource not found for the segment '${dec(seg)}'.`);
  }
  if (ctx.method !== 'GET') {
    if (target.t === 'item' && isWrite(ctx.method, target.action)) return handleWrite(state, ctx, target);
    throw new GraphError(405, 'BadRequest', 'Specified HTTP method is not allowed for the request target.', { allow: 'GET' });
  }
  rejectUnsupported(ctx);
  switch (target.t) {
    case 'me':
      return { status: 200, body: { '@odata.context': context(ctx, 'users/$entity'), ...userJson(state.tenant) } };
    case 'myDrives':
      return listDrives(state, ctx, state.drives);
    case 'site':
      return getSite(state, ctx, target.site);
    case 'siteDrives':
      return listDrives(state, ctx, siteDrives(state, target.site));
    case 'drive': {
      const store = resolveDrive(state, target.drive);
      const select = parseSelect(ctx, DRIVE_PROPERTIES, 'microsoft.graph.drive');
      return { status: 200, body: { '@odata.context': context(ctx, 'drives/$entity'), ...applySelect(driveJson(store, state.tenant), select) } };
    }
    case 'item': {
      const store = resolveDrive(state, target.drive);
      const i = resolveItem(store, target.item);
      const mode = pathModeOf(target.drive);
      switch (target.action) {
        case 'get':
          return getItem(state, ctx, store, i, mode);
        case 'children':
          if (store.kind[i] === KIND_FILE) {
            // A file has no children: Graph answers an empty collection.
            parseSelect(ctx, ITEM_PROPERTIES, 'microsoft.graph.driveItem');
            parseTop(ctx, state);
            return {
              status: 200,
              body: { '@odata.context': context(ctx, `drives('${store.ident.id}')/items('${store.ids[i]}')/children`), value: [] },
            };
          }
          return listChildren(state, ctx, store, i, mode);
        case 'content':
          return getContent(state, ctx, store, i);
        case 'delta':
          return delta(state, ctx, store, i, target);
        case 'createUploadSession':
          throw new GraphError(405, 'BadRequest', 'Specified HTTP method is not allowed for the request target.', { allow: 'POST' });
      }
    }
  }
  throw new GraphError(400, 'BadRequest', 'Unsupported request.');
}
