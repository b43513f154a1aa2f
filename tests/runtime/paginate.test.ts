import { paginatePages, parseLinkHeader, plainListing } from '../../runtime/paginate';
import type { HttpResponse, RequestConfig } from '../../runtime/types';

/** A transport over canned pages keyed by the request it receives. */
function transport(answer: (c: RequestConfig) => HttpResponse) {
  const seen: RequestConfig[] = [];
  return {
    seen,
    request: async <T>(c: RequestConfig) => {
      seen.push(c);
      return answer(c) as HttpResponse<T>;
    },
  };
}

describe('pagination styles', () => {
  test('body link (@odata.nextLink) is followed verbatim and the last page leaves its delta link as `end`', async () => {
    const t = transport((c) =>
      c.endpoint === '/v1.0/drives/d/root/delta'
        ? { status: 200, headers: {}, data: { value: [{ id: 'a' }], '@odata.nextLink': 'https://graph.example/v1.0/drives/d/root/delta?token=p2' } }
        : { status: 200, headers: {}, data: { value: [{ id: 'b' }], '@odata.deltaLink': 'https://graph.example/v1.0/drives/d/root/delta?token=next' } },
    );
    const listing = plainListing<{ id: string }>(
      t,
      { endpoint: '/v1.0/drives/d/root/delta' },
      { type: 'link', linkPathInResponseBody: '@odata.nextLink', responsePath: 'value' },
    );
    const pages: string[][] = [];
    expect(listing.end).toBeNull();
    for await (const page of listing) pages.push(page.map((i) => i.id));
    expect(pages).toEqual([['a'], ['b']]);
    expect(t.seen[1]).toMatchObject({ endpoint: 'https://graph.example/v1.0/drives/d/root/delta?token=p2', params: {} });
    expect(listing.end).toEqual({ '@odata.deltaLink': 'https://graph.example/v1.0/drives/d/root/delta?token=next' });
  });

  test('Link header rel="next" with per_page from the provider default', async () => {
    const t = transport((c) =>
      c.endpoint === '/repos/o/r/pulls'
        ? {
            status: 200,
            headers: {
              link: '<https://api.example/repos/o/r/pulls?page=2&per_page=100>; rel="next", <https://api.example/repos/o/r/pulls?page=2&per_page=100>; rel="last"',
            },
            data: [1, 2],
          }
        : { status: 200, headers: { link: '<https://api.example/repos/o/r/pulls?page=1&per_page=100>; rel="prev"' }, data: [3] },
    );
    const items: number[] = [];
    for await (const page of paginatePages<number>(
      (c) => t.request(c),
      { endpoint: '/repos/o/r/pulls', params: { state: 'all' } },
      { type: 'link', linkRelInResponseHeader: 'next', limitNameInRequest: 'per_page', limit: 100 },
    ))
      items.push(...page.items);
    expect(items).toEqual([1, 2, 3]);
    expect(t.seen[0].params).toEqual({ state: 'all', per_page: 100 });
    expect(t.seen).toHaveLength(2);
  });

  test('cursor with has_more, and offset until a short page', async () => {
    const cursor = transport((c) =>
      c.params?.pagination_cursor
        ? { status: 200, headers: {}, data: { entries: ['y'], has_more: false, next_cursor: 'ignored' } }
        : { status: 200, headers: {}, data: { entries: ['x'], has_more: true, next_cursor: 'c2' } },
    );
    const got: string[] = [];
    for await (const page of plainListing<string>(
      cursor,
      { endpoint: '/e' },
      {
        type: 'cursor',
        cursorPathInResponse: 'next_cursor',
        cursorNameInRequest: 'pagination_cursor',
        hasMorePathInResponse: 'has_more',
        responsePath: 'entries',
      },
    ))
      got.push(...page);
    expect(got).toEqual(['x', 'y']);

    const offset = transport((c) => ({ status: 200, headers: {}, data: Number(c.params?.offset ?? 0) < 4 ? [0, 1] : [2] }));
    let n = 0;
    for await (const page of plainListing<number>(
      offset,
      { endpoint: '/o', paginate: { type: 'offset', offsetNameInRequest: 'offset', limitNameInRequest: 'limit', limit: 2 } },
      undefined,
    ))
      n += page.length;
    expect(n).toBe(5);
    expect(offset.seen.map((c) => c.params?.offset)).toEqual([undefined, 2, 4]);
  });

  test('parseLinkHeader keeps every rel', () => {
    expect(parseLinkHeader('<https://a/x?page=2>; rel="next", <https://a/x?page=5>; rel="last"')).toEqual({
      next: 'https://a/x?page=2',
      last: 'https://a/x?page=5',
    });
    expect(parseLinkHeader(undefined)).toEqual({});
  });
});

describe('prefetch', () => {
  const offsets = () =>
    transport((c) => {
      const offset = Number(c.params?.offset ?? 0);
      return { status: 200, headers: {}, data: offset >= 6 ? [] : [offset, offset + 1, offset + 2] };
    });
  const rule = { type: 'offset' as const, offsetNameInRequest: 'offset', limitNameInRequest: 'limit', limit: 3 };

  test('off by default: a walk that stops after its first page sends one request', async () => {
    const t = offsets();
    for await (const _page of paginatePages<number>((c) => t.request(c), { endpoint: '/items' }, rule)) break;
    expect(t.seen).toHaveLength(1);
  });

  test('on: the next page is requested before the consumer is done with this one, and the pages are the same', async () => {
    const t = offsets();
    const pages: number[][] = [];
    for await (const page of paginatePages<number>((c) => t.request(c), { endpoint: '/items', prefetch: true }, rule)) {
      // While the consumer holds page N, page N+1 is already on its way.
      if (page.next) expect(t.seen).toHaveLength(pages.length + 2);
      pages.push(page.items);
    }
    expect(pages).toEqual([[0, 1, 2], [3, 4, 5], []]);
  });
});
