/**
 * Consent: what each user granted each app, and what an admin granted each app for the
 * whole tenant. A scope is granted to a user when either holds it. Consent accumulates
 * (incremental consent): accepting new scopes never drops earlier ones.
 */
import type { GrantScope, Resource } from './scopes';

export interface GrantSnapshot {
  /** Per user (object id) and app: scopes the user consented to, display names. */
  users: Array<{ userId: string; clientId: string; scopes: string[] }>;
  /** Per app: scopes an admin granted for every user. */
  tenantWide: Array<{ clientId: string; scopes: string[] }>;
}

export class Grants {
  private readonly byUser = new Map<string, Map<string, GrantScope>>();
  private readonly tenantWide = new Map<string, Map<string, GrantScope>>();

  private static userKey(userId: string, clientId: string): string {
    return `${userId}\n${clientId}`;
  }

  private static add(target: Map<string, Map<string, GrantScope>>, key: string, scopes: Iterable<GrantScope>): void {
    let set = target.get(key);
    if (!set) target.set(key, (set = new Map()));
    for (const s of scopes) if (!set.has(s.key)) set.set(s.key, s);
  }

  grantUser(userId: string, clientId: string, scopes: Iterable<GrantScope>): void {
    Grants.add(this.byUser, Grants.userKey(userId, clientId), scopes);
  }

  grantTenant(clientId: string, scopes: Iterable<GrantScope>): void {
    Grants.add(this.tenantWide, clientId, scopes);
  }

  isTenantGranted(clientId: string, key: string): boolean {
    return this.tenantWide.get(clientId)?.has(key) ?? false;
  }

  /** Union of the user's and the tenant-wide grants, by key. */
  granted(userId: string, clientId: string): Map<string, GrantScope> {
    const out = new Map<string, GrantScope>(this.tenantWide.get(clientId) ?? []);
    for (const [k, v] of this.byUser.get(Grants.userKey(userId, clientId)) ?? []) if (!out.has(k)) out.set(k, v);
    return out;
  }

  /** Whether any consent exists for the pair (decides what `.default` prompts for). */
  hasAny(userId: string, clientId: string): boolean {
    return (this.byUser.get(Grants.userKey(userId, clientId))?.size ?? 0) > 0 || (this.tenantWide.get(clientId)?.size ?? 0) > 0;
  }

  /** Granted permissions of one resource, sorted case-insensitively by name. */
  grantedFor(userId: string, clientId: string, resource: Resource): GrantScope[] {
    return [...this.granted(userId, clientId).values()]
      .filter((g) => g.kind === resource)
      .sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
  }

  revokeUser(userId: string, clientId?: string): void {
    for (const key of [...this.byUser.keys()]) {
      const [u, c] = key.split('\n');
      if (u === userId && (clientId === undefined || c === clientId)) this.byUser.delete(key);
    }
  }

  revokeTenant(clientId: string): void {
    this.tenantWide.delete(clientId);
  }

  snapshot(): GrantSnapshot {
    const names = (m: Map<string, GrantScope>) => [...m.values()].map((g) => g.name);
    return {
      users: [...this.byUser].map(([key, m]) => {
        const [userId, clientId] = key.split('\n');
        return { userId, clientId, scopes: names(m) };
      }),
      tenantWide: [...this.tenantWide].map(([clientId, m]) => ({ clientId, scopes: names(m) })),
    };
  }
}
