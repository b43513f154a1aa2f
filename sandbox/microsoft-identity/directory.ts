/**
 * The simulated tenant: its identity, its users and the app registrations it knows, and
 * which `{tenant}` path segments reach it.
 */
import { Rng } from '../shared/prng';
import { AAD, type AadError } from './errors';
import { AppRegistrationSchema, isGuid, UserSchema, type AppRegistration, type UserRegistration } from './options';

export interface TenantInfo {
  id: string;
  name: string;
  displayName: string;
  /** `{name}.onmicrosoft.com`. */
  domain: string;
}

export interface UserRecord {
  id: string;
  username: string;
  password: string;
  isAdmin: boolean;
  displayName: string;
  email: string;
  /** Refresh tokens and SSO sessions issued before this sequence number are revoked. */
  validFromSeq: number;
  /** When they were revoked (epoch ms), for AADSTS50173's text. */
  validFromMs: number | null;
}

export interface AppRecord {
  clientId: string;
  /** Undefined for a public client. */
  clientSecret: string | undefined;
  secretExpired: boolean;
  redirectUris: string[];
  displayName: string;
  permissions: string[];
}

/** A user as inspection shows it (no password). */
export interface MicrosoftIdentityUser {
  id: string;
  username: string;
  displayName: string;
  email: string;
  isAdmin: boolean;
}

/** An app as inspection shows it (no secret). */
export interface MicrosoftIdentityApp {
  clientId: string;
  displayName: string;
  redirectUris: string[];
  permissions: string[];
  publicClient: boolean;
}

const MULTI_TENANT = new Set(['common', 'organizations', 'consumers']);
const DNS_NAME_RE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/i;

export class Directory {
  private readonly users = new Map<string, UserRecord>();
  private readonly apps = new Map<string, AppRecord>();

  constructor(
    private readonly seedK: number,
    readonly tenant: TenantInfo,
  ) {}

  /** null when `segment` names this tenant (or a multi-tenant alias), else the error. */
  checkTenant(segment: string): AadError | null {
    const s = segment.toLowerCase();
    if (MULTI_TENANT.has(s) || s === this.tenant.id.toLowerCase() || s === this.tenant.domain) return null;
    if (isGuid(s) || DNS_NAME_RE.test(s)) return AAD.tenantNotFound(segment);
    return AAD.tenantMalformed(segment);
  }

  addUser(reg: UserRegistration): UserRecord {
    const u = UserSchema.parse(reg);
    const username = u.username.toLowerCase();
    if (this.users.has(username)) throw new Error(`addUser: ${u.username} already exists`);
    const local = u.username.split('@')[0];
    const rec: UserRecord = {
      id: (u.id ?? Rng.from(this.seedK, 'user', username).uuid()).toLowerCase(),
      username: u.username,
      password: u.password,
      isAdmin: u.isAdmin,
      displayName: u.displayName ?? local.charAt(0).toUpperCase() + local.slice(1),
      email: u.email ?? u.username,
      validFromSeq: 0,
      validFromMs: null,
    };
    for (const other of this.users.values()) {
      if (other.id === rec.id) throw new Error(`addUser: id ${rec.id} is already used by ${other.username}`);
    }
    this.users.set(username, rec);
    return rec;
  }

  /** By username (case-insensitive) or object id. */
  findUser(usernameOrId: string): UserRecord | undefined {
    const key = usernameOrId.toLowerCase();
    const byName = this.users.get(key);
    if (byName) return byName;
    for (const u of this.users.values()) if (u.id === key) return u;
    return undefined;
  }

  userById(id: string): UserRecord | undefined {
    for (const u of this.users.values()) if (u.id === id) return u;
    return undefined;
  }

  listUsers(): MicrosoftIdentityUser[] {
    return [...this.users.values()].map((u) => ({ id: u.id, username: u.username, displayName: u.displayName, email: u.email, isAdmin: u.isAdmin }));
  }

  registerApp(reg: AppRegistration): AppRecord {
    const a = AppRegistrationSchema.parse(reg);
    const key = a.clientId.toLowerCase();
    if (this.apps.has(key)) throw new Error(`registerApp: an app with clientId ${a.clientId} is already registered`);
    const rec: AppRecord = {
      clientId: key,
      clientSecret: a.clientSecret,
      secretExpired: false,
      redirectUris: [...new Set(a.redirectUris)],
      displayName: a.displayName,
      permissions: a.permissions,
    };
    this.apps.set(key, rec);
    return rec;
  }

  app(clientId: string): AppRecord | undefined {
    return this.apps.get(clientId.toLowerCase());
  }

  listApps(): MicrosoftIdentityApp[] {
    return [...this.apps.values()].map((a) => ({
      clientId: a.clientId,
      displayName: a.displayName,
      redirectUris: [...a.redirectUris],
      permissions: [...a.permissions],
      publicClient: a.clientSecret === undefined,
    }));
  }
}
