import type { HttpResponse, Listing, PaginateConfig, PaginationConfig, RequestConfig } from './types';
import { IntegrationCodeError } from './errors';

/** Where a listing stands: enough to fetch the next page after a crash. */
export type PageState = { type: 'cursor'; cursor: string } | { type: 'link'; url: string } | { type: 'offset'; offset: number };

export interface Page<T> {
  items: T[];
  /** The state to resume from after this page, or null when this was the last page. */
  next: PageState | null;
  /** The page's body without its items (where a delta link or sync token lives). */
  rest: Record<string, unknown>;
}

type Send = (config: RequestConfig) => Promise<HttpResponse>;

/**
 * Walks a paginated listing one page at a time. Pure logic over a `send` function, so the
 * worker, the dry run and the mocks all page through the same code.
 */
export async function* paginatePages<T>(
  send: Send,
  config: PaginateConfig,
  providerDefault: PaginationConfig | undefined,
  resumeFrom?: PageState,
): AsyncGenerator<Page<T>> {
  const rule = mergeRule(config.paginate, providerDefault);
  const { paginate: _ignored, prefetch, ...request } = config;
  const params = { ...request.params };
  if (rule.limitNameInRequest && rule.limit !== undefined) params[rule.limitNameInRequest] ??= rule.limit;

  let state: PageState | null = resumeFrom ?? null;
  let response = send(requestFor(rule, request, params, state));
  for (;;) {
    const res = await response;
    const items = extractItems<T>(res.data, rule.responsePath);
    const next = nextState(rule, res, items.length, state, params);
    if (next && prefetch) {
      // Fetch the next page while the consumer handles this one (saving it, typically), so
      // the provider's latency and our writes overlap. If the consumer stops early the
      // prefetch is dropped (its failure, if any, is observed here and ignored).
      response = send(requestFor(rule, request, params, next));
      response.catch(() => undefined);
    }
    yield { items, next, rest: withoutItems(res.data, rule.responsePath) };
    if (!next) return;
    state = next;
    if (!prefetch) response = send(requestFor(rule, request, params, next));
  }
}

function mergeRule(override: PaginateConfig['paginate'], fallback: PaginationConfig | undefined): PaginationConfig {
  const type = override?.type ?? fallback?.type;
  if (!type) throw new IntegrationCodeError('pagination_not_configured', 'ctx.paginate needs a `paginate.type` (the provider has no default).');
  const base = fallback && fallback.type === type ? fallback : {};
  return { ...base, ...override, type } as PaginationConfig;
}

function requestFor(rule: PaginationConfig, request: RequestConfig, params: NonNullable<RequestConfig['params']>, state: PageState | null): RequestConfig {
  if (!state) return { ...request, params };
  switch (state.type) {
    case 'cursor':
      return { ...request, params: { ...params, [(rule as Extract<PaginationConfig, { type: 'cursor' }>).cursorNameInRequest]: state.cursor } };
    case 'link':
      // Follow the provider's URL exactly; it already carries the query (Graph, GitHub).
      return { ...request, endpoint: state.url, params: {} };
    case 'offset':
      return { ...request, params: { ...params, [(rule as Extract<PaginationConfig, { type: 'offset' }>).offsetNameInRequest]: state.offset } };
  }
}

function nextState(
  rule: PaginationConfig,
  res: HttpResponse,
  count: number,
  current: PageState | null,
  params: NonNullable<RequestConfig['params']>,
): PageState | null {
  switch (rule.type) {
    case 'cursor': {
      const cursor = getPath(res.data, rule.cursorPathInResponse);
      if (rule.hasMorePathInResponse !== undefined && getPath(res.data, rule.hasMorePathInResponse) !== true) return null;
      return typeof cursor === 'string' && cursor !== '' ? { type: 'cursor', cursor } : null;
    }
    case 'link': {
      const url = rule.linkPathInResponseBody
        ? getPath(res.data, rule.linkPathInResponseBody)
        : parseLinkHeader(res.headers.link)[rule.linkRelInResponseHeader ?? 'next'];
      return typeof url === 'string' && url !== '' ? { type: 'link', url } : null;
    }
    case 'offset': {
      const limit = Number(rule.limitNameInRequest ? params[rule.limitNameInRequest] : rule.limit);
      if (count === 0 || (Number.isFinite(limit) && count < limit)) return null;
      const offset = current?.type === 'offset' ? current.offset : 0;
      return { type: 'offset', offset: offset + count };
    }
  }
}

function extractItems<T>(body: unknown, path: string | undefined): T[] {
  const value = path ? getPath(body, path) : body;
  if (!Array.isArray(value)) {
    throw new IntegrationCodeError('pagination_bad_response', `Expected an array at ${path ?? 'the response root'} while paginating.`);
  }
  return value as T[];
}

function withoutItems(body: unknown, path: string | undefined): Record<string, unknown> {
  if (!path || body === null || typeof body !== 'object' || Array.isArray(body)) return {};
  const copy: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  // Only a top-level items key is dropped; nested ones stay (rare, and small enough).
  delete copy[path];
  return copy;
}

/** Dotted path lookup; a key that itself contains dots (`@odata.nextLink`) is tried whole first. */
function getPath(obj: unknown, path: string): unknown {
  if (obj === null || typeof obj !== 'object') return undefined;
  const record = obj as Record<string, unknown>;
  if (path in record) return record[path];
  const [head, ...rest] = path.split('.');
  return rest.length ? getPath(record[head], rest.join('.')) : record[head];
}

/** RFC 8288 Link header → { rel: url }. */
export function parseLinkHeader(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /<([^>]*)>\s*;(.*)/.exec(part.trim());
    if (!m) continue;
    const rel = /rel="?([^";]+)"?/.exec(m[2]);
    if (rel) for (const r of rel[1].split(/\s+/)) out[r] = m[1];
  }
  return out;
}

/** A listing without checkpoints (actions, dry runs, mocks): every page, then its end. */
export function plainListing<T>(
  transport: { request(config: RequestConfig): Promise<HttpResponse> },
  config: PaginateConfig,
  providerDefault: PaginationConfig | undefined,
): Listing<T> {
  let end: Record<string, unknown> | null = null;
  async function* pages(): AsyncGenerator<T[]> {
    for await (const page of paginatePages<T>((c) => transport.request(c), config, providerDefault)) {
      if (!page.next) end = page.rest;
      yield page.items;
    }
  }
  return {
    get end() {
      return end;
    },
    [Symbol.asyncIterator]: () => pages(),
  };
}
