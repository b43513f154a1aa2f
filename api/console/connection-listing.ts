import { decodeCursor, encodeCursor } from '../../store/key-range';
import { carriesTags, type ConnectionDoc } from '../../store/connections';
import type { ApiDeps } from '../deps';

export interface ConsoleConnectionFilters {
  /** The start of the connection id (as typed: case counts). */
  search?: string;
  integration?: string;
  /** `key=value`. */
  tag?: string;
}

/** A position in the listing: `<created time>|<URI-encoded connection _id>`. */
const POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[0-9a-zA-Z_.%~!*'()-]{1,600}$/;
/** A position in a search: `<URI-encoded connection id>|<URI-encoded integration>`. */
const SEARCH_POSITION = /^[0-9a-zA-Z_.%~!*'()-]{1,800}\|[0-9a-zA-Z_.%~!*'()-]{1,800}$/;

/**
 * One page of the console's connection list and the cursor of the next (the position of the
 * last one read, opaque to the browser). Newest first, a tag read as its key range and an
 * integration, or all of them, as theirs merged (store/connections.ts, pageInScopes); a search
 * by the start of the id in id order, from the integrations' id ranges (pageByIdPrefix), the
 * tag then checked on each. Each page costs a page from each range, however deep.
 */
export async function consoleConnectionPage(
  deps: ApiDeps,
  environment: string,
  filters: ConsoleConnectionFilters,
  cursor: string | undefined,
  limit: number,
): Promise<{ connections: ConnectionDoc[]; nextCursor: string | null }> {
  const at = filters.tag?.indexOf('=') ?? -1;
  const tags = filters.tag && at > 0 ? { [filters.tag.slice(0, at)]: filters.tag.slice(at + 1) } : {};
  const providerConfigKeys = filters.integration ? [filters.integration] : (await deps.stores.integrations.list(environment)).map((i) => i.unique_key);
  // A search reads the ids' own key ranges; otherwise the listing's, newest first.
  const page = filters.search
    ? await deps.stores.connections.pageByIdPrefix(environment, {
        providerConfigKeys,
        prefix: filters.search,
        match: (doc) => carriesTags(doc, tags),
        after: cursor === undefined ? undefined : decodeCursor(cursor, SEARCH_POSITION),
        limit,
      })
    : await deps.stores.connections.pageInScopes(environment, {
        tags,
        providerConfigKeys,
        match: () => true,
        after: cursor === undefined ? undefined : decodeCursor(cursor, POSITION),
        limit,
      });
  return { connections: page.connections, nextCursor: page.next === null ? null : encodeCursor(page.next) };
}
