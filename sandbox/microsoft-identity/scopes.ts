/**
 * Scope strings: which resource each scope belongs to, the `.default`
 * rules, and how granted scopes are named in token responses.
 *
 *  - Bare permission names are Graph's: `User.Read` ≡ `https://graph.microsoft.com/User.Read`.
 *  - `openid profile email offline_access` are OIDC scopes, valid next to anything.
 *  - `{resource}/.default` may not be combined with other (non-OIDC) scopes, nor with a
 *    second `.default` (AADSTS70011 "static scope limit exceeded").
 *  - A token request names one resource only (AADSTS700022).
 *
 * Consent is kept per permission key (`graph:user.read`); SharePoint hosts share one key
 * space because they are one first-party resource, while tokens are per host.
 */
import { AAD } from './errors';

export type Resource = 'graph' | 'sharepoint';
export const GRAPH_HOST = 'graph.microsoft.com';
const GRAPH_APP_ID = '00000003-0000-0000-c000-000000000000';

export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
export type OidcScope = (typeof OIDC_SCOPES)[number];

function isOidcScope(s: string): s is OidcScope {
  return (OIDC_SCOPES as readonly string[]).includes(s);
}

/** A resource as a token audience: Graph, or one SharePoint host. */
export interface ResourceRef {
  resource: Resource;
  /** Lower-case host: `graph.microsoft.com` or a SharePoint host. */
  host: string;
}

export interface Permission extends ResourceRef {
  /** As requested, without the resource prefix, e.g. `Files.Read.All`. */
  name: string;
}

export interface ParsedScopes {
  /** The scopes as given, single-spaced (quoted in error messages). */
  raw: string;
  /** OIDC scopes, deduplicated, in OIDC_SCOPES order. */
  oidc: OidcScope[];
  /** Dynamic (named) permissions, deduplicated by key. */
  explicit: Permission[];
  /** `{resource}/.default` entries, deduplicated. */
  defaults: ResourceRef[];
  /** Every resource named, in order of first appearance. */
  resources: ResourceRef[];
}

/** A scope as consent records it. */
export interface GrantScope {
  /** `oidc:offline_access`, `graph:files.read.all`, `sharepoint:allsites.read`. */
  key: string;
  kind: Resource | 'oidc';
  /** Display name, e.g. `Files.Read.All`. */
  name: string;
}

export interface ScopeContext {
  /** Current team-site host (lower-case). */
  sharePointHost: string;
  tenantName: string;
}

export function permissionKey(resource: Resource, name: string): string {
  return `${resource}:${name.toLowerCase()}`;
}

export function grantScopeOf(p: Permission): GrantScope {
  return { key: permissionKey(p.resource, p.name), kind: p.resource, name: p.name };
}

export function oidcGrantScope(s: OidcScope): GrantScope {
  return { key: `oidc:${s}`, kind: 'oidc', name: s };
}

/** `contoso.sharepoint.com` → `contoso-my.sharepoint.com` (OneDrive), else null. */
function oneDriveHostOf(sharePointHost: string): string | null {
  const m = /^([a-z0-9-]+)\.sharepoint\.com$/i.exec(sharePointHost);
  return m && !m[1].endsWith('-my') ? `${m[1].toLowerCase()}-my.sharepoint.com` : null;
}

function sameRef(a: ResourceRef, b: ResourceRef): boolean {
  return a.resource === b.resource && a.host === b.host;
}

/**
 * Splits a `scope` parameter into OIDC scopes, named permissions and `.default`s. A URI of
 * a resource the tenant does not have answers AADSTS500011 (thrown). Does not apply the
 * combination rules: see checkStaticLimit / singleResource.
 */
export function parseScopes(rawScope: string, ctx: ScopeContext): ParsedScopes {
  const parts = rawScope.split(/\s+/).filter((s) => s.length > 0);
  const out: ParsedScopes = { raw: parts.join(' '), oidc: [], explicit: [], defaults: [], resources: [] };
  const seen = new Set<string>();
  const addResource = (ref: ResourceRef) => {
    if (!out.resources.some((r) => sameRef(r, ref))) out.resources.push(ref);
  };
  const spHost = ctx.sharePointHost.toLowerCase();
  const myHost = oneDriveHostOf(spHost);

  for (const part of parts) {
    const lower = part.toLowerCase();
    if (isOidcScope(lower)) {
      if (!out.oidc.includes(lower)) out.oidc.push(lower);
      continue;
    }
    let ref: ResourceRef;
    let name: string;
    const uri = /^(https?:\/\/[^/]+)\/(.+)$/i.exec(part);
    if (uri) {
      const host = uri[1].replace(/^https?:\/\//i, '').toLowerCase();
      name = uri[2];
      if (host === GRAPH_HOST) ref = { resource: 'graph', host: GRAPH_HOST };
      else if (host === spHost || host === myHost) ref = { resource: 'sharepoint', host };
      else throw AAD.resourceNotFound(uri[1], ctx.tenantName);
    } else if (lower.startsWith(`${GRAPH_APP_ID}/`)) {
      ref = { resource: 'graph', host: GRAPH_HOST };
      name = part.slice(GRAPH_APP_ID.length + 1);
    } else if (!part.includes('/') && !part.includes(':')) {
      ref = { resource: 'graph', host: GRAPH_HOST };
      name = part;
    } else {
      throw AAD.resourceNotFound(part, ctx.tenantName);
    }
    if (name.length === 0 || name.includes('/')) throw AAD.malformed();
    addResource(ref);
    if (name.toLowerCase() === '.default') {
      if (!out.defaults.some((d) => sameRef(d, ref))) out.defaults.push(ref);
      continue;
    }
    const key = `${ref.host}|${name.toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.explicit.push({ ...ref, name });
  }
  out.oidc.sort((a, b) => OIDC_SCOPES.indexOf(a) - OIDC_SCOPES.indexOf(b));
  return out;
}

/** `.default` next to another named permission or a second `.default` → AADSTS70011. */
export function checkStaticLimit(p: ParsedScopes): void {
  if (p.defaults.length === 0) return;
  if (p.defaults.length > 1 || p.explicit.length > 0) throw AAD.staticScopeLimit(p.raw);
}

/** The one resource of a token request (null when only OIDC scopes), or AADSTS700022. */
export function singleResource(p: ParsedScopes): ResourceRef | null {
  if (p.resources.length > 1) throw AAD.multipleResources(p.raw);
  return p.resources[0] ?? null;
}

/**
 * A scope from configuration (app permissions, admin-only lists, grantTenantWide): bare and
 * Graph URIs are Graph, OIDC names are OIDC, any other `https://host/name` is SharePoint.
 * Returns null for `.default` (the caller expands it).
 */
export function configScope(s: string): GrantScope | null {
  const lower = s.toLowerCase();
  if (isOidcScope(lower)) return oidcGrantScope(lower);
  const uri = /^https?:\/\/([^/]+)\/(.+)$/i.exec(s);
  let resource: Resource = 'graph';
  let name = s;
  if (uri) {
    resource = uri[1].toLowerCase() === GRAPH_HOST ? 'graph' : 'sharepoint';
    name = uri[2];
  } else if (lower.startsWith(`${GRAPH_APP_ID}/`)) {
    name = s.slice(GRAPH_APP_ID.length + 1);
  }
  if (name.toLowerCase() === '.default') return null;
  return { key: permissionKey(resource, name), kind: resource, name };
}

/** How a granted permission appears in `scope` of a token response for `ref`. */
export function formatScope(ref: ResourceRef, name: string): string {
  // Graph's own scopes come back as short names; other resources' as full URIs.
  return ref.resource === 'graph' ? name : `https://${ref.host}/${name}`;
}

/** As the admin consent redirect lists them: full URIs, OIDC names bare. */
export function fullScopeName(g: GrantScope, sharePointHost: string): string {
  if (g.kind === 'oidc') return g.name;
  return g.kind === 'graph' ? `https://${GRAPH_HOST}/${g.name}` : `https://${sharePointHost}/${g.name}`;
}

const DESCRIPTIONS: Record<string, string> = {
  'oidc:openid': 'Sign you in',
  'oidc:profile': 'View your basic profile',
  'oidc:email': 'View your email address',
  'oidc:offline_access': 'Maintain access to data you have given it access to',
  'graph:user.read': 'Sign you in and read your profile',
  'graph:user.readbasic.all': "Read all users' basic profiles",
  'graph:user.read.all': "Read all users' full profiles",
  'graph:files.read': 'Read your files',
  'graph:files.read.all': 'Read all files that you have access to',
  'graph:files.readwrite': 'Have full access to your files',
  'graph:files.readwrite.all': 'Have full access to all files you have access to',
  'graph:sites.read.all': 'Read items in all site collections',
  'graph:sites.readwrite.all': 'Edit or delete items in all site collections',
  'sharepoint:allsites.read': 'Read items in all site collections',
  'sharepoint:myfiles.read': 'Read your files',
};

/** The consent page's sentence for a scope (its name when unknown). */
export function describeScope(g: GrantScope): string {
  return DESCRIPTIONS[g.key] ?? (g.kind === 'sharepoint' ? `Office 365 SharePoint Online: ${g.name}` : g.name);
}
