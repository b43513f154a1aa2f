/**
 * GitHub's error bodies, pagination parameters and `Link` headers.
 */

export interface Reply {
  status: number;
  /** JSON body; undefined for bodiless answers (304). */
  body?: unknown;
  headers?: Record<string, string>;
}

export const DOCS = {
  rest: 'https://docs.github.com/rest',
  getApp: 'https://docs.github.com/rest/apps/apps#get-the-authenticated-app',
  listInstallations: 'https://docs.github.com/rest/apps/apps#list-installations-for-the-authenticated-app',
  getInstallation: 'https://docs.github.com/rest/apps/apps#get-an-installation-for-the-authenticated-app',
  repoInstallation: 'https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app',
  createToken: 'https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app',
  installationRepos: 'https://docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation',
  getRepo: 'https://docs.github.com/rest/repos/repos#get-a-repository',
  listPulls: 'https://docs.github.com/rest/pulls/pulls#list-pull-requests',
  getPull: 'https://docs.github.com/rest/pulls/pulls#get-a-pull-request',
  updatePull: 'https://docs.github.com/rest/pulls/pulls#update-a-pull-request',
  pullCommits: 'https://docs.github.com/rest/pulls/pulls#list-commits-on-a-pull-request',
  authenticatedUser: 'https://docs.github.com/rest/users/users#get-the-authenticated-user',
  userRepos: 'https://docs.github.com/rest/repos/repos#list-repositories-for-the-authenticated-user',
  userInstallations: 'https://docs.github.com/rest/apps/installations#list-app-installations-accessible-to-the-user-access-token',
  rateLimit: 'https://docs.github.com/rest/rate-limit/rate-limit#get-rate-limit-status-for-the-authenticated-user',
  primaryLimit: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
  secondaryLimit: 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
  userAgent: 'https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required',
} as const;

/** `basic-error`: `{ message, documentation_url, status }` with the status as a string. */
export function githubError(status: number, message: string, documentationUrl: string = DOCS.rest, headers?: Record<string, string>): Reply {
  return { status, body: { message, documentation_url: documentationUrl, status: String(status) }, headers };
}

export function notFound(documentationUrl: string = DOCS.rest): Reply {
  return githubError(404, 'Not Found', documentationUrl);
}

export interface ValidationIssue {
  resource: string;
  field: string;
  code: 'missing' | 'missing_field' | 'invalid' | 'already_exists' | 'unprocessable' | 'custom';
  value?: unknown;
  message?: string;
}

/** `validation-error` (422). */
export function validationFailed(documentationUrl: string, errors: ValidationIssue[]): Reply {
  return { status: 422, body: { message: 'Validation Failed', errors, documentation_url: documentationUrl, status: '422' } };
}

const DEFAULT_PER_PAGE = 30;
const MAX_PER_PAGE = 100;

/**
 * `per_page` (default 30, above 100 clamped to 100) and `page` (default 1). GitHub ignores
 * values that are not positive integers rather than rejecting them.
 */
function parsePaging(query: URLSearchParams): { perPage: number; page: number } {
  const rawPer = query.get('per_page');
  const rawPage = query.get('page');
  let perPage = DEFAULT_PER_PAGE;
  if (rawPer !== null && /^\d+$/.test(rawPer) && Number(rawPer) >= 1) perPage = Math.min(Number(rawPer), MAX_PER_PAGE);
  let page = 1;
  if (rawPage !== null && /^\d+$/.test(rawPage) && Number(rawPage) >= 1) page = Math.min(Number(rawPage), 1_000_000_000);
  return { perPage, page };
}

/**
 * The `Link` header for page `page` of `total` items: prev/next/last/first as applicable,
 * every URL the request's own URL with `page` replaced (so `per_page` and filters are
 * echoed). Undefined when everything fits one page and this is that page.
 */
function linkHeader(base: string, path: string, query: URLSearchParams, page: number, perPage: number, total: number): string | undefined {
  const last = Math.max(1, Math.ceil(total / perPage));
  if (last === 1 && page === 1) return undefined;
  const url = (p: number) => {
    const q = new URLSearchParams(query);
    q.set('page', String(p));
    return `<${base}${path}?${q.toString()}>`;
  };
  const parts: string[] = [];
  if (page > 1) parts.push(`${url(Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) {
    parts.push(`${url(page + 1)}; rel="next"`);
    parts.push(`${url(last)}; rel="last"`);
  }
  if (page > 1) parts.push(`${url(1)}; rel="first"`);
  return parts.length ? parts.join(', ') : undefined;
}

/** Slices one page out of a list and returns it with its Link header. */
export function paginate<T>(
  items: readonly T[],
  query: URLSearchParams,
  base: string,
  path: string,
  totalOverride?: number,
): { page: T[]; link: string | undefined; total: number } {
  const { perPage, page } = parsePaging(query);
  const total = totalOverride ?? items.length;
  const start = (page - 1) * perPage;
  const slice = start >= total ? [] : items.slice(start, Math.min(start + perPage, total));
  return { page: slice, link: linkHeader(base, path, query, page, perPage, total), total };
}
