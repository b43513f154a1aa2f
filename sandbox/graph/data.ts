/**
 * Deterministic generation for the Graph files simulator: tenant, user, drives, the folder
 * tree and file metadata. Everything here is a pure function of (seed, drive, index,
 * version): no Math.random, no clock.
 */
import { hash32, Rng } from '../shared/prng';

// Captured once (global lookups are slow inside Jest's vm sandbox).
const floor = Math.floor;
const exp = Math.exp;
const log = Math.log;
const imul = Math.imul;
const fromCharCode = String.fromCharCode;

/**
 * mulberry32 as a plain object: per-item streams are created ~10 times per item, and the
 * closure-based Rng made generation of 100,000 items allocation-bound. Streams are keyed
 * by numeric tags (hash32's fast path) rather than strings for the same reason.
 */
class FastRng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  next(): number {
    return this.u32() / 4294967296;
  }
  int(min: number, max: number): number {
    return min + floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: ReadonlyArray<T>): T {
    return items[floor(this.next() * items.length)];
  }
}

/** Stream tags (numbers, so hash32 takes its fast path). */
const T_ID = 1;
const T_GUID = 2;
const T_FOLDER_NAME = 3;
const T_FILE_NAME = 4;
const T_SIZE = 5;
const T_CREATED = 6;
const T_MODIFIED = 7;
const T_EDITOR = 8;
export const T_TREE = 9;

export function stream(dk: number, tag: number, index: number, extra = 0): FastRng {
  return new FastRng(hash32(dk, tag, index, extra));
}

/** Weighted choice table: cumulative weights for one random draw. */
class Weighted<T> {
  private readonly cum: number[] = [];
  private readonly items: T[] = [];
  private readonly total: number;
  constructor(entries: ReadonlyArray<readonly [T, number]>) {
    let t = 0;
    for (const [item, w] of entries) {
      t += w;
      this.cum.push(t);
      this.items.push(item);
    }
    this.total = t;
  }
  pick(rng: FastRng): T {
    const r = rng.next() * this.total;
    for (let k = 0; k < this.cum.length; k++) if (r < this.cum[k]) return this.items[k];
    return this.items[this.items.length - 1];
  }
}

export type DriveType = 'personal' | 'business' | 'documentLibrary';

// ---------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------

const TENANTS: readonly string[] = [
  'contoso',
  'fabrikam',
  'northwind',
  'adatum',
  'tailspintoys',
  'wingtiptoys',
  'litware',
  'proseware',
  'woodgrove',
  'alpineskihouse',
  'lucernepublishing',
  'relecloud',
];

const FIRST_NAMES: readonly string[] = [
  'Adele',
  'Alex',
  'Diego',
  'Grady',
  'Henrietta',
  'Isaiah',
  'Johanna',
  'Joni',
  'Lee',
  'Lidia',
  'Lynne',
  'Megan',
  'Miriam',
  'Nestor',
  'Patti',
  'Pradeep',
  'Amara',
  'Chen',
  'Farah',
  'Hiro',
  'Ines',
  'Mateo',
  'Priya',
  'Tomas',
  'Yara',
];

const LAST_NAMES: readonly string[] = [
  'Vance',
  'Wilber',
  'Siciliani',
  'Archie',
  'Mueller',
  'Langer',
  'Lauer',
  'Sherman',
  'Gu',
  'Holloway',
  'Robbins',
  'Bowen',
  'Hunter',
  'Wilke',
  'Fernandez',
  'Gupta',
  'Okafor',
  'Tanaka',
  'Lindqvist',
  'Moreau',
  'Santos',
  'Haddad',
  'Kim',
];

const JOB_TITLES: readonly string[] = [
  'Product Manager',
  'Marketing Manager',
  'Retail Manager',
  'Designer',
  'Developer',
  'Finance Lead',
  'Legal Counsel',
  'HR Manager',
  'Sales Representative',
  'Engineering Lead',
];

const OFFICES: readonly string[] = ['18/2111', '20/1101', '12/1110', '131/1104', '19/3123', '24/1106'];

const SITE_NAMES: readonly string[] = [
  'Marketing',
  'Finance',
  'Engineering',
  'HumanResources',
  'Legal',
  'Sales',
  'Operations',
  'ProjectAtlas',
  'Design',
  'Research',
];

/** Top-level folders (directly under the root). */
const TOP_FOLDERS: readonly string[] = [
  'Documents',
  'Projects',
  'Finance',
  'Marketing',
  'Clients',
  'Photos',
  'Shared',
  'Templates',
  'Reports',
  'Archive',
  'Engineering',
  'Legal',
  'HR',
  'Sales',
  'Research',
  'Design',
  'Meeting Notes',
  'Presentations',
  'Invoices',
  'Travel',
  'Desktop',
  'Pictures',
  'Recordings',
];

/** Deeper folders. */
const SUB_FOLDERS: readonly string[] = [
  '2021',
  '2022',
  '2023',
  '2024',
  'Q1',
  'Q2',
  'Q3',
  'Q4',
  'Drafts',
  'Final',
  'Archive',
  'Old',
  'Contracts',
  'Budgets',
  'Assets',
  'Screenshots',
  'Exports',
  'Specs',
  'Planning',
  'Reviews',
  'Onboarding',
  'Vendors',
  'Receipts',
  'Campaigns',
  'Logos',
  'Prototypes',
  'Minutes',
  'Client - Acme',
  'Client - Globex',
  'Client - Initech',
  'Client - Umbrella',
  'Team Offsite',
  'Board',
  'Hiring',
  'Research Notes',
  'Working Files',
  'Backups',
  'Data',
];

interface FileKind {
  ext: string;
  mime: string;
  /** Log-uniform size range in bytes. */
  min: number;
  max: number;
  stems: readonly string[];
}

const DOC_STEMS: readonly string[] = [
  'Quarterly Report',
  'Meeting Notes',
  'Project Proposal',
  'Statement of Work',
  'Contract',
  'Onboarding Guide',
  'Design Review',
  'Product Requirements',
  'Retrospective',
  'Policy',
  'Press Release',
  'Cover Letter',
  'Roadmap',
  'Strategy',
  'Brief',
  'Memo',
  'Agenda',
];
const SHEET_STEMS: readonly string[] = [
  'Budget',
  'Sales Forecast',
  'Expense Report',
  'Inventory',
  'Headcount Plan',
  'Pipeline',
  'Timesheet',
  'KPI Dashboard',
  'Pricing Model',
  'Vendor List',
  'Invoice Tracker',
];
const DECK_STEMS: readonly string[] = [
  'All Hands',
  'Board Update',
  'Kickoff',
  'Pitch Deck',
  'Training',
  'QBR',
  'Launch Plan',
  'Customer Presentation',
  'Workshop',
];
const PDF_STEMS: readonly string[] = [
  'Invoice',
  'Receipt',
  'Signed Contract',
  'Brochure',
  'Whitepaper',
  'Datasheet',
  'Manual',
  'Boarding Pass',
  'Statement',
  'NDA',
];
const TEXT_STEMS: readonly string[] = ['notes', 'README', 'todo', 'changelog', 'log', 'draft', 'ideas', 'export'];
const DATA_STEMS: readonly string[] = ['export', 'data', 'contacts', 'orders', 'metrics', 'survey results', 'config'];
const PHOTO_STEMS: readonly string[] = ['IMG_', 'DSC_', 'PXL_', 'Photo ', 'Screenshot '];
const VIDEO_STEMS: readonly string[] = ['VID_', 'Recording ', 'Demo', 'Webinar', 'Meeting Recording'];
const ARCHIVE_STEMS: readonly string[] = ['backup', 'assets', 'export', 'release', 'photos', 'source'];

const KB = 1024;
const MB = 1024 * 1024;

const FILE_KINDS: ReadonlyArray<readonly [FileKind, number]> = [
  [{ ext: 'docx', mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', min: 12 * KB, max: 4 * MB, stems: DOC_STEMS }, 18],
  [{ ext: 'xlsx', mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', min: 8 * KB, max: 6 * MB, stems: SHEET_STEMS }, 14],
  [{ ext: 'pptx', mime: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', min: 200 * KB, max: 60 * MB, stems: DECK_STEMS }, 8],
  [{ ext: 'pdf', mime: 'application/pdf', min: 30 * KB, max: 20 * MB, stems: PDF_STEMS }, 14],
  [{ ext: 'txt', mime: 'text/plain', min: 0, max: 200 * KB, stems: TEXT_STEMS }, 5],
  [{ ext: 'md', mime: 'text/markdown', min: 100, max: 100 * KB, stems: TEXT_STEMS }, 3],
  [{ ext: 'csv', mime: 'text/csv', min: 200, max: 8 * MB, stems: DATA_STEMS }, 5],
  [{ ext: 'json', mime: 'application/json', min: 100, max: 2 * MB, stems: DATA_STEMS }, 2],
  [{ ext: 'jpg', mime: 'image/jpeg', min: 150 * KB, max: 9 * MB, stems: PHOTO_STEMS }, 14],
  [{ ext: 'png', mime: 'image/png', min: 20 * KB, max: 6 * MB, stems: PHOTO_STEMS }, 8],
  [{ ext: 'heic', mime: 'image/heic', min: 900 * KB, max: 5 * MB, stems: PHOTO_STEMS }, 2],
  [{ ext: 'mp4', mime: 'video/mp4', min: 4 * MB, max: 400 * MB, stems: VIDEO_STEMS }, 2],
  [{ ext: 'mov', mime: 'video/quicktime', min: 8 * MB, max: 300 * MB, stems: VIDEO_STEMS }, 1],
  [{ ext: 'zip', mime: 'application/zip', min: 100 * KB, max: 250 * MB, stems: ARCHIVE_STEMS }, 2],
  [{ ext: 'vsdx', mime: 'application/vnd.ms-visio.drawing', min: 40 * KB, max: 5 * MB, stems: DOC_STEMS }, 1],
  [{ ext: 'msg', mime: 'application/vnd.ms-outlook', min: 20 * KB, max: 3 * MB, stems: DOC_STEMS }, 1],
];

const KIND_TABLE = new Weighted(FILE_KINDS);

export const CONTENT_VERSIONS = new Weighted<number>([
  [1, 6],
  [2, 3],
  [3, 2],
  [4, 1],
  [7, 0.5],
]);

const MIME_BY_EXT = new Map<string, string>(FILE_KINDS.map(([k]) => [k.ext, k.mime]));
MIME_BY_EXT.set('doc', 'application/msword');
MIME_BY_EXT.set('xls', 'application/vnd.ms-excel');
MIME_BY_EXT.set('ppt', 'application/vnd.ms-powerpoint');
MIME_BY_EXT.set('jpeg', 'image/jpeg');
MIME_BY_EXT.set('gif', 'image/gif');
MIME_BY_EXT.set('html', 'text/html');
MIME_BY_EXT.set('xml', 'application/xml');
const KIND_BY_EXT = new Map<string, FileKind>(FILE_KINDS.map(([k]) => [k.ext, k]));

const QUALIFIERS: readonly string[] = [
  '',
  '',
  '',
  ' 2023',
  ' 2024',
  ' Q1',
  ' Q2',
  ' Q3',
  ' Q4',
  ' v2',
  ' v3',
  ' - Final',
  ' (Draft)',
  ' - Copy',
  ' FINAL',
  ' - Review',
  ' EMEA',
  ' APAC',
  ' Americas',
];

/** MIME type for a file name (what Graph derives from the extension). */
export function mimeForName(name: string): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return 'application/octet-stream';
  return MIME_BY_EXT.get(name.slice(dot + 1).toLowerCase()) ?? 'application/octet-stream';
}

// ---------------------------------------------------------------------------------------
// Tenant, people, drives
// ---------------------------------------------------------------------------------------

/** Seed number → the 32-bit key every stream derives from. */
export function seedKey(seed: number): number {
  return hash32('graph', String(seed));
}

export interface Person {
  id: string;
  displayName: string;
  givenName: string;
  surname: string;
  /** Address without domain, e.g. `adele.vance`. */
  alias: string;
  jobTitle: string;
  officeLocation: string;
}

export interface Tenant {
  /** e.g. `contoso`. */
  name: string;
  /** SharePoint host, e.g. `contoso.sharepoint.com`. */
  hostname: string;
  /** OneDrive for Business host, e.g. `contoso-my.sharepoint.com`. */
  myHostname: string;
  /** Mail domain, e.g. `contoso.com`. */
  mailDomain: string;
  /** Sign-in domain, e.g. `contoso.onmicrosoft.com`. */
  upnDomain: string;
  /** The signed-in user (`/me`) first, then colleagues who also edit files. */
  people: Person[];
  siteCollectionGuid: string;
  rootWebGuid: string;
  siteCreatedMs: number;
}

function ascii(s: string): string {
  return s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
}

export function makeTenant(seedK: number): Tenant {
  const rng = Rng.from(seedK, 'tenant');
  const name = rng.pick(TENANTS);
  const people: Person[] = [];
  const used = new Set<string>();
  for (let i = 0; people.length < 6; i++) {
    const p = Rng.from(seedK, 'person', i);
    const givenName = p.pick(FIRST_NAMES);
    const surname = p.pick(LAST_NAMES);
    const alias = ascii(`${givenName}.${surname}`).toLowerCase();
    if (used.has(alias)) continue;
    used.add(alias);
    people.push({
      id: p.uuid(),
      displayName: `${givenName} ${surname}`,
      givenName,
      surname,
      alias,
      jobTitle: p.pick(JOB_TITLES),
      officeLocation: p.pick(OFFICES),
    });
  }
  return {
    name,
    hostname: `${name}.sharepoint.com`,
    myHostname: `${name}-my.sharepoint.com`,
    mailDomain: `${name}.com`,
    upnDomain: `${name}.onmicrosoft.com`,
    people,
    siteCollectionGuid: rng.uuid(),
    rootWebGuid: rng.uuid(),
    siteCreatedMs: Date.UTC(2017, 0, 1) + rng.int(0, 700) * 86_400_000 + rng.int(0, 86_399) * 1000,
  };
}

export function personEmail(t: Tenant, p: Person): string {
  return `${p.alias}@${t.mailDomain}`;
}

export function personUpn(t: Tenant, p: Person): string {
  return `${p.alias}@${t.upnDomain}`;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function charsFrom(rng: Rng, alphabet: string, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[floor(rng.next() * alphabet.length)];
  return out;
}

export interface DriveIdentity {
  id: string;
  driveType: DriveType;
  name: string;
  webUrl: string;
  description: string;
  createdMs: number;
  owner: Person;
  /** Item id prefix for business-style ids (`01` + 6 chars) or the CID for personal ids. */
  itemIdPrefix: string;
  /** documentLibrary only: the site it belongs to. */
  site?: { id: string; name: string; webUrl: string };
  quotaTotal: number;
}

export function makeDriveIdentity(seedK: number, t: Tenant, index: number, driveType: DriveType, name: string | undefined): DriveIdentity {
  const rng = Rng.from(seedK, 'drive', index);
  const owner = index === 0 ? t.people[0] : t.people[rng.int(0, t.people.length - 1)];
  const createdMs = t.siteCreatedMs + rng.int(30, 900) * 86_400_000 + rng.int(0, 86_399) * 1000;
  if (driveType === 'personal') {
    const cid = rng.hex(16);
    return {
      id: cid,
      driveType,
      name: name ?? 'OneDrive',
      webUrl: `https://onedrive.live.com/?cid=${cid}`,
      description: '',
      createdMs,
      owner,
      itemIdPrefix: cid.toUpperCase(),
      quotaTotal: 1_099_511_627_776,
    };
  }
  const id = 'b!' + charsFrom(rng, B64URL, 64);
  const itemIdPrefix = '01' + charsFrom(rng, BASE32, 6);
  if (driveType === 'business') {
    const personal = `${owner.alias.replace(/\./g, '_')}_${t.upnDomain.replace(/\./g, '_')}`;
    return {
      id,
      driveType,
      name: name ?? 'OneDrive',
      webUrl: `https://${t.myHostname}/personal/${personal}/Documents`,
      description: '',
      createdMs,
      owner,
      itemIdPrefix,
      quotaTotal: 1_099_511_627_776,
    };
  }
  const siteName = SITE_NAMES[(index + rng.int(0, SITE_NAMES.length - 1)) % SITE_NAMES.length] + (index >= SITE_NAMES.length ? String(index) : '');
  const siteWebUrl = `https://${t.hostname}/sites/${siteName}`;
  return {
    id,
    driveType,
    name: name ?? 'Documents',
    webUrl: `${siteWebUrl}/Shared%20Documents`,
    description: '',
    createdMs,
    owner,
    itemIdPrefix,
    site: { id: `${t.hostname},${rng.uuid()},${rng.uuid()}`, name: siteName, webUrl: siteWebUrl },
    quotaTotal: 27_487_790_694_400,
  };
}

// ---------------------------------------------------------------------------------------
// Items
// ---------------------------------------------------------------------------------------

/** Per-drive key every item stream derives from. */
export function driveKey(seedK: number, driveIndex: number): number {
  return hash32(seedK, 'drive-items', driveIndex);
}

const BASE32_CODES = Array.from(BASE32, (c) => c.charCodeAt(0));
const idCodes: number[] = new Array(26);

/** Business-style item id: `01` + drive prefix + 26 base32 chars (34 in all). */
export function businessItemId(dk: number, prefix: string, index: number, attempt: number): string {
  const rng = stream(dk, T_ID, index, attempt);
  for (let k = 0; k < 26; k++) idCodes[k] = BASE32_CODES[rng.u32() & 31];
  // fromCharCode builds a flat string; `+=` per char would leave a 26-node rope per id.
  return prefix + fromCharCode(...idCodes);
}

/** Personal-style item id: `{CID}!{n}`. Unique by construction. */
export function personalItemId(cid: string, index: number): string {
  return `${cid}!${index + 101}`;
}

const HEX_BYTE = Array.from({ length: 256 }, (_, n) => n.toString(16).toUpperCase().padStart(2, '0'));

function hex8(n: number): string {
  return HEX_BYTE[n >>> 24] + HEX_BYTE[(n >>> 16) & 0xff] + HEX_BYTE[(n >>> 8) & 0xff] + HEX_BYTE[n & 0xff];
}

/** Uppercase GUID (v4-shaped) that eTag/cTag quote, for (drive, index). */
export function itemGuid(dk: number, index: number): string {
  const rng = stream(dk, T_GUID, index);
  const a = hex8(rng.u32());
  const b = hex8((rng.u32() & 0xffff0fff) | 0x4000);
  const c = hex8((rng.u32() & 0x3fffffff) | 0x80000000);
  const d = hex8(rng.u32());
  return `${a}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${d}`;
}

export function folderName(dk: number, index: number, depth: number): string {
  const rng = stream(dk, T_FOLDER_NAME, index);
  return depth <= 1 ? rng.pick(TOP_FOLDERS) : rng.pick(SUB_FOLDERS);
}

function pad(n: number, width: number): string {
  let s = String(n);
  while (s.length < width) s = '0' + s;
  return s;
}

/** A realistic file name for (drive, index); `salt` varies it for files added later. */
export function fileName(dk: number, index: number, salt = 0): string {
  const rng = stream(dk, T_FILE_NAME, index, salt);
  const kind = KIND_TABLE.pick(rng);
  const stem = rng.pick(kind.stems);
  let base: string;
  if (stem.endsWith('_')) {
    base = `${stem}${pad(rng.int(1, 9999), 4)}`;
  } else if (stem === 'Screenshot ' || stem === 'Photo ' || stem === 'Recording ') {
    const y = rng.int(2019, 2024);
    base = `${stem}${y}-${pad(rng.int(1, 12), 2)}-${pad(rng.int(1, 28), 2)} ${pad(rng.int(0, 23), 2)}${pad(rng.int(0, 59), 2)}${pad(rng.int(0, 59), 2)}`;
  } else {
    base = stem + rng.pick(QUALIFIERS);
  }
  return `${base}.${kind.ext}`;
}

/** `Report.docx` → `Report (2).docx`, `Folder` → `Folder (2)`: OneDrive's conflict style. */
export function withSuffix(name: string, n: number, isFile: boolean): string {
  const dot = isFile ? name.lastIndexOf('.') : -1;
  if (dot > 0) return `${name.slice(0, dot)} (${n})${name.slice(dot)}`;
  return `${name} (${n})`;
}

/**
 * File size at a content version: log-uniform within the kind's range (by extension),
 * then each edit changes it by up to ±25%.
 */
export function fileSize(dk: number, index: number, contentVersion: number, name: string): number {
  const dot = name.lastIndexOf('.');
  const kind = (dot > 0 ? KIND_BY_EXT.get(name.slice(dot + 1).toLowerCase()) : undefined) ?? FILE_KINDS[0][0];
  const rng = stream(dk, T_SIZE, index);
  const lo = log(kind.min + 1);
  const hi = log(kind.max + 1);
  let size = floor(exp(lo + rng.next() * (hi - lo))) - 1;
  if (contentVersion > 1) {
    const v = stream(dk, T_SIZE, index, contentVersion);
    size = floor(size * (0.75 + v.next() * 0.5)) + v.int(1, 4096);
  }
  return size < 0 ? 0 : size;
}

/** Generated timestamps never pass this date (so they are never in the future). */
const DATA_HORIZON_MS = Date.UTC(2025, 5, 1);
const DAY_S = 86_400;

/**
 * Creation time after the parent's: folders early in the remaining window (so deep trees
 * do not crowd against the horizon), files anywhere in it.
 */
export function createdAtMs(dk: number, index: number, parentCreatedMs: number, isFolder: boolean): number {
  const rng = stream(dk, T_CREATED, index);
  const roomS = floor((DATA_HORIZON_MS - parentCreatedMs) / 1000) - DAY_S;
  if (roomS <= 0) return parentCreatedMs;
  const span = isFolder ? floor(roomS * 0.3) : roomS;
  return parentCreatedMs + rng.int(60, Math.max(60, span)) * 1000;
}

export function modifiedAtMs(dk: number, index: number, createdMs: number): number {
  const rng = stream(dk, T_MODIFIED, index);
  const room = floor((DATA_HORIZON_MS - createdMs) / 1000);
  if (room <= 1 || rng.chance(0.3)) return createdMs;
  return createdMs + rng.int(1, Math.min(400 * DAY_S, room - 1)) * 1000;
}

/** Which person (index into `Tenant.people`) made an item, or its version's last change. */
export function editorIndex(dk: number, index: number, version: number, peopleCount: number): number {
  // The drive owner makes most changes.
  const h = hash32(dk, T_EDITOR, index, version);
  return h % 10 < 6 ? 0 : 1 + (floor(h / 10) % (peopleCount - 1));
}

const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => (n < 10 ? '0' : '') + n);
const dayCache = new Map<number, string>();

/** `2023-04-05T08:44:07Z`: Graph's driveItem timestamps have second precision. */
export function isoSeconds(ms: number): string {
  const s = floor(ms / 1000);
  const day = floor(s / DAY_S);
  let date = dayCache.get(day);
  if (date === undefined) {
    date = new Date(day * DAY_S * 1000).toISOString().slice(0, 10);
    if (dayCache.size < 50_000) dayCache.set(day, date);
  }
  const sod = s - day * DAY_S;
  return `${date}T${TWO_DIGITS[floor(sod / 3600)]}:${TWO_DIGITS[floor(sod / 60) % 60]}:${TWO_DIGITS[sod % 60]}Z`;
}
