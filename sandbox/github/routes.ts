/**
 * The REST routes (no path prefix, like api.github.com). Each route declares who may call it
 * and whether it counts against the primary rate limit; the pipeline in `simulator.ts`
 * enforces that before `handle` runs, so handlers only deal with their own parameters.
 */
import { commitCount, type PullRec, type RepoRec } from './data';
import { hasRepoScope } from './oauth';
import { APP_PERMISSIONS, appJson, installationJson, pullFullJson, pullSimpleJson, repoJson, commitJson, type AppInfo, type RenderContext } from './render';
import { DOCS, githubError, notFound, paginate, validationFailed, type Reply, type ValidationIssue } from './responses';
import type { TokenRec, TokenStore } from './auth';
import type { RateLimiter } from './rate-limit';
import type { GitHubStore, PullSort, PullState } from './store';
import { privateUserJson, type UserRec } from './users';
import { snapshotPull, type PullSnapshot } from './webhooks';

/** GitHub lists at most this many commits of a pull request. */
const PULL_COMMITS_CAP = 250;

export type Viewer =
  | { kind: 'installation'; installationId: number; token: TokenRec }
  | { kind: 'app' }
  /**
   * A user's token: an OAuth App token (`gho_`, limited by its scopes) or a GitHub App user
   * token (`ghu_`, no scopes: limited to what the App's installations can reach).
   */
  | { kind: 'user'; user: UserRec; scopes: readonly string[]; via: 'oauth-app' | 'github-app' }
  | { kind: 'anonymous' };

export interface RequestContext {
  nowMs: number;
  path: string;
  query: URLSearchParams;
  /** Raw request body (POST and PATCH). */
  body: string;
  /** Decoded path parameters, in pattern order. */
  params: string[];
  viewer: Viewer;
  render: RenderContext;
  /** Bucket key of the caller's primary rate limit (for /rate_limit). */
  rateKey: string;
}

export interface RouteDeps {
  store: GitHubStore;
  tokens: TokenStore;
  app: AppInfo;
  limiter: RateLimiter;
  tokenTtlMs(): number;
  onTokenIssued(installationId: number): void;
  /** A pull request changed through `PATCH`: `before` is what it was (the App's webhook tells of the change). */
  onPullEdited(before: PullSnapshot, pull: PullRec, viewer: Viewer): void;
}

export interface Route {
  method: 'GET' | 'POST' | 'PATCH';
  pattern: RegExp;
  /**
   * `app`: App JWT only. `installation`: installation or user token (anonymous callers see
   * public data). `user`: a user's (OAuth) token only. `any`: anyone.
   */
  auth: 'app' | 'installation' | 'user' | 'any';
  /** Anonymous callers get 401 "Requires authentication" instead of public data. */
  requiresAuth?: boolean;
  /** Message of the 403 a valid App JWT gets on an installation route. */
  jwtForbidden?: string;
  /** False for /rate_limit, which never counts against the primary limit. */
  counts: boolean;
  docs: string;
  /** `X-Accepted-GitHub-Permissions` of successful answers. */
  acceptedPermissions?: string;
  handle(ctx: RequestContext): Reply;
}

const SEG = '([^/]+)';

function ok(body: unknown, headers?: Record<string, string>): Reply {
  return { status: 200, body, headers };
}

function withLink(headers: Record<string, string>, link: string | undefined): Record<string, string> {
  if (link !== undefined) headers.link = link;
  return headers;
}

export function createRoutes(deps: RouteDeps): Route[] {
  const { store, tokens, app, limiter } = deps;

  /** Repository JSON cache for one request (head and base repeat the same repository). */
  function repoCache(ctx: RequestContext, full = false) {
    const cache = new Map<RepoRec, Record<string, unknown>>();
    const v = ctx.viewer;
    const permissionsOf = (rec: RepoRec): boolean | 'owner' =>
      v.kind === 'installation' ? true : v.kind === 'user' ? (ownedBy(rec, v.user) ? 'owner' : true) : false;
    return (rec: RepoRec) => {
      let json = cache.get(rec);
      if (!json) {
        json = repoJson(rec, ctx.render, { openPulls: rec.fork ? 0 : store.openPullCount(rec), permissions: permissionsOf(rec), full });
        cache.set(rec, json);
      }
      return json;
    };
  }

  /** GitHub answers 404 (never 403) for a repository the caller cannot see. */
  function visibleRepo(ctx: RequestContext, owner: string, name: string): RepoRec | undefined {
    const repo = store.findRepo(owner, name);
    if (!repo) return undefined;
    const v = ctx.viewer;
    if (v.kind === 'installation') {
      if (!store.installationSees(v.installationId, repo)) return undefined;
      if (v.token.repositoryIds !== null && !v.token.repositoryIds.has(repo.id)) return undefined;
      return repo;
    }
    // A user's token sees the user's own private repositories only with the `repo` scope.
    if (v.kind === 'user' && ownedBy(repo, v.user)) return !repo.private || userSeesPrivate(v, repo) ? repo : undefined;
    return repo.private ? undefined : repo;
  }

  /**
   * A private repository of the user's: an OAuth App token needs the `repo` scope; a GitHub
   * App user token reaches it only where an installation of the App does.
   */
  function userSeesPrivate(v: Extract<Viewer, { kind: 'user' }>, repo: RepoRec): boolean {
    if (v.via === 'oauth-app') return hasRepoScope(v.scopes);
    return repo.installationId !== null && store.installationSees(repo.installationId, repo);
  }

  /**
   * The App's installations a user can reach: on their own account and on the organizations
   * they belong to (the simulated world has no outside collaborators).
   */
  function installationsOf(user: UserRec) {
    const login = user.login.toLowerCase();
    return [...store.installations.values()].filter((i) => {
      const account = i.account.login.toLowerCase();
      return account === login || (i.account.type === 'Organization' && user.organizations.has(account));
    });
  }

  function ownedBy(repo: RepoRec, user: UserRec): boolean {
    return repo.owner.login.toLowerCase() === user.login.toLowerCase();
  }

  /** What an installation token's listing says: the token's own scoping, else the installation's. */
  function selectionOf(installationId: number, token: TokenRec): 'all' | 'selected' {
    if (token.repositoryIds !== null) return 'selected';
    return store.installations.get(installationId)?.selectedRepoIds ? 'selected' : 'all';
  }

  function installationRepos(installationId: number, token: TokenRec | null): RepoRec[] {
    return store.visibleRepos(installationId).filter((r) => token === null || token.repositoryIds === null || token.repositoryIds.has(r.id));
  }

  function enumParam<T extends string>(ctx: RequestContext, name: string, allowed: readonly T[], issues: ValidationIssue[]): T | undefined {
    const v = ctx.query.get(name);
    if (v === null) return undefined;
    if ((allowed as readonly string[]).includes(v)) return v as T;
    issues.push({ resource: 'PullRequest', field: name, code: 'invalid', value: v });
    return undefined;
  }

  const routes: Route[] = [
    {
      method: 'GET',
      pattern: /^\/app$/,
      auth: 'app',
      counts: true,
      docs: DOCS.getApp,
      handle: (ctx) => ok(appJson(app, store.installations.size, ctx.render)),
    },
    {
      method: 'GET',
      pattern: /^\/app\/installations$/,
      auth: 'app',
      counts: true,
      docs: DOCS.listInstallations,
      handle: (ctx) => {
        const all = [...store.installations.values()];
        const { page, link } = paginate(all, ctx.query, ctx.render.api, ctx.path);
        return ok(
          page.map((i) => installationJson(i, app, ctx.render)),
          withLink({}, link),
        );
      },
    },
    {
      method: 'GET',
      pattern: /^\/app\/installations\/(\d+)$/,
      auth: 'app',
      counts: true,
      docs: DOCS.getInstallation,
      handle: (ctx) => {
        const inst = store.installations.get(Number(ctx.params[0]));
        return inst ? ok(installationJson(inst, app, ctx.render)) : notFound(DOCS.getInstallation);
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/repos/${SEG}/${SEG}/installation$`),
      auth: 'app',
      counts: true,
      docs: DOCS.repoInstallation,
      handle: (ctx) => {
        const repo = store.findRepo(ctx.params[0], ctx.params[1]);
        const inst =
          repo && repo.installationId !== null && store.installationSees(repo.installationId, repo) ? store.installations.get(repo.installationId) : undefined;
        return inst ? ok(installationJson(inst, app, ctx.render)) : notFound(DOCS.repoInstallation);
      },
    },
    {
      method: 'POST',
      pattern: /^\/app\/installations\/(\d+)\/access_tokens$/,
      auth: 'app',
      counts: true,
      docs: DOCS.createToken,
      handle: (ctx) => createToken(ctx),
    },
    {
      method: 'GET',
      pattern: /^\/installation\/repositories$/,
      auth: 'installation',
      requiresAuth: true,
      jwtForbidden: 'You must authenticate with an installation access token in order to list repositories for an installation.',
      counts: true,
      docs: DOCS.installationRepos,
      handle: (ctx) => {
        if (ctx.viewer.kind === 'user') {
          return githubError(
            403,
            'You must authenticate with an installation access token in order to list repositories for an installation.',
            DOCS.installationRepos,
          );
        }
        if (ctx.viewer.kind !== 'installation') return githubError(401, 'Requires authentication', DOCS.installationRepos);
        const token = ctx.viewer.token;
        const repos = installationRepos(ctx.viewer.installationId, token);
        const { page, link } = paginate(repos, ctx.query, ctx.render.api, ctx.path);
        const json = repoCache(ctx);
        return ok(
          { total_count: repos.length, repositories: page.map(json), repository_selection: selectionOf(ctx.viewer.installationId, token) },
          withLink({}, link),
        );
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/repos/${SEG}/${SEG}$`),
      auth: 'installation',
      counts: true,
      docs: DOCS.getRepo,
      acceptedPermissions: 'metadata=read',
      handle: (ctx) => {
        const repo = visibleRepo(ctx, ctx.params[0], ctx.params[1]);
        if (!repo) return notFound(DOCS.getRepo);
        return ok(repoCache(ctx, true)(repo));
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/repos/${SEG}/${SEG}/pulls$`),
      auth: 'installation',
      counts: true,
      docs: DOCS.listPulls,
      acceptedPermissions: 'pull_requests=read',
      handle: (ctx) => {
        const repo = visibleRepo(ctx, ctx.params[0], ctx.params[1]);
        if (!repo) return notFound(DOCS.listPulls);
        const issues: ValidationIssue[] = [];
        const state = enumParam<PullState>(ctx, 'state', ['open', 'closed', 'all'], issues) ?? 'open';
        const sort = enumParam<PullSort>(ctx, 'sort', ['created', 'updated', 'popularity', 'long-running'], issues) ?? 'created';
        const direction = enumParam<'asc' | 'desc'>(ctx, 'direction', ['asc', 'desc'], issues) ?? (sort === 'created' ? 'desc' : 'asc');
        if (issues.length) return validationFailed(DOCS.listPulls, issues);
        const list = store.queryPulls(repo, {
          state,
          sort,
          direction,
          head: ctx.query.get('head') ?? undefined,
          base: ctx.query.get('base') ?? undefined,
          nowMs: ctx.nowMs,
        });
        const { page, link } = paginate(list, ctx.query, ctx.render.api, ctx.path);
        const helpers = { repo: repoCache(ctx), fork: store.fork.bind(store) };
        return ok(
          page.map((p) => pullSimpleJson(p, ctx.render, helpers)),
          withLink({}, link),
        );
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/repos/${SEG}/${SEG}/pulls/${SEG}$`),
      auth: 'installation',
      counts: true,
      docs: DOCS.getPull,
      acceptedPermissions: 'pull_requests=read',
      handle: (ctx) => {
        const repo = visibleRepo(ctx, ctx.params[0], ctx.params[1]);
        const pull = repo && /^\d+$/.test(ctx.params[2]) ? store.pull(repo, Number(ctx.params[2])) : undefined;
        if (!pull) return notFound(DOCS.getPull);
        return ok(pullFullJson(pull, ctx.render, { repo: repoCache(ctx), fork: store.fork.bind(store) }));
      },
    },
    {
      method: 'PATCH',
      pattern: new RegExp(`^/repos/${SEG}/${SEG}/pulls/${SEG}$`),
      auth: 'installation',
      requiresAuth: true,
      counts: true,
      docs: DOCS.updatePull,
      acceptedPermissions: 'pull_requests=write',
      handle: (ctx) => updatePull(ctx),
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/repos/${SEG}/${SEG}/pulls/${SEG}/commits$`),
      auth: 'installation',
      counts: true,
      docs: DOCS.pullCommits,
      acceptedPermissions: 'pull_requests=read; contents=read',
      handle: (ctx) => {
        const repo = visibleRepo(ctx, ctx.params[0], ctx.params[1]);
        const pull = repo && /^\d+$/.test(ctx.params[2]) ? store.pull(repo, Number(ctx.params[2])) : undefined;
        if (!repo || !pull) return notFound(DOCS.pullCommits);
        // Only the first 250 commits exist for this endpoint, however the pages are cut.
        const total = Math.min(commitCount(pull), PULL_COMMITS_CAP);
        const indexes = Array.from({ length: total }, (_, i) => i);
        const { page, link } = paginate(indexes, ctx.query, ctx.render.api, ctx.path);
        const commits = page.length ? store.commits(pull, page[0], page[page.length - 1] + 1) : [];
        return ok(
          commits.map((c) => commitJson(repo, c, ctx.render)),
          withLink({}, link),
        );
      },
    },
    {
      method: 'GET',
      pattern: /^\/user$/,
      auth: 'user',
      counts: true,
      docs: DOCS.authenticatedUser,
      handle: (ctx) => {
        if (ctx.viewer.kind !== 'user') return githubError(401, 'Requires authentication', DOCS.authenticatedUser);
        const owned = store.ownedRepos(ctx.viewer.user.login);
        const priv = owned.filter((r) => r.private).length;
        return ok(privateUserJson(ctx.viewer.user, ctx.render, { public: owned.length - priv, private: priv }));
      },
    },
    {
      method: 'GET',
      pattern: /^\/user\/repos$/,
      auth: 'user',
      counts: true,
      docs: DOCS.userRepos,
      handle: (ctx) => listUserRepos(ctx),
    },
    {
      method: 'GET',
      pattern: /^\/user\/installations$/,
      auth: 'user',
      counts: true,
      docs: DOCS.userInstallations,
      handle: (ctx) => {
        if (ctx.viewer.kind !== 'user') return githubError(401, 'Requires authentication', DOCS.userInstallations);
        // Only the App's own user tokens: an OAuth App token is not "authorized to a GitHub App".
        if (ctx.viewer.via !== 'github-app') {
          return githubError(
            403,
            'You must authenticate with an access token authorized to a GitHub App in order to list installations',
            DOCS.userInstallations,
          );
        }
        const list = installationsOf(ctx.viewer.user);
        const { page, link } = paginate(list, ctx.query, ctx.render.api, ctx.path);
        return ok({ total_count: list.length, installations: page.map((i) => installationJson(i, app, ctx.render)) }, withLink({}, link));
      },
    },
    {
      method: 'GET',
      pattern: /^\/rate_limit$/,
      auth: 'any',
      counts: false,
      docs: DOCS.rateLimit,
      handle: (ctx) => {
        const core = limiter.snapshot(ctx.rateKey, ctx.nowMs);
        const anon = ctx.viewer.kind === 'anonymous';
        const inMinute = Math.ceil((ctx.nowMs + 60_000) / 1000);
        const fresh = (limit: number, reset = core.reset) => ({ limit, used: 0, remaining: limit, reset });
        const resources = {
          core,
          search: fresh(anon ? 10 : 30, inMinute),
          graphql: fresh(anon ? 0 : core.limit),
          integration_manifest: fresh(5000),
          source_import: fresh(anon ? 5 : 100, inMinute),
          code_scanning_upload: fresh(anon ? 60 : 1000),
          actions_runner_registration: fresh(anon ? 10 : 10000),
          scim: fresh(anon ? 0 : 15000),
          dependency_snapshots: fresh(anon ? 0 : 100, inMinute),
          code_search: fresh(anon ? 0 : 10, inMinute),
        };
        // `rate` was removed from this response in API version 2026-03-10.
        return ok(ctx.render.version === '2026-03-10' ? { resources } : { resources, rate: { ...core } });
      },
    },
  ];

  /**
   * `GET /user/repos`: the repositories the user owns (the simulated world has no
   * collaborators or organization memberships), private ones only with the `repo` scope.
   * Defaults as on GitHub: sort `full_name`, direction `asc` for it and `desc` otherwise.
   */
  function listUserRepos(ctx: RequestContext): Reply {
    if (ctx.viewer.kind !== 'user') return githubError(401, 'Requires authentication', DOCS.userRepos);
    const issues: ValidationIssue[] = [];
    const param = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
      const v = ctx.query.get(name);
      if (v === null) return undefined;
      if ((allowed as readonly string[]).includes(v)) return v as T;
      issues.push({ resource: 'Repository', field: name, code: 'invalid', value: v });
      return undefined;
    };
    const visibility = param('visibility', ['all', 'public', 'private'] as const) ?? 'all';
    const type = param('type', ['all', 'owner', 'public', 'private', 'member'] as const) ?? 'all';
    const sort = param('sort', ['created', 'updated', 'pushed', 'full_name'] as const) ?? 'full_name';
    const direction = param('direction', ['asc', 'desc'] as const) ?? (sort === 'full_name' ? 'asc' : 'desc');
    const affiliation = (ctx.query.get('affiliation') ?? 'owner,collaborator,organization_member').split(',');
    for (const a of affiliation)
      if (!['owner', 'collaborator', 'organization_member'].includes(a))
        issues.push({ resource: 'Repository', field: 'affiliation', code: 'invalid', value: a });
    if (issues.length) return validationFailed(DOCS.userRepos, issues);
    if (ctx.query.has('type') && (ctx.query.has('visibility') || ctx.query.has('affiliation'))) {
      return validationFailed(DOCS.userRepos, [
        { resource: 'Repository', field: 'type', code: 'custom', message: 'If you specify visibility or affiliation, you cannot specify type.' },
      ]);
    }
    const viewer = ctx.viewer;
    let repos = affiliation.includes('owner') && type !== 'member' ? store.ownedRepos(viewer.user.login) : [];
    repos = repos.filter((r) => !r.private || userSeesPrivate(viewer, r));
    const wantPrivate = visibility === 'private' || type === 'private';
    const wantPublic = visibility === 'public' || type === 'public';
    if (wantPrivate) repos = repos.filter((r) => r.private);
    if (wantPublic) repos = repos.filter((r) => !r.private);
    const key: (r: RepoRec) => number | string =
      sort === 'created'
        ? (r) => r.createdMs
        : sort === 'updated'
          ? (r) => r.updatedMs
          : sort === 'pushed'
            ? (r) => r.pushedMs
            : (r) => r.fullName.toLowerCase();
    const sign = direction === 'asc' ? 1 : -1;
    repos = [...repos].sort((a, b) => {
      const ka = key(a);
      const kb = key(b);
      return sign * (ka < kb ? -1 : ka > kb ? 1 : a.id - b.id);
    });
    const { page, link } = paginate(repos, ctx.query, ctx.render.api, ctx.path);
    const json = repoCache(ctx);
    return ok(page.map(json), withLink({}, link));
  }

  /**
   * `PATCH /repos/{owner}/{repo}/pulls/{pull_number}`: any of `title`,
   * `body`, `state`, `base`, `maintainer_can_modify`; 200 with the full pull request, 422
   * `Validation Failed` for bad values, 404 for a pull request the caller cannot see, 403
   * for an installation token without `pull_requests: write`.
   */
  function updatePull(ctx: RequestContext): Reply {
    const repo = visibleRepo(ctx, ctx.params[0], ctx.params[1]);
    const pull = repo && /^\d+$/.test(ctx.params[2]) ? store.pull(repo, Number(ctx.params[2])) : undefined;
    if (!repo || !pull) return notFound(DOCS.updatePull);
    const v = ctx.viewer;
    if (v.kind === 'installation' && v.token.permissions.pull_requests !== 'write')
      return githubError(403, 'Resource not accessible by integration', DOCS.updatePull);
    // An OAuth App token writes only with the `repo` scope (a public repository is still readable without it).
    if (v.kind === 'user' && v.via === 'oauth-app' && !hasRepoScope(v.scopes)) return notFound(DOCS.updatePull);
    let body: unknown;
    try {
      body = JSON.parse(ctx.body.trim() === '' ? '{}' : ctx.body);
    } catch {
      return githubError(400, 'Problems parsing JSON', DOCS.updatePull);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return githubError(400, 'Body should be a JSON object', DOCS.updatePull);
    const req = body as Record<string, unknown>;
    const issues: ValidationIssue[] = [];
    const invalid = (field: string, value: unknown) => issues.push({ resource: 'PullRequest', field, code: 'invalid', value });
    if (req.title !== undefined && typeof req.title !== 'string') invalid('title', req.title);
    else if (typeof req.title === 'string' && req.title.trim() === '') issues.push({ resource: 'PullRequest', field: 'title', code: 'missing_field' });
    if (req.body !== undefined && req.body !== null && typeof req.body !== 'string') invalid('body', req.body);
    if (req.state !== undefined && req.state !== 'open' && req.state !== 'closed') invalid('state', req.state);
    if (req.base !== undefined && (typeof req.base !== 'string' || req.base.trim() === '')) invalid('base', req.base);
    if (req.maintainer_can_modify !== undefined && typeof req.maintainer_can_modify !== 'boolean') invalid('maintainer_can_modify', req.maintainer_can_modify);
    if (issues.length) return validationFailed(DOCS.updatePull, issues);
    if (req.state === 'open' && pull.state === 'closed' && pull.mergedMs !== null) {
      return validationFailed(DOCS.updatePull, [
        { resource: 'PullRequest', field: 'state', code: 'custom', message: 'state cannot be changed. The pull request cannot be reopened.' },
      ]);
    }
    const before = snapshotPull(pull);
    store.editPull(
      pull,
      {
        title: req.title as string | undefined,
        body: req.body as string | null | undefined,
        state: req.state as 'open' | 'closed' | undefined,
        base: req.base as string | undefined,
      },
      ctx.nowMs,
    );
    deps.onPullEdited(before, pull, ctx.viewer);
    return ok(pullFullJson(pull, ctx.render, { repo: repoCache(ctx), fork: store.fork.bind(store) }));
  }

  function createToken(ctx: RequestContext): Reply {
    const inst = store.installations.get(Number(ctx.params[0]));
    if (!inst) return notFound(DOCS.createToken);
    let body: unknown = {};
    if (ctx.body.trim() !== '') {
      try {
        body = JSON.parse(ctx.body);
      } catch {
        return githubError(400, 'Problems parsing JSON', DOCS.createToken);
      }
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return githubError(400, 'Body should be a JSON object', DOCS.createToken);
    }
    const req = body as { repositories?: unknown; repository_ids?: unknown; permissions?: unknown };
    const available = installationRepos(inst.id, null);
    let selected: RepoRec[] | null = null;
    const notAccessible = () =>
      githubError(422, 'There is at least one repository that does not exist or is not accessible to the parent installation.', DOCS.createToken);
    if (req.repositories !== undefined) {
      if (!Array.isArray(req.repositories) || !req.repositories.every((r) => typeof r === 'string')) {
        return validationFailed(DOCS.createToken, [{ resource: 'Installation', field: 'repositories', code: 'invalid' }]);
      }
      selected = [];
      for (const name of req.repositories as string[]) {
        const repo = available.find((r) => r.name.toLowerCase() === name.toLowerCase());
        if (!repo) return notAccessible();
        selected.push(repo);
      }
    }
    if (req.repository_ids !== undefined) {
      if (!Array.isArray(req.repository_ids) || !req.repository_ids.every((r) => Number.isInteger(r))) {
        return validationFailed(DOCS.createToken, [{ resource: 'Installation', field: 'repository_ids', code: 'invalid' }]);
      }
      selected = selected ?? [];
      for (const id of req.repository_ids as number[]) {
        const repo = available.find((r) => r.id === id);
        if (!repo) return notAccessible();
        if (!selected.includes(repo)) selected.push(repo);
      }
    }
    if (selected !== null && selected.length > 500) {
      return validationFailed(DOCS.createToken, [{ resource: 'Installation', field: 'repositories', code: 'invalid', message: 'at most 500 repositories' }]);
    }
    let permissions: Record<string, 'read' | 'write'> = { ...APP_PERMISSIONS };
    if (req.permissions !== undefined) {
      const granted = (p: string, level: unknown) =>
        (level === 'read' && APP_PERMISSIONS[p] !== undefined) || (level === 'write' && APP_PERMISSIONS[p] === 'write');
      if (typeof req.permissions !== 'object' || req.permissions === null || Array.isArray(req.permissions)) {
        return validationFailed(DOCS.createToken, [{ resource: 'Installation', field: 'permissions', code: 'invalid' }]);
      }
      const entries = Object.entries(req.permissions as Record<string, unknown>);
      if (!entries.every(([p, level]) => granted(p, level))) {
        return githubError(422, 'The permissions requested are not granted to this installation.', DOCS.createToken);
      }
      permissions = Object.fromEntries(entries) as Record<string, 'read' | 'write'>;
    }
    const { token, rec } = tokens.issue(
      { installationId: inst.id, repositoryIds: selected ? new Set(selected.map((r) => r.id)) : null, permissions },
      ctx.nowMs,
      deps.tokenTtlMs(),
    );
    deps.onTokenIssued(inst.id);
    const out: Record<string, unknown> = {
      token,
      expires_at: new Date(rec.expiresAtMs).toISOString().replace('.000Z', 'Z'),
      permissions: { ...permissions },
      repository_selection: selected || inst.selectedRepoIds ? 'selected' : 'all',
    };
    if (selected) {
      out.repositories = selected.map((r) => repoJson(r, ctx.render, { openPulls: store.openPullCount(r), permissions: false }));
    }
    return { status: 201, body: out };
  }

  return routes;
}

/** Finds the route for a method and path; `params` are URI-decoded. */
export function matchRoute(routes: readonly Route[], method: string, path: string): { route: Route; params: string[] } | undefined {
  for (const route of routes) {
    if (route.method !== method) continue;
    const m = route.pattern.exec(path);
    if (!m) continue;
    try {
      return { route, params: m.slice(1).map((s) => decodeURIComponent(s)) };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
