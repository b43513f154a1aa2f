/**
 * The REST routes (no path prefix, like api.github.com). Each route declares who may call it
 * and whether it counts against the primary rate limit; the pipeline in `simulator.ts`
 * enforces that before `handle` runs, so handlers only deal with their own parameters.
 */
import { commitCount, type RepoRec } from './data';
import { APP_PERMISSIONS, appJson, installationJson, pullFullJson, pullSimpleJson, repoJson, commitJson, type AppInfo, type RenderContext } from './render';
import { DOCS, githubError, notFound, paginate, validationFailed, type Reply, type ValidationIssue } from './responses';
import type { TokenRec, TokenStore } from './auth';
import type { RateLimiter } from './rate-limit';
import type { GitHubStore, PullSort, PullState } from './store';

/** GitHub lists at most this many commits of a pull request (providers.md §C5). */
export const PULL_COMMITS_CAP = 250;

export type Viewer =
  | { kind: 'installation'; installationId: number; token: TokenRec }
  | { kind: 'app' }
  | { kind: 'anonymous' };

export interface RequestContext {
  nowMs: number;
  path: string;
  query: URLSearchParams;
  /** Raw request body (POST only). */
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
}

export interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  /** `app`: App JWT only. `installation`: installation token (anonymous callers see public data). `any`: anyone. */
  auth: 'app' | 'installation' | 'any';
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
    const permissions = ctx.viewer.kind === 'installation';
    return (rec: RepoRec) => {
      let json = cache.get(rec);
      if (!json) {
        json = repoJson(rec, ctx.render, { openPulls: rec.fork ? 0 : store.openPullCount(rec), permissions, full });
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
      if (repo.installationId !== v.installationId) return undefined;
      if (v.token.repositoryIds !== null && !v.token.repositoryIds.has(repo.id)) return undefined;
      return repo;
    }
    return repo.private ? undefined : repo;
  }

  function installationRepos(installationId: number, token: TokenRec | null): RepoRec[] {
    return store
      .visibleRepos(installationId)
      .filter((r) => token === null || token.repositoryIds === null || token.repositoryIds.has(r.id));
  }

  function enumParam<T extends string>(
    ctx: RequestContext,
    name: string,
    allowed: readonly T[],
    issues: ValidationIssue[],
  ): T | undefined {
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
        const inst = repo ? store.installations.get(repo.installationId) : undefined;
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
        if (ctx.viewer.kind !== 'installation') return githubError(401, 'Requires authentication', DOCS.installationRepos);
        const token = ctx.viewer.token;
        const repos = installationRepos(ctx.viewer.installationId, token);
        const { page, link } = paginate(repos, ctx.query, ctx.render.api, ctx.path);
        const json = repoCache(ctx);
        return ok(
          { total_count: repos.length, repositories: page.map(json), repository_selection: token.repositoryIds === null ? 'all' : 'selected' },
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
      repository_selection: selected ? 'selected' : 'all',
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
