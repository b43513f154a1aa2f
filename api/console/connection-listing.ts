import { decodeCursor, encodeCursor } from '../../store/key-range';
import type { ConnectionDoc } from '../../store/connections';
import type { ApiDeps } from '../deps';

export interface ConsoleConnectionFilters {
  /** Part of the connection id, any case. */
  search?: string;
  integration?: string;
  /** `key=value`. */
  tag?: string;
}

/** A position in the listing: `<created time>|<URI-encoded connection _id>`. */
const POSITION = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[0-9a-zA-Z_.%~!*'()-]{1,600}$/;

/**
 * One page of the console's connection list, newest first, and the cursor of the next (the
 * position of the last one read, opaque to the browser). A tag is read as its key range; an
 * integration, or all of them, as theirs merged: each page costs a page from each range,
 * however deep (store/connections.ts, pageInScopes).
 */
export async function consoleConnectionPage(
  deps: ApiDeps,
  environment: string,
  filters: ConsoleConnectionFilters,
  cursor: string | undefined,
  limit: number,
): Promise<{ connections: ConnectionDoc[]; nextCursor: string | null }> {
  const after = cursor === undefined ? undefined : decodeCursor(cursor, POSITION);
  const search = filters.search?.toLowerCase();
  const at = filters.tag?.indexOf('=') ?? -1;
  const tags = filters.tag && at > 0 ? { [filters.tag.slice(0, at)]: filters.tag.slice(at + 1) } : {};
  const providerConfigKeys = filters.integration ? [filters.integration] : (await deps.stores.integrations.list(environment)).map((i) => i.unique_key);
  const page = await deps.stores.connections.pageInScopes(environment, {
    tags,
    providerConfigKeys,
    match: (doc) => !search || doc.connection_id.toLowerCase().includes(search),
    after,
    limit,
  });
  return { connections: page.connections, nextCursor: page.next === null ? null : encodeCursor(page.next) };
}
