/**
 * Builds Graph JSON (driveItem, deleted driveItem, drive, site, user) from a DriveStore
 * skeleton on demand. Property order follows what Graph sends; clients must not rely on it.
 */
import { Rng } from '../shared/prng';
import { editorIndex, isoSeconds, itemGuid, mimeForName, personEmail, personUpn, type DriveType, type Person, type Tenant } from './data';
import { BLOCK, baseBlock, quickXorHash, syntheticContentHash } from './quickxor';
import { contentKeyFor } from './content';
import { KIND_FILE, KIND_ROOT, type DriveStore } from './store';

// ---------------------------------------------------------------------------------------
// Shapes (what the simulator sends; Graph defines many more optional properties)
// ---------------------------------------------------------------------------------------

export interface GraphIdentity {
  displayName: string;
  id: string;
  /** Present on OneDrive for Business / SharePoint identities. */
  email?: string;
}

export interface GraphIdentitySet {
  user: GraphIdentity;
}

export interface GraphItemReference {
  driveType: DriveType;
  driveId: string;
  /** Absent on the root's own parentReference. */
  id?: string;
  /** `/drive/root:/A/B` or `/drives/{id}/root:/A/B`; never in delta responses. */
  path?: string;
  /** documentLibrary drives only. */
  siteId?: string;
}

export interface GraphDriveItem {
  '@microsoft.graph.downloadUrl'?: string;
  createdBy: GraphIdentitySet;
  createdDateTime: string;
  eTag: string;
  id: string;
  lastModifiedBy: GraphIdentitySet;
  lastModifiedDateTime: string;
  name: string;
  parentReference: GraphItemReference;
  webUrl: string;
  /** Files on every drive type; folders only on personal drives. */
  cTag?: string;
  file?: { mimeType: string; hashes: { quickXorHash: string } };
  fileSystemInfo: { createdDateTime: string; lastModifiedDateTime: string };
  folder?: { childCount: number };
  root?: Record<string, never>;
  size: number;
}

/** A deleted item as delta reports it. */
export interface GraphDeletedItem {
  createdDateTime: string;
  eTag: string;
  id: string;
  lastModifiedDateTime: string;
  /** personal drives only. */
  name?: string;
  parentReference: GraphItemReference;
  file?: Record<string, never>;
  folder?: { childCount: number };
  deleted: { state: string };
  /** business / documentLibrary only (always 0). */
  size?: number;
}

export interface GraphDrive {
  createdDateTime: string;
  description: string;
  id: string;
  lastModifiedDateTime: string;
  name: string;
  webUrl: string;
  driveType: DriveType;
  owner: { user: Required<GraphIdentity> };
  quota: { deleted: number; remaining: number; state: 'normal' | 'nearing' | 'critical' | 'exceeded'; total: number; used: number };
}

export interface GraphUser {
  businessPhones: string[];
  displayName: string;
  givenName: string;
  jobTitle: string;
  mail: string;
  mobilePhone: string | null;
  officeLocation: string;
  preferredLanguage: string;
  surname: string;
  userPrincipalName: string;
  id: string;
}

/**
 * How `parentReference.path` is written: Graph echoes the addressing the request used,
 * `/drive/root:/A/B` under `/me/drive`, `/drives/{id}/root:/A/B` under `/drives/{id}`.
 * `null` leaves the path out (delta never returns it).
 */
export type PathMode = 'drive' | 'drives' | null;

export interface ItemJsonOptions {
  pathMode: PathMode;
  /** A freshly minted download URL for files, or undefined to leave it out. */
  downloadUrl?: string;
}

/** Consumer accounts have 16-hex-digit ids rather than GUIDs. */
function personalUserId(p: Person): string {
  return Rng.from('personal-user', p.id).hex(16);
}

function identitySet(store: DriveStore, tenant: Tenant, p: Person): GraphIdentitySet {
  if (store.ident.driveType === 'personal') return { user: { displayName: p.displayName, id: personalUserId(p) } };
  return { user: { email: personEmail(tenant, p), id: p.id, displayName: p.displayName } };
}

function itemWebUrl(store: DriveStore, i: number): string {
  const d = store.ident;
  if (d.driveType === 'personal') {
    return i === 0 ? d.webUrl : `${d.webUrl}&id=${encodeURIComponent(store.ids[i])}`;
  }
  return i === 0 ? d.webUrl : `${d.webUrl}/${store.encodedPathOf(i)}`;
}

export function eTag(store: DriveStore, i: number, guid = itemGuid(store.dk, i)): string {
  return `"{${guid}},${store.version[i]}"`;
}

export function cTag(store: DriveStore, i: number, guid = itemGuid(store.dk, i)): string {
  return `"c:{${guid}},${store.cversion[i]}"`;
}

/** Whether the item carries a cTag: all items on personal drives, files only elsewhere. */
export function hasCTag(store: DriveStore, i: number): boolean {
  return store.ident.driveType === 'personal' || store.kind[i] === KIND_FILE;
}

/** Scratch block for hashing (serialization is synchronous, so one buffer is enough). */
const scratch = Buffer.allocUnsafe(BLOCK);

/** Hashes of uploaded bytes (they never change: a new upload is a new buffer). */
const uploadedHashes = new WeakMap<Buffer, string>();

function quickXorOf(store: DriveStore, i: number): string {
  const bytes = store.uploaded.get(i);
  if (bytes) {
    let hash = uploadedHashes.get(bytes);
    if (hash === undefined) uploadedHashes.set(bytes, (hash = quickXorHash(bytes)));
    return hash;
  }
  return syntheticContentHash(baseBlock(contentKeyFor(store, i), scratch), store.size[i]);
}

function parentReference(store: DriveStore, i: number, pathMode: PathMode): GraphItemReference {
  const d = store.ident;
  const ref: GraphItemReference = { driveType: d.driveType, driveId: d.id };
  if (i === 0) return ref;
  const p = store.parent[i];
  ref.id = store.ids[p];
  if (pathMode !== null) {
    const prefix = pathMode === 'drive' ? '/drive/root:' : `/drives/${d.id}/root:`;
    const parentPath = store.pathOf(p);
    ref.path = parentPath ? `${prefix}/${parentPath}` : prefix;
  }
  if (d.site) ref.siteId = d.site.id;
  return ref;
}

/** A live driveItem. */
export function driveItemJson(store: DriveStore, tenant: Tenant, i: number, opts: ItemJsonOptions): GraphDriveItem {
  const people = tenant.people;
  const isFile = store.kind[i] === KIND_FILE;
  const guid = itemGuid(store.dk, i);
  const created = isoSeconds(store.createdMs[i]);
  const modified = isoSeconds(store.modifiedMs[i]);
  // Built property by property so the JSON keeps Graph's order with optional facets in place.
  const out = {} as GraphDriveItem;
  if (isFile && opts.downloadUrl !== undefined) out['@microsoft.graph.downloadUrl'] = opts.downloadUrl;
  out.createdBy = identitySet(store, tenant, people[i === 0 ? 0 : editorIndex(store.dk, i, 0, people.length)]);
  out.createdDateTime = created;
  out.eTag = eTag(store, i, guid);
  out.id = store.ids[i];
  out.lastModifiedBy = identitySet(store, tenant, people[i === 0 ? 0 : editorIndex(store.dk, i, store.version[i], people.length)]);
  out.lastModifiedDateTime = modified;
  out.name = store.names[i];
  out.parentReference = parentReference(store, i, opts.pathMode);
  out.webUrl = itemWebUrl(store, i);
  if (hasCTag(store, i)) out.cTag = cTag(store, i, guid);
  if (isFile) {
    out.file = { mimeType: mimeForName(store.names[i]), hashes: { quickXorHash: quickXorOf(store, i) } };
  }
  out.fileSystemInfo = { createdDateTime: created, lastModifiedDateTime: modified };
  if (!isFile) out.folder = { childCount: store.childCount[i] };
  if (store.kind[i] === KIND_ROOT) out.root = {};
  out.size = store.size[i];
  return out;
}

/**
 * A deleted item as delta reports it: the `deleted` facet, parentReference without path,
 * and no name/cTag on OneDrive for Business/SharePoint, no cTag/size on personal.
 */
export function tombstoneJson(store: DriveStore, i: number): GraphDeletedItem {
  const personal = store.ident.driveType === 'personal';
  const out: GraphDeletedItem = {
    createdDateTime: isoSeconds(store.createdMs[i]),
    eTag: eTag(store, i),
    id: store.ids[i],
    lastModifiedDateTime: isoSeconds(store.modifiedMs[i]),
  } as GraphDeletedItem;
  if (personal) out.name = store.names[i];
  out.parentReference = parentReference(store, i, null);
  if (store.kind[i] === KIND_FILE) out.file = {};
  else out.folder = { childCount: 0 };
  out.deleted = { state: 'deleted' };
  if (!personal) out.size = 0;
  return out;
}

function quotaState(used: number, total: number): 'normal' | 'nearing' | 'critical' | 'exceeded' {
  const r = used / total;
  if (r >= 1) return 'exceeded';
  if (r >= 0.98) return 'critical';
  if (r >= 0.9) return 'nearing';
  return 'normal';
}

export function driveJson(store: DriveStore, tenant: Tenant): GraphDrive {
  const d = store.ident;
  const user: Required<GraphIdentity> =
    d.driveType === 'personal'
      ? { email: `${d.owner.alias}@outlook.com`, id: identitySet(store, tenant, d.owner).user.id, displayName: d.owner.displayName }
      : { email: personEmail(tenant, d.owner), id: d.owner.id, displayName: d.owner.displayName };
  const total = d.quotaTotal;
  const used = store.usedBytes;
  const deleted = store.deletedBytes;
  return {
    createdDateTime: isoSeconds(d.createdMs),
    description: d.description,
    id: d.id,
    lastModifiedDateTime: isoSeconds(store.lastModifiedMs),
    name: d.name,
    webUrl: d.webUrl,
    driveType: d.driveType,
    owner: { user },
    quota: {
      deleted,
      remaining: Math.max(0, total - used - deleted),
      state: quotaState(used + deleted, total),
      total,
      used,
    },
  };
}

export function siteJson(tenant: Tenant): Record<string, unknown> {
  return {
    createdDateTime: isoSeconds(tenant.siteCreatedMs),
    description: '',
    id: `${tenant.hostname},${tenant.siteCollectionGuid},${tenant.rootWebGuid}`,
    lastModifiedDateTime: isoSeconds(tenant.siteCreatedMs + 86_400_000 * 400),
    name: 'Communication site',
    webUrl: `https://${tenant.hostname}`,
    displayName: 'Communication site',
    root: {},
    siteCollection: { hostname: tenant.hostname },
  };
}

/** A documentLibrary drive's own site (GET /sites/{id}). */
export function librarySiteJson(store: DriveStore, tenant: Tenant): Record<string, unknown> {
  const s = store.ident.site!;
  return {
    createdDateTime: isoSeconds(store.ident.createdMs),
    description: '',
    id: s.id,
    lastModifiedDateTime: isoSeconds(store.lastModifiedMs),
    name: s.name,
    webUrl: s.webUrl,
    displayName: s.name.replace(/([a-z])([A-Z])/g, '$1 $2'),
    siteCollection: { hostname: tenant.hostname },
  };
}

export function userJson(tenant: Tenant): GraphUser {
  const me = tenant.people[0];
  return {
    businessPhones: [],
    displayName: me.displayName,
    givenName: me.givenName,
    jobTitle: me.jobTitle,
    mail: personEmail(tenant, me),
    mobilePhone: null,
    officeLocation: me.officeLocation,
    preferredLanguage: 'en-US',
    surname: me.surname,
    userPrincipalName: personUpn(tenant, me),
    id: me.id,
  };
}
