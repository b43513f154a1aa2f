/**
 * People who can sign in to the simulated github.com: their credentials for the web pages
 * and the `GET /user` ("private-user") shape their OAuth tokens see. A user's account (and
 * its repositories) lives in the store like any installation's account; this module only
 * knows the person.
 */
import crypto from 'node:crypto';
import { Rng } from '../shared/prng';
import { DAY_MS, isoSeconds, type Account } from './data';
import { simpleUser, type RenderContext } from './render';

export interface UserRec {
  login: string;
  name: string;
  email: string | null;
  account: Account;
  /** Logins (lower case) of the organizations the user belongs to. */
  organizations: Set<string>;
  createdMs: number;
  /** sha256 of the password: compared in constant time, never kept in clear. */
  passwordDigest: Buffer;
}

function digest(password: string): Buffer {
  return crypto.createHash('sha256').update(password, 'utf8').digest();
}

export class UserDirectory {
  private readonly byLogin = new Map<string, UserRec>();

  constructor(private readonly seedK: number) {}

  add(u: { login: string; password: string; name?: string; email?: string | null; organizations?: readonly string[] }, account: Account): UserRec {
    const key = u.login.toLowerCase();
    if (this.byLogin.has(key)) throw new Error(`user ${u.login} already exists`);
    const rec: UserRec = {
      login: account.login,
      name: u.name ?? u.login,
      email: u.email ?? null,
      account,
      organizations: new Set((u.organizations ?? []).map((o) => o.toLowerCase())),
      // Accounts predate the seeded data; the date derives from the login, not the clock.
      createdMs: Date.UTC(2014, 0, 1) + Rng.from(this.seedK, 'user-created', key).int(0, 2500) * DAY_MS,
      passwordDigest: digest(u.password),
    };
    this.byLogin.set(key, rec);
    return rec;
  }

  get(login: string): UserRec | undefined {
    return this.byLogin.get(login.toLowerCase());
  }

  /** GitHub's sign-in form takes the login or the email address (case-insensitive). */
  find(loginOrEmail: string): UserRec | undefined {
    const key = loginOrEmail.trim().toLowerCase();
    return this.byLogin.get(key) ?? [...this.byLogin.values()].find((u) => u.email !== null && u.email.toLowerCase() === key);
  }

  /** The user when the credentials are right, else undefined (one answer for both mistakes). */
  verify(loginOrEmail: string, password: string): UserRec | undefined {
    const user = this.find(loginOrEmail);
    const ok = crypto.timingSafeEqual(digest(password), user?.passwordDigest ?? digest(`\0${password}`));
    return user && ok ? user : undefined;
  }

  all(): UserRec[] {
    return [...this.byLogin.values()];
  }
}

/** `GET /user` for the user's own token: the "private-user" schema. */
export function privateUserJson(user: UserRec, ctx: RenderContext, repos: { public: number; private: number }): Record<string, unknown> {
  const rng = Rng.from(user.account.id, 'profile');
  return {
    ...simpleUser(user.account, ctx),
    user_view_type: 'private',
    name: user.name,
    company: null,
    blog: '',
    location: null,
    email: user.email,
    hireable: null,
    bio: null,
    twitter_username: null,
    notification_email: user.email,
    public_repos: repos.public,
    public_gists: rng.int(0, 5),
    followers: rng.int(0, 80),
    following: rng.int(0, 40),
    created_at: isoSeconds(user.createdMs),
    updated_at: isoSeconds(user.createdMs + rng.int(30, 900) * DAY_MS),
    private_gists: rng.int(0, 3),
    total_private_repos: repos.private,
    owned_private_repos: repos.private,
    disk_usage: rng.int(1_000, 900_000),
    collaborators: 0,
    two_factor_authentication: true,
    plan: { name: 'free', space: 976562499, collaborators: 0, private_repos: 10000 },
  };
}
